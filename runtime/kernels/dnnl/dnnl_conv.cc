// Conv and ConvTranspose as one oneDNN (de)convolution, computed channels-last: oneDNN's fast
// f32 kernels here (brgconv, brdgmm_dw, jit deconvolution) take nwc/nhwc/ndhwc activations,
// while for nchw it falls back to im2col + GEMM, measured 1.45x slower on a 64-channel 56x56
// 3x3 convolution and 6x slower still once binary post-ops are fused (it applies them element
// by element). So X, Y and full-size post-op operands not already channels-last are
// reordered into channels-last scratch around the primitive (each reorder costs about 2% of
// that convolution). Weights take the blocked layout the primitive asks for: reordered once
// when they are a plan constant, else at every run. Bias and the post-ops are fused.
#include "runtime/kernels/dnnl/dnnl_conv.h"

#include <string>

#include "compiler/plan/error.h"
#include "runtime/kernels/dnnl/dnnl_post_ops.h"
#include "runtime/kernels/dnnl/dnnl_steps.h"
#include "runtime/kernels/reference/conv.h"
#include "runtime/kernels/reference/extern_operands.h"
#include "runtime/kernels/reference/post_ops_apply.h"

namespace ferrite {
namespace onednn {
namespace {

class DnnlConv : public SteppedExtern {
 public:
  DnnlConv(const ExternCall& call, int threads, bool transpose)
      : SteppedExtern(call, threads), transpose_(transpose) {}

 protected:
  void check(const ExternBuffer* inputs, const ExternBuffer* outputs) const override {
    parse_conv(call_, inputs, outputs, transpose_);
    check_post_ops(call_, inputs, outputs);
  }

 private:
  bool transpose_;
};

View view_of(const TensorRef& r) {
  return View{r.shape, r.strides, r.offset};
}

// W as oneDNN's weights: [OC, IC, k...], or [G, OC/G, IC/G, k...] with groups. Conv's W is
// [M, C/G, k...]; ConvTranspose's is [C, M/G, k...], so its first two dims swap places.
View weights_view(const ConvArgs& a, const TensorRef& w) {
  const size_t k = w.shape.size() - 2;
  View v;
  v.offset = w.offset;
  const int64_t s_out = a.transpose ? w.strides[1] : w.strides[0];
  const int64_t s_in = a.transpose ? w.strides[0] : w.strides[1];
  if (a.group == 1) {
    v.dims = {a.c_out, a.c_in};
    v.strides = {s_out, s_in};
  } else {
    // Group g starts at row g * (rows per group) of W's first dim.
    const int64_t s_group = w.strides[0] * (a.transpose ? a.c_in_group() : a.c_out_group());
    v.dims = {a.group, a.c_out_group(), a.c_in_group()};
    v.strides = {s_group, s_out, s_in};
  }
  for (size_t d = 0; d < k; ++d) {
    v.dims.push_back(w.shape[2 + d]);
    v.strides.push_back(w.strides[2 + d]);
  }
  return v;
}

// constants[i] when input i is a plan constant inside its buffer; null otherwise. `*bad`
// when it is a constant outside its buffer (the fallback reports that when the call runs).
const ExternBuffer* constant_input(const ExternCall& call,
                                   const std::vector<ExternBuffer>& constants, size_t i,
                                   bool* bad) {
  if (i >= constants.size() || !constants[i].data) return nullptr;
  try {
    const TensorRef& r = call.inputs[i];
    check_f32_view(call.op.c_str(), "operand", r, constants[i], r.shape.size());
  } catch (const Error&) {
    *bad = true;
  }
  return &constants[i];
}

dnnl::memory::desc channels_last(const Dims& dims) {
  return f32_desc(dims, dense_strides(dims, channels_last_order(dims.size())));
}

// The spatial attributes as oneDNN takes them; false for negative pads (ConvTranspose's
// output_padding), which it has no equivalent of.
struct Spatial {
  Dims strides, dilations, pad_l, pad_r;
};

bool spatial_of(const ConvArgs& a, size_t k, Spatial* s) {
  for (size_t d = 0; d < k; ++d) {
    const size_t D = 3 - k + d;  // ConvArgs pads the spatial dims to 3 in front
    if (a.pad_begin[D] < 0 || a.pad_end[D] < 0) return false;
    s->strides.push_back(a.stride[D]);
    s->dilations.push_back(a.dilation[D] - 1);  // oneDNN counts the holes between taps
    s->pad_l.push_back(a.pad_begin[D]);
    s->pad_r.push_back(a.pad_end[D]);
  }
  return true;
}

// A created (de)convolution with what the steps need to know of it.
struct Primitive {
  dnnl::primitive primitive;
  dnnl::memory::desc weights, scratchpad;
  std::string impl;
};

template <class P>
Primitive create(const typename P::desc& d, const dnnl::primitive_attr& attr) {
  const typename P::primitive_desc pd(d, attr, cpu_engine());
  return Primitive{P(pd), pd.weights_desc(), pd.scratchpad_desc(), pd.impl_info_str()};
}

// Throws dnnl::error when oneDNN rejects the call.
Primitive create_primitive(const ConvArgs& a, const Spatial& s, const dnnl::memory::desc& x,
                           const dnnl::memory::desc& w, const dnnl::memory::desc& b,
                           const dnnl::memory::desc& y, const dnnl::primitive_attr& attr) {
  const auto inference = dnnl::prop_kind::forward_inference;
  if (a.transpose) {
    using P = dnnl::deconvolution_forward;
    return create<P>(P::desc(inference, dnnl::algorithm::deconvolution_direct, x, w, b, y,
                             s.strides, s.dilations, s.pad_l, s.pad_r),
                     attr);
  }
  using P = dnnl::convolution_forward;
  return create<P>(P::desc(inference, dnnl::algorithm::convolution_direct, x, w, b, y, s.strides,
                           s.dilations, s.pad_l, s.pad_r),
                   attr);
}

// Throws dnnl::error when oneDNN rejects the call.
std::unique_ptr<DnnlExtern> build(const ExternCall& call, const ConvArgs& a,
                                  const std::vector<ExternBuffer>& constants, int threads) {
  const TensorRef &x = call.inputs[0], &w = call.inputs[1], &y = call.outputs[0];
  const size_t rank = x.shape.size();
  bool bad = false;
  const ExternBuffer* x_constant = constant_input(call, constants, 0, &bad);
  const ExternBuffer* w_constant = constant_input(call, constants, 1, &bad);
  const ExternBuffer* b_constant = a.has_bias ? constant_input(call, constants, 2, &bad) : nullptr;
  Spatial spatial;
  if (bad || !spatial_of(a, rank - 2, &spatial)) return nullptr;

  const View xv = view_of(x), yv = view_of(y), wv = weights_view(a, w);
  const View bv{{a.c_out}, {a.b_stride}, a.b_offset};
  const dnnl::memory::desc x_want = channels_last(xv.dims), y_want = channels_last(yv.dims);
  const dnnl::memory::desc w_any(wv.dims, dnnl::memory::data_type::f32,
                                 dnnl::memory::format_tag::any);
  const dnnl::memory::desc b_want = a.has_bias ? f32_desc({a.c_out}, {1}) : dnnl::memory::desc();
  dnnl::primitive_attr attr = user_scratchpad_attr();
  dnnl::post_ops ops;
  std::vector<BinaryOperand> binaries;
  const std::vector<int> order = channels_last_order(rank);
  if (!append_post_ops(call, order, &ops, &binaries)) return nullptr;
  attr.set_post_ops(ops);
  const Primitive p = create_primitive(a, spatial, x_want, w_any, b_want, y_want, attr);
  if (!worth_using(p.impl, true, !binaries.empty())) return nullptr;

  auto conv = std::make_unique<DnnlConv>(call, threads, a.transpose);
  conv->set_implementation(p.impl);
  DnnlSteps& steps = conv->steps();
  Args args;
  args[DNNL_ARG_SRC] = steps.input(xv, x_want, 0, x_constant);
  args[DNNL_ARG_WEIGHTS] = steps.input(wv, p.weights, 1, w_constant);
  if (a.has_bias) args[DNNL_ARG_BIAS] = steps.input(bv, b_want, 2, b_constant);
  if (!bind_binary_operands(binaries, order, constants, &steps, &args)) return nullptr;
  dnnl::memory copy_back;
  const dnnl::memory dst = steps.output(yv, y_want, 0, &copy_back);
  args[DNNL_ARG_DST] = dst;
  steps.add(p.primitive, p.scratchpad, std::move(args));
  if (copy_back) steps.add_reorder(dst, copy_back);
  steps.finish();
  return conv;
}

}  // namespace

std::unique_ptr<DnnlExtern> prepare_conv(const ExternCall& call,
                                         const std::vector<ExternBuffer>& constants, int threads,
                                         bool transpose) {
  ConvArgs a;
  try {
    a = parse_conv_shapes(call, transpose);
  } catch (const Error&) {
    return nullptr;  // the fallback reports it
  }
  if (a.n == 0 || a.c_in == 0 || a.c_out == 0 || a.in_size() == 0 || a.out_size() == 0)
    return nullptr;  // empty: nothing to gain
  // oneDNN descriptors take no negative strides, and an output written twice (stride 0) has
  // no oneDNN meaning.
  for (size_t i = 0; i < op_input_count(call); ++i)
    for (int64_t s : call.inputs[i].strides)
      if (s < 0) return nullptr;
  const TensorRef& y = call.outputs[0];
  for (size_t d = 0; d < y.shape.size(); ++d)
    if (y.strides[d] < 0 || (y.strides[d] == 0 && y.shape[d] > 1)) return nullptr;
  ThreadScope scope(threads);
  try {
    return build(call, a, constants, threads);
  } catch (const dnnl::error&) {
    return nullptr;  // no oneDNN implementation for it
  }
}

}  // namespace onednn
}  // namespace ferrite
