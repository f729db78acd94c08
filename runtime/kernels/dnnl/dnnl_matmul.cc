// C = alpha * A @ B as one oneDNN matmul: the TensorRefs become strided memory descriptors
// (a transposed operand is just its strides; a batch dim an operand is broadcast over, stride
// 0, becomes a dim of 1, which oneDNN broadcasts), alpha is the output scale (applied before
// the post-ops, as the reference does), B when it is a plan constant is reordered once into
// the layout the primitive prefers. When oneDNN has only its reference loops for the strides
// as given (a strided column, a transposed C, an expanded row: stride 0 in a matrix dim), A,
// B and C are copied into dense scratch around a dense matmul instead; when that fails too,
// the call is refused.
#include "runtime/kernels/dnnl/dnnl_matmul.h"

#include <algorithm>

#include "compiler/plan/error.h"
#include "compiler/plan/externs/matmul_call.h"
#include "runtime/kernels/dnnl/dnnl_post_ops.h"
#include "runtime/kernels/dnnl/dnnl_steps.h"
#include "runtime/kernels/dnnl/nonfinite_inputs.h"
#include "runtime/kernels/reference/matmul.h"
#include "runtime/kernels/reference/operand_checks.h"
#include "runtime/kernels/reference/post_ops_apply.h"

namespace ferrite {
namespace onednn {
namespace {

class DnnlMatMul : public SteppedExtern {
 public:
  using SteppedExtern::SteppedExtern;

  void run(const ExternBuffer* inputs, const ExternBuffer* outputs) override {
    if (!nonfinite_) return SteppedExtern::run(inputs, outputs);
    nonfinite_->run(
        call_, inputs, outputs,
        [this](const ExternBuffer* in, const ExternBuffer* out) { SteppedExtern::run(in, out); });
  }
  // The handling of an A with infinities or NaN where the post-ops flush NaN
  // (nonfinite_inputs.h).
  void set_nonfinite(std::unique_ptr<NonFiniteInputs> n) { nonfinite_ = std::move(n); }

 protected:
  void check(const ExternBuffer* inputs, const ExternBuffer* outputs) const override {
    parse_matmul(call_, inputs, outputs);
    check_post_ops(call_, inputs, outputs);
  }

 private:
  std::unique_ptr<NonFiniteInputs> nonfinite_;
};

// The call's operands as oneDNN sees them; false when oneDNN cannot express them (or the
// shapes are wrong, which the fallback reports).
struct Operands {
  View a, b, c;
  float alpha = 1;
};

bool operands(const ExternCall& call, Operands* o) {
  if (op_input_count(call) != 2 || call.outputs.size() != 1) return false;
  const TensorRef &ra = call.inputs[0], &rb = call.inputs[1], &rc = call.outputs[0];
  const size_t r = ra.shape.size();
  if (r < 2 || r > DNNL_MAX_NDIMS) return false;
  for (const TensorRef* t : {&ra, &rb, &rc}) {
    if (t->shape.size() != r || t->strides.size() != r) return false;
    for (size_t d = 0; d < r; ++d)
      if (t->shape[d] < 1 || t->strides[d] < 0) return false;  // empty: nothing to gain
  }
  // C written twice (stride 0 along a dim > 1) has no oneDNN meaning.
  for (size_t d = 0; d < r; ++d)
    if (rc.strides[d] == 0 && rc.shape[d] > 1) return false;
  if (rb.shape[r - 2] != ra.shape[r - 1] || rc.shape[r - 2] != ra.shape[r - 2] ||
      rc.shape[r - 1] != rb.shape[r - 1])
    return false;
  o->a = View{ra.shape, ra.strides, ra.offset};
  o->b = View{rb.shape, rb.strides, rb.offset};
  o->c = View{rc.shape, rc.strides, rc.offset};
  for (size_t d = 0; d + 2 < r; ++d) {
    if (rb.shape[d] != ra.shape[d] || rc.shape[d] != ra.shape[d]) return false;
    if (ra.shape[d] == 1) continue;
    // oneDNN broadcasts a batch dim of 1 in A or B, not in both, and C is never broadcast.
    const bool a1 = ra.strides[d] == 0, b1 = rb.strides[d] == 0;
    if (a1 && b1) return false;
    if (a1) o->a.dims[d] = 1;
    if (b1) o->b.dims[d] = 1;
  }
  o->alpha = static_cast<float>(decode_matmul_call(call).alpha);
  return true;
}

// The view's strides with the dims of extent 1 given the strides oneDNN's own plain layouts
// would give them (its fast matmuls match layouts by strides, those dims included): a unit
// matrix dim is inner to the other one when that one is strided, outer when it is
// contiguous; a unit batch dim is outer to every dim after it.
Dims matmul_strides(const View& v) {
  Dims s = v.strides;
  const size_t r = s.size(), R = r - 2, C = r - 1;
  if (v.dims[R] == 1 && v.dims[C] == 1) {
    s[R] = s[C] = 1;
  } else if (v.dims[R] == 1) {
    s[R] = s[C] == 1 ? v.dims[C] : 1;
  } else if (v.dims[C] == 1) {
    s[C] = s[R] == 1 ? v.dims[R] : 1;
  }
  // The span of the dims inside a unit batch dim: oneDNN's batch dims are outermost, even
  // when the view orders the others differently (attention heads read from [S, H, D]).
  int64_t inner = std::max(s[R] * v.dims[R], s[C] * v.dims[C]);
  for (size_t d = R; d-- > 0;) {
    if (v.dims[d] == 1) s[d] = inner;
    inner = std::max(inner, s[d] * v.dims[d]);
  }
  return s;
}

dnnl::memory::desc desc_of(const View& v, bool dense) {
  return f32_desc(
      v.dims, dense ? dense_strides(v.dims, row_major_order(v.dims.size())) : matmul_strides(v));
}

// A dense bfloat16 copy of an operand (fast math): the float32 view is reordered into it,
// rounding to nearest even.
dnnl::memory::desc bf16_desc(const View& v) {
  return dnnl::memory::desc(v.dims, dnnl::memory::data_type::bf16,
                            dense_strides(v.dims, row_major_order(v.dims.size())));
}

// One attempt: the operands' own layouts, or (`dense`) dense copies. nullptr when oneDNN
// has nothing better than its reference loops for it. Throws dnnl::error when oneDNN
// rejects the call.
std::unique_ptr<DnnlExtern> build(const ExternCall& call, const Operands& o,
                                  const std::vector<ExternBuffer>& constants,
                                  const PackedForms& packed, const ExternBuffer* b_constant,
                                  bool dense, int threads, bool bf16) {
  const size_t rank = o.c.dims.size();
  dnnl::primitive_attr attr = user_scratchpad_attr();
  if (o.alpha != 1) attr.set_output_scales(0, {o.alpha});
  dnnl::post_ops ops;
  std::vector<BinaryOperand> binaries;
  if (!append_post_ops(call, row_major_order(rank), &ops, &binaries)) return nullptr;
  attr.set_post_ops(ops);
  // A constant B is laid out as the primitive likes it ("any"), once. With bf16, A and B
  // are rounded to bfloat16 (B once when it is a constant, A at each run) and C stays float32.
  const auto in_type = bf16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
  const dnnl::memory::desc a_want = bf16 ? bf16_desc(o.a) : desc_of(o.a, dense);
  const dnnl::memory::desc b_want =
      b_constant ? dnnl::memory::desc(o.b.dims, in_type, dnnl::memory::format_tag::any)
                 : (bf16 ? bf16_desc(o.b) : desc_of(o.b, dense));
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_want, b_want, desc_of(o.c, dense)), attr,
                                  cpu_engine());
  auto x = std::make_unique<DnnlMatMul>(call, threads);
  x->set_implementation(pd.impl_info_str());
  if (flushes_nan(call)) x->set_nonfinite(matmul_nonfinite_inputs(call, b_constant));
  if (!worth_using(x->implementation(), false, !binaries.empty())) return nullptr;
  // oneDNN 2.6's GEMM-based matmul ("gemm:jit": every matmul on AVX2, and on AVX-512 a C
  // whose batch dim lies inside its rows) crashes with a binary post-op broadcast over the
  // batch when C is not plain row-major (random_extern_test found it): such calls take the
  // dense attempt, whose C is.
  if (!binaries.empty() && !dense && x->implementation().find("gemm") != std::string::npos &&
      !same_layout(o.c.dims, o.c.strides, dense_strides(o.c.dims, row_major_order(rank))))
    return nullptr;
  DnnlSteps& steps = x->steps();
  steps.use_packed(&packed);
  Args args;
  args[DNNL_ARG_SRC] = steps.input(o.a, pd.src_desc(), 0, nullptr);
  args[DNNL_ARG_WEIGHTS] = steps.input(o.b, pd.weights_desc(), 1, b_constant);
  if (!bind_binary_operands(binaries, row_major_order(rank), constants, &steps, &args))
    return nullptr;
  dnnl::memory copy_back;
  args[DNNL_ARG_DST] = steps.output(o.c, pd.dst_desc(), 0, &copy_back);
  const dnnl::memory dst = args[DNNL_ARG_DST];
  steps.add(dnnl::matmul(pd), pd.scratchpad_desc(), std::move(args));
  if (copy_back) steps.add_reorder(dst, copy_back);
  steps.finish();
  return x;
}

}  // namespace

std::unique_ptr<DnnlExtern> prepare_matmul(const ExternCall& call,
                                           const std::vector<ExternBuffer>& constants,
                                           const PackedForms& packed, int threads, bool bf16) {
  Operands o;
  if (!operands(call, &o)) return nullptr;
  const ExternBuffer* b_constant = nullptr;
  if (is_constant_input(constants, 1)) {
    try {
      check_f32_view("MatMul", "B", call.inputs[1], constants[1], o.b.dims.size());
    } catch (const Error&) {
      return nullptr;  // the fallback reports it when the call runs
    }
    b_constant = &constants[1];
  }
  ThreadScope scope(threads);
  // In bfloat16 first when asked; what has no fast bfloat16 form stays float32.
  for (bool in_bf16 : {bf16, false}) {
    for (bool dense : {false, true}) {
      if (in_bf16 && dense) continue;  // a bfloat16 A is a dense copy already
      try {
        if (auto x = build(call, o, constants, packed, b_constant, dense, threads, in_bf16))
          return x;
      } catch (const dnnl::error&) {
        // No oneDNN implementation for this attempt.
      }
    }
    if (!in_bf16) break;
  }
  return nullptr;
}

}  // namespace onednn
}  // namespace ferrite
