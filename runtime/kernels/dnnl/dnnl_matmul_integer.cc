// The MatMulInteger extern (runtime/kernels/reference/matmul_integer.h) on oneDNN's int8
// matmul: A uint8 or int8, B int8, C int32, A's zero point a run-time source zero point (its
// one value reordered into an int32 scratch word at each run), B's zero points all 0 (a plan
// constant: symmetric weights, what quantizers write). A constant B is reordered once into
// the layout the primitive prefers. Only VNNI (or AMX) implementations are taken; other
// calls (uint8 weights, nonzero or run-time B zero points, a CPU without VNNI, a layout
// oneDNN has only reference loops for) are refused and run on the portable backend.
#include "runtime/kernels/dnnl/dnnl_matmul_integer.h"

#include "compiler/plan/error.h"
#include "compiler/plan/externs/matmul_integer_call.h"
#include "runtime/kernels/dnnl/dnnl_steps.h"
#include "runtime/kernels/reference/matmul_integer.h"
#include "runtime/kernels/reference/operand_checks.h"

namespace ferrite {
namespace onednn {
namespace {

using dt = dnnl::memory::data_type;

class DnnlMatMulInteger : public SteppedExtern {
 public:
  using SteppedExtern::SteppedExtern;

 protected:
  void check(const ExternBuffer* inputs, const ExternBuffer* outputs) const override {
    parse_matmul_integer(call_, inputs, outputs);
  }
};

}  // namespace

bool constant_zeros(const ExternCall& call, const std::vector<ExternBuffer>& constants, size_t i) {
  if (!is_constant_input(constants, i) || !constants[i].data) return false;
  const TensorRef& r = call.inputs[i];
  if (r.shape.size() != 1 || r.strides.size() != 1) return false;
  try {
    check_view(extern_op_name(call.op), "zero points", r, constants[i]);
  } catch (const Error&) {
    return false;
  }
  const auto* bytes = static_cast<const uint8_t*>(constants[i].data);
  for (int64_t j = 0; j < r.shape[0]; ++j)
    if (bytes[r.offset + j * r.strides[0]] != 0) return false;
  return true;
}

namespace {

struct Operands {
  View a, b, c, az;
};

// The call's operands as oneDNN sees them (batch dims an operand broadcasts become 1); false
// when it cannot take them.
bool operands(const ExternCall& call, Operands* o) {
  if (op_input_count(call) != 4 || call.outputs.size() != 1) return false;
  const TensorRef &ra = call.inputs[0], &rb = call.inputs[1], &rc = call.outputs[0];
  const size_t r = ra.shape.size();
  if (r < 2 || r > DNNL_MAX_NDIMS) return false;
  for (const TensorRef* t : {&ra, &rb, &rc}) {
    if (t->shape.size() != r || t->strides.size() != r) return false;
    for (size_t d = 0; d < r; ++d)
      if (t->shape[d] < 1 || t->strides[d] < 0) return false;
  }
  for (size_t d = 0; d < r; ++d)
    if (rc.strides[d] == 0 && rc.shape[d] > 1) return false;
  if (rb.shape[r - 2] != ra.shape[r - 1] || rc.shape[r - 2] != ra.shape[r - 2] ||
      rc.shape[r - 1] != rb.shape[r - 1])
    return false;
  const MatMulIntegerCall attrs = decode_matmul_integer_call(call);
  if (!attrs.b_signed) return false;  // oneDNN's weights are int8
  const dt ta = attrs.a_signed ? dt::s8 : dt::u8;
  o->a = View{ra.shape, ra.strides, ra.offset, ta};
  o->b = View{rb.shape, rb.strides, rb.offset, dt::s8};
  o->c = View{rc.shape, rc.strides, rc.offset, dt::s32};
  o->az = View{{1}, {1}, call.inputs[2].offset, ta};
  for (size_t d = 0; d + 2 < r; ++d) {
    if (rb.shape[d] != ra.shape[d] || rc.shape[d] != ra.shape[d]) return false;
    if (ra.shape[d] == 1) continue;
    const bool a1 = ra.strides[d] == 0, b1 = rb.strides[d] == 0;
    if (a1 && b1) return false;
    if (a1) o->a.dims[d] = 1;
    if (b1) o->b.dims[d] = 1;
  }
  return true;
}

dnnl::memory::desc dense_desc(const View& v) {
  return dnnl::memory::desc(v.dims, v.type, dense_strides(v.dims, row_major_order(v.dims.size())));
}

std::unique_ptr<DnnlExtern> build(const ExternCall& call, const Operands& o,
                                  const PackedForms& packed, const ExternBuffer* b_constant,
                                  int threads) {
  dnnl::primitive_attr attr = user_scratchpad_attr();
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  const dnnl::memory::desc b_want =
      b_constant ? dnnl::memory::desc(o.b.dims, dt::s8, dnnl::memory::format_tag::any)
                 : dense_desc(o.b);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(dense_desc(o.a), b_want, dense_desc(o.c)),
                                  attr, cpu_engine());
  auto x = std::make_unique<DnnlMatMulInteger>(call, threads);
  x->set_implementation(pd.impl_info_str());
  // Without VNNI (or AMX) oneDNN multiplies uint8 by int8 with vpmaddubsw, whose int16 pair
  // sums saturate (255 * 127 * 2 > 32767): wrong sums, so such CPUs take the portable op
  // (random_extern_test found it with oneDNN capped at AVX2).
  const std::string impl = x->implementation();
  if (!worth_using(impl, false, false) ||
      (impl.find("vnni") == std::string::npos && impl.find("amx") == std::string::npos))
    return nullptr;
  DnnlSteps& steps = x->steps();
  steps.use_packed(&packed);
  Args args;
  args[DNNL_ARG_SRC] = steps.input(o.a, pd.src_desc(), 0, nullptr);
  args[DNNL_ARG_WEIGHTS] = steps.input(o.b, pd.weights_desc(), 1, b_constant);
  const dnnl::memory zp = steps.scratch(dnnl::memory::desc({1}, dt::s32, {1}));
  steps.add_reorder(steps.bind(dnnl::memory::desc({1}, o.az.type, {1}), false, 2, o.az.offset), zp);
  args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC] = zp;
  dnnl::memory copy_back;
  args[DNNL_ARG_DST] = steps.output(o.c, pd.dst_desc(), 0, &copy_back);
  const dnnl::memory dst = args[DNNL_ARG_DST];
  steps.add(dnnl::matmul(pd), pd.scratchpad_desc(), std::move(args));
  if (copy_back) steps.add_reorder(dst, copy_back);
  steps.finish();
  return x;
}

}  // namespace

std::unique_ptr<DnnlExtern> prepare_matmul_integer(const ExternCall& call,
                                                   const std::vector<ExternBuffer>& constants,
                                                   const PackedForms& packed, int threads) {
  Operands o;
  if (!operands(call, &o) || !constant_zeros(call, constants, 3)) return nullptr;
  const ExternBuffer* b_constant = nullptr;
  if (is_constant_input(constants, 1)) {
    try {
      check_view("MatMulInteger", "B", call.inputs[1], constants[1]);
    } catch (const Error&) {
      return nullptr;  // the fallback reports it when the call runs
    }
    b_constant = &constants[1];
  }
  ThreadScope scope(threads);
  try {
    return build(call, o, packed, b_constant, threads);
  } catch (const dnnl::error&) {
    return nullptr;  // no oneDNN implementation
  }
}

}  // namespace onednn
}  // namespace ferrite
