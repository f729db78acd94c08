// The ConvInteger extern on oneDNN's int8 convolution: X uint8 or int8, W int8, Y int32, X's
// zero point a run-time source zero point (its one value reordered into an int32 scratch word
// at each run; oneDNN treats the padding as that zero point, as ConvInteger does), W's zero
// points all 0 (a plan constant: symmetric weights, what quantizers write), the bias added
// after it. Computed
// channels-last, as the float convolution (dnnl_conv.cc: oneDNN's direct kernels take nhwc),
// X and Y reordered around the primitive; a constant W is reordered once into the blocked
// layout the primitive asks for. Only VNNI (or AMX) implementations are taken (without them
// oneDNN's vpmaddubsw pair sums saturate); other calls run on the portable backend.
//
// A requantizing call (QLinearConv) with constant multipliers and Y zero point is one
// primitive writing 8-bit Y: the multipliers as per-channel output scales, then an eltwise
// round post-op (so that Y's zero point, oneDNN's dst zero point, is added to a whole
// number: round(s * M) + YZ as the reference rounds, not round(s * M + YZ), which differs
// at ties), a clip into [y_lo - YZ, y_hi - YZ] when that is narrower than Y's type, and
// oneDNN's saturating conversion. The bias goes in as oneDNN's int32 bias, which it adds in
// float32 to the sum: the same as the reference's int32 add while both stay below 2^24.
#include "runtime/kernels/dnnl/dnnl_conv_integer.h"

#include <cmath>
#include <string>
#include <vector>

#include "compiler/plan/error.h"
#include "compiler/plan/externs/conv_call.h"
#include "runtime/kernels/dnnl/dnnl_conv.h"
#include "runtime/kernels/dnnl/dnnl_matmul_integer.h"
#include "runtime/kernels/reference/conv_integer.h"
#include "runtime/kernels/reference/operand_checks.h"

namespace ferrite {
namespace onednn {
namespace {

using dt = dnnl::memory::data_type;

class DnnlConvInteger : public SteppedExtern {
 public:
  DnnlConvInteger(const ExternCall& call, int threads, bool requantize)
      : SteppedExtern(call, threads), requantize_(requantize) {}

  // oneDNN would add an int32 bias in float32 (rounding sums past 2^24): it is added here, in
  // int32 (wrapping, as the reference's finish()), after the primitive, a row of channels at
  // a time: contiguous in the channels-last Y oneDNN writes here (a channel-outer loop over
  // it strode a cache line per element: ~1 ms on mobilenet's 96 x 112 x 112 maps).
  void run(const ExternBuffer* inputs, const ExternBuffer* outputs) override {
    SteppedExtern::run(inputs, outputs);
    if (requantize_ || op_input_count(call_) < 5) return;
    const ConvIntegerArgs g = parse_conv_integer(call_, inputs, outputs);
    const ConvArgs& a = g.shape;
    bias_.resize(static_cast<size_t>(a.c_out));  // allocated on the first run only
    for (int64_t m = 0; m < a.c_out; ++m)
      bias_[static_cast<size_t>(m)] = static_cast<uint32_t>(g.finish(0, m));
    const uint32_t* b = bias_.data();
    for (int64_t n = 0; n < a.n; ++n)
      for (int64_t o0 = 0; o0 < a.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < a.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < a.out[2]; ++o2) {
            int32_t* y =
                g.y + a.y_offset + n * a.ys[0] + o0 * a.ys[2] + o1 * a.ys[3] + o2 * a.ys[4];
            if (a.ys[1] == 1) {
              for (int64_t m = 0; m < a.c_out; ++m)
                y[m] = static_cast<int32_t>(static_cast<uint32_t>(y[m]) + b[m]);
            } else {
              for (int64_t m = 0; m < a.c_out; ++m)
                y[m * a.ys[1]] = static_cast<int32_t>(static_cast<uint32_t>(y[m * a.ys[1]]) + b[m]);
            }
          }
  }

 protected:
  void check(const ExternBuffer* inputs, const ExternBuffer* outputs) const override {
    parse_conv_integer(call_, inputs, outputs);
  }

 private:
  bool requantize_;             // the primitive writes 8-bit Y, the bias inside
  std::vector<uint32_t> bias_;  // B wrapped into int32, per output channel
};

// The constants of a requantizing call that the primitive takes at creation.
struct Requantize {
  std::vector<float> multipliers;  // M, one per output channel
  int32_t zero_point = 0;          // YZ
  int32_t lo = 0, hi = 0;          // y_lo, y_hi
  bool narrower = false;           // [lo, hi] inside the type's range, not all of it
};

// False when M or YZ is no plan constant, or M holds a value that is not finite.
bool requantize_constants(const ExternCall& call, const std::vector<ExternBuffer>& constants,
                          const ConvIntegerCall& attrs, Requantize* r) {
  for (size_t i : {size_t{5}, size_t{6}})
    if (!is_constant_input(constants, i) || !constants[i].data) return false;
  const TensorRef &rm = call.inputs[5], &rz = call.inputs[6];
  try {
    check_view("ConvInteger", "M", rm, constants[5]);
    check_view("ConvInteger", "YZ", rz, constants[6]);
  } catch (const Error&) {
    return false;  // the fallback reports it
  }
  if (constants[5].dtype != DType::F32 || rm.shape.size() != 1 || rz.shape.size() != 1 ||
      constants[6].dtype != (attrs.y_signed ? DType::I8 : DType::U8))
    return false;
  const float* m = static_cast<const float*>(constants[5].data);
  for (int64_t j = 0; j < rm.shape[0]; ++j) {
    const float v = m[rm.offset + j * rm.strides[0]];
    if (!std::isfinite(v)) return false;
    r->multipliers.push_back(v);
  }
  r->zero_point = int8_element(constants[6], rz.offset);
  r->lo = static_cast<int32_t>(attrs.y_lo);
  r->hi = static_cast<int32_t>(attrs.y_hi);
  r->narrower =
      attrs.y_lo > (attrs.y_signed ? -128 : 0) || attrs.y_hi < (attrs.y_signed ? 127 : 255);
  return true;
}

// The primitive's attribute: the source zero point at run time, and for a requantizing call
// the output scales, Y's zero point and the post-ops.
dnnl::primitive_attr conv_attr(const Requantize* rq) {
  dnnl::primitive_attr attr = user_scratchpad_attr();
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  if (!rq) return attr;
  attr.set_output_scales(1 << 1, rq->multipliers);
  attr.set_zero_points(DNNL_ARG_DST, 0, {rq->zero_point});
  dnnl::post_ops ops;
  ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_round, 0.0f, 0.0f);
  if (rq->narrower)
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip,
                       static_cast<float>(rq->lo - rq->zero_point),
                       static_cast<float>(rq->hi - rq->zero_point));
  attr.set_post_ops(ops);
  return attr;
}

dnnl::memory::desc channels_last(const Dims& dims, dt type) {
  return dnnl::memory::desc(dims, type, dense_strides(dims, channels_last_order(dims.size())));
}

// Throws dnnl::error when oneDNN has no implementation.
std::unique_ptr<DnnlExtern> build(const ExternCall& call, const View& x, const View& w,
                                  const View& y, const ConvSpatial& s, const PackedForms& packed,
                                  const ExternBuffer* w_constant, const Requantize* rq,
                                  int threads) {
  const dnnl::primitive_attr attr = conv_attr(rq);
  using P = dnnl::convolution_forward;
  const int64_t m = y.dims[1];
  const dnnl::memory::desc bias = rq ? dnnl::memory::desc({m}, dt::s32, {1}) : dnnl::memory::desc();
  P::primitive_desc pd(
      P::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
              channels_last(x.dims, x.type),
              dnnl::memory::desc(w.dims, dt::s8, dnnl::memory::format_tag::any), bias,
              channels_last(y.dims, y.type), s.strides, s.dilations, s.pad_l, s.pad_r),
      attr, cpu_engine());
  auto conv = std::make_unique<DnnlConvInteger>(call, threads, rq != nullptr);
  conv->set_implementation(pd.impl_info_str());
  const std::string impl = conv->implementation();
  if (!worth_using(impl, true, false) ||
      (impl.find("vnni") == std::string::npos && impl.find("amx") == std::string::npos))
    return nullptr;
  DnnlSteps& steps = conv->steps();
  steps.use_packed(&packed);
  Args args;
  args[DNNL_ARG_SRC] = steps.input(x, pd.src_desc(), 0, nullptr);
  args[DNNL_ARG_WEIGHTS] = steps.input(w, pd.weights_desc(), 1, w_constant);
  const dnnl::memory zp = steps.scratch(dnnl::memory::desc({1}, dt::s32, {1}));
  steps.add_reorder(
      steps.bind(dnnl::memory::desc({1}, x.type, {1}), false, 2, call.inputs[2].offset), zp);
  args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC] = zp;
  if (rq) {
    const TensorRef& rb = call.inputs[4];
    const View b{{m}, {rb.strides[0]}, rb.offset, dt::s32};
    args[DNNL_ARG_BIAS] = steps.input(b, pd.bias_desc(), 4, nullptr);
  }
  dnnl::memory copy_back;
  args[DNNL_ARG_DST] = steps.output(y, pd.dst_desc(), 0, &copy_back);
  const dnnl::memory dst = args[DNNL_ARG_DST];
  steps.add(P(pd), pd.scratchpad_desc(), std::move(args));
  if (copy_back) steps.add_reorder(dst, copy_back);
  steps.finish();
  return conv;
}

}  // namespace

std::unique_ptr<DnnlExtern> prepare_conv_integer(const ExternCall& call,
                                                 const std::vector<ExternBuffer>& constants,
                                                 const PackedForms& packed, int threads) {
  ConvArgs a;
  ConvIntegerCall attrs;
  try {
    a = parse_conv_shapes(call);
    attrs = decode_conv_integer_call(call, call.inputs[0].shape.size() - 2);
  } catch (const Error&) {
    return nullptr;  // the fallback reports it
  }
  if (a.n == 0 || a.c_in == 0 || a.c_out == 0 || a.in_size() == 0 || a.out_size() == 0)
    return nullptr;  // empty: nothing to gain
  if (!attrs.w_signed || !constant_zeros(call, constants, 3)) return nullptr;
  // oneDNN descriptors take no negative strides, and an output written twice (stride 0) has
  // no oneDNN meaning.
  for (size_t i = 0; i < 2; ++i)
    for (int64_t st : call.inputs[i].strides)
      if (st < 0) return nullptr;
  const TensorRef &rx = call.inputs[0], &rw = call.inputs[1], &ry = call.outputs[0];
  for (size_t d = 0; d < ry.shape.size(); ++d)
    if (ry.strides[d] < 0 || (ry.strides[d] == 0 && ry.shape[d] > 1)) return nullptr;
  ConvSpatial s;
  if (!conv_spatial(a, rx.shape.size() - 2, &s)) return nullptr;
  Requantize rq;
  if (attrs.requantize && !requantize_constants(call, constants, attrs, &rq)) return nullptr;
  const dt tx = attrs.x_signed ? dt::s8 : dt::u8;
  const dt ty = !attrs.requantize ? dt::s32 : attrs.y_signed ? dt::s8 : dt::u8;
  const View x{rx.shape, rx.strides, rx.offset, tx}, y{ry.shape, ry.strides, ry.offset, ty};
  View w = conv_weights_view(a, rw);
  w.type = dt::s8;
  const ExternBuffer* w_constant = nullptr;
  if (is_constant_input(constants, 1)) {
    try {
      check_view("ConvInteger", "W", rw, constants[1]);
    } catch (const Error&) {
      return nullptr;  // the fallback reports it when the call runs
    }
    w_constant = &constants[1];
  }
  ThreadScope scope(threads);
  try {
    return build(call, x, w, y, s, packed, w_constant, attrs.requantize ? &rq : nullptr, threads);
  } catch (const dnnl::error&) {
    return nullptr;  // no oneDNN implementation
  }
}

}  // namespace onednn
}  // namespace ferrite
