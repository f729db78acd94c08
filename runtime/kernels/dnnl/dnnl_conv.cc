// Conv and ConvTranspose as one oneDNN (de)convolution, computed channels-last: oneDNN's fast
// f32 kernels here (brgconv, brdgmm_dw, jit deconvolution) take nwc/nhwc/ndhwc activations,
// while for nchw it falls back to im2col + GEMM, measured 1.45x slower on a 64-channel 56x56
// 3x3 convolution and 6x slower still once binary post-ops are fused (it applies them element
// by element). So X, Y and full-size post-op operands not already channels-last are
// reordered into channels-last scratch around the primitive (each reorder costs about 2% of
// that convolution). Weights take the blocked layout the primitive asks for: reordered once
// when they are a plan constant, else at every run. Bias and the post-ops are fused.
//
// ConvTranspose with negative pads (ONNX's output_padding, an output_shape past the full
// output) has no oneDNN equivalent: the deconvolution computes the part of Y its full output
// covers (pads clamped to 0, Y and the post-op operands cropped to match), and the border
// beyond it, where only the bias lands, gets bias and post-ops here, element by element
// (one row and column per image for a stride-2 output_padding of 1).
#include "runtime/kernels/dnnl/dnnl_conv.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "compiler/plan/error.h"
#include "runtime/kernels/dnnl/dnnl_post_ops.h"
#include "runtime/kernels/dnnl/dnnl_steps.h"
#include "runtime/kernels/dnnl/nonfinite_inputs.h"
#include "runtime/kernels/reference/conv.h"
#include "runtime/kernels/reference/operand_checks.h"
#include "runtime/kernels/reference/post_ops_apply.h"

namespace ferrite {
namespace onednn {

// W as oneDNN's weights: [OC, IC, k...], or [G, OC/G, IC/G, k...] with groups. Conv's W is
// [M, C/G, k...]; ConvTranspose's is [C, M/G, k...], so its first two dims swap places.
View conv_weights_view(const ConvArgs& a, const TensorRef& w) {
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

bool conv_spatial(const ConvArgs& a, size_t k, ConvSpatial* s) {
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

namespace {

// The part of a ConvTranspose output outside its full output (negative pads): per spatial
// dim d, Y's elements [lead[d], lead[d] + inner[d]) are computed by oneDNN, the rest is
// border. Empty when no pad is negative.
struct Border {
  Dims lead, inner;
};

// Calls f(idx) for every index with lo[e] <= idx[e] < hi[e], row-major.
template <class F>
void for_each_in_box(const Dims& lo, const Dims& hi, F f) {
  for (size_t e = 0; e < lo.size(); ++e)
    if (lo[e] >= hi[e]) return;
  Dims idx = lo;
  while (true) {
    f(idx);
    size_t e = idx.size();
    while (e > 0 && ++idx[e - 1] == hi[e - 1]) {
      idx[e - 1] = lo[e - 1];
      --e;
    }
    if (e == 0) return;
  }
}

// y = bias, then the post-ops (post_ops.h), at every border element of outputs[0]. The
// border is split into disjoint boxes: spatial dim d outside its interior, the dims before
// it inside theirs, the dims after it anywhere.
void fill_border(const ExternCall& call, const Border& b, bool has_bias, const ExternBuffer* inputs,
                 const ExternBuffer* outputs) {
  const TensorRef& y = call.outputs[0];
  float* out = static_cast<float*>(outputs[0].data);
  auto element = [&](const Dims& idx) {
    int64_t off = y.offset;
    for (size_t e = 0; e < idx.size(); ++e) off += idx[e] * y.strides[e];
    out[off] = finish_element(call, has_bias, inputs, idx, 0.0f);
  };
  const size_t k = b.lead.size();
  for (size_t d = 0; d < k; ++d) {
    Dims lo(k + 2, 0), hi = y.shape;
    for (size_t e = 0; e < d; ++e) {
      lo[2 + e] = b.lead[e];
      hi[2 + e] = b.lead[e] + b.inner[e];
    }
    hi[2 + d] = b.lead[d];
    for_each_in_box(lo, hi, element);  // before the interior
    lo[2 + d] = b.lead[d] + b.inner[d];
    hi[2 + d] = y.shape[2 + d];
    for_each_in_box(lo, hi, element);  // after it
  }
}

class DnnlConv : public SteppedExtern {
 public:
  DnnlConv(const ExternCall& call, int threads, bool has_bias, Border border)
      : SteppedExtern(call, threads), has_bias_(has_bias), border_(std::move(border)) {}

  void run(const ExternBuffer* inputs, const ExternBuffer* outputs) override {
    if (nonfinite_) {
      return nonfinite_->run(
          call_, inputs, outputs,
          [this](const ExternBuffer* in, const ExternBuffer* out) { SteppedExtern::run(in, out); });
    }
    SteppedExtern::run(inputs, outputs);
    if (!border_.lead.empty()) fill_border(call_, border_, has_bias_, inputs, outputs);
  }

  // The handling of non-finite inputs (nonfinite_inputs.h), where oneDNN's differs.
  void set_nonfinite(std::unique_ptr<NonFiniteInputs> n) { nonfinite_ = std::move(n); }

 protected:
  void check(const ExternBuffer* inputs, const ExternBuffer* outputs) const override {
    parse_conv(call_, inputs, outputs);
    check_post_ops(call_, inputs, outputs);
  }

 private:
  bool has_bias_;
  Border border_;
  std::unique_ptr<NonFiniteInputs> nonfinite_;
};

View view_of(const TensorRef& r) {
  return View{r.shape, r.strides, r.offset};
}

// constants[i] when input i is a plan constant inside its buffer; null otherwise. `*bad`
// when it is a constant outside its buffer (the fallback reports that when the call runs).
const ExternBuffer* constant_input(const ExternCall& call,
                                   const std::vector<ExternBuffer>& constants, size_t i,
                                   bool* bad) {
  if (!is_constant_input(constants, i)) return nullptr;
  try {
    const TensorRef& r = call.inputs[i];
    check_f32_view(extern_op_name(call.op), "operand", r, constants[i], r.shape.size());
  } catch (const Error&) {
    *bad = true;
  }
  return &constants[i];
}

dnnl::memory::desc channels_last(const Dims& dims,
                                 dnnl::memory::data_type type = dnnl::memory::data_type::f32) {
  return dnnl::memory::desc(dims, type, dense_strides(dims, channels_last_order(dims.size())));
}

// A created (de)convolution with what the steps need to know of it.
struct Primitive {
  dnnl::primitive primitive;
  dnnl::memory::desc src, weights, dst, scratchpad;
  std::string impl;
};

// The first implementation oneDNN lists for `d`, or the first whose name starts with
// `prefer` when one does.
template <class P>
Primitive create(const typename P::desc& d, const dnnl::primitive_attr& attr,
                 const std::string& prefer = "") {
  typename P::primitive_desc pd(d, attr, cpu_engine());
  if (!prefer.empty()) {
    typename P::primitive_desc scan = pd;
    do {
      if (std::string(scan.impl_info_str()).rfind(prefer, 0) == 0) {
        pd = scan;
        break;
      }
    } while (scan.next_impl());
  }
  return Primitive{P(pd),         pd.src_desc(),        pd.weights_desc(),
                   pd.dst_desc(), pd.scratchpad_desc(), pd.impl_info_str()};
}

bool is_depthwise(const ConvArgs& a) {
  return !a.transpose && a.group > 1 && a.group == a.c_in && a.group == a.c_out;
}

// The implementation to take over oneDNN's first choice, or "" for its own.
//  - Depthwise convolutions on its jit_dw kernels rather than the brdgmm_dw ones it lists
//    first: mobilenet_v2's 17 depthwise layers (channels-last, 32 to 960 channels, strides
//    1 and 2) take 0.85-0.98 ms instead of 1.02-1.12 on one AVX-512 core and 0.50-0.55
//    instead of 0.54-0.60 on two.
//  - Winograd on F(4x4, 3x3) for outputs of 28x28 and more, where oneDNN would take
//    F(2x2, 3x3) for fewer channels: resnet18's 64-channel 56x56 convolutions took
//    0.92-1.11 ms instead of 1.15-1.23 on one Zen 4 core (its 128-channel 28x28 ones were on
//    F(4x4) already). On 14x14 F(4x4) is slower (256 channels: 1.42-1.66 ms against 1.19-1.30).
std::string preferred_implementation(const ConvArgs& a, dnnl::algorithm algorithm) {
  if (is_depthwise(a)) return "jit_dw";
  if (algorithm == dnnl::algorithm::convolution_winograd && a.out[1] >= 28 && a.out[2] >= 28)
    return "jit_wino_4x3";
  return "";
}

// Throws dnnl::error when oneDNN rejects the call.
Primitive create_primitive(const ConvArgs& a, dnnl::algorithm algorithm, const ConvSpatial& s,
                           const dnnl::memory::desc& x, const dnnl::memory::desc& w,
                           const dnnl::memory::desc& b, const dnnl::memory::desc& y,
                           const dnnl::primitive_attr& attr) {
  const auto inference = dnnl::prop_kind::forward_inference;
  if (a.transpose) {
    using P = dnnl::deconvolution_forward;
    return create<P>(P::desc(inference, dnnl::algorithm::deconvolution_direct, x, w, b, y,
                             s.strides, s.dilations, s.pad_l, s.pad_r),
                     attr);
  }
  using P = dnnl::convolution_forward;
  return create<P>(
      P::desc(inference, algorithm, x, w, b, y, s.strides, s.dilations, s.pad_l, s.pad_r), attr,
      preferred_implementation(a, algorithm));
}

// Whether a convolution is worth trying on oneDNN's Winograd kernels (F(2x2,3x3) and
// F(4x4,3x3), blocked nChw16c activations): 2-D, 3x3, stride 1, undilated, ungrouped, 32+
// channels each way, and a large enough output. Measured on one AVX-512 core with the
// reorders from and to channels-last included, against the direct brgconv (tests/perf:
// `ferrite_kernel_bench ops`), time ratios: 64ch 56x56 0.58, 128ch 28x28 0.36, 256ch
// 14x14 0.51, 32ch 56x56 0.74; but 128ch 14x14 0.85 on one thread turns to 1.3-1.5 on two
// (too few tiles to split), and 16ch 112x112 is 1.07. 512ch 7x7 (resnet18's layer4, in
// the model): 0.72 on one thread (2.2 -> 1.6 ms) and 0.78 on two (1.17 -> 0.91 ms). The
// choice does not depend on the thread count, so results stay bitwise equal across counts.
// FERRITE_WINOGRAD=0 turns it off (A/B runs).
bool winograd_candidate(const ConvArgs& a, size_t rank) {
  if (a.transpose || rank != 4 || a.group != 1 || a.c_in < 32 || a.c_out < 32) return false;
  for (size_t D = 1; D < 3; ++D)
    if (a.kernel[D] != 3 || a.stride[D] != 1 || a.dilation[D] != 1) return false;
  static const bool enabled = [] {
    const char* v = std::getenv("FERRITE_WINOGRAD");
    return !(v && std::string(v) == "0");
  }();
  if (!enabled) return false;
  const int64_t pixels = a.out[1] * a.out[2];
  const double multiply_adds = static_cast<double>(a.n) * static_cast<double>(pixels) *
                               static_cast<double>(a.c_in) * static_cast<double>(a.c_out) * 9;
  return pixels >= 28 * 28 || (pixels >= 7 * 7 && multiply_adds >= 50e6);
}

// The call's operands as oneDNN sees them, and which are plan constants.
struct Operands {
  View x, w, b, y;
  const ExternBuffer *x_constant = nullptr, *w_constant = nullptr, *b_constant = nullptr;
};

// The handling of an X with infinities or NaN (nonfinite_inputs.h) for a Conv, or null where
// there is none: a ConvTranspose, a constant X (reordered at prepare time, it is not there
// to read) or a constant W that is not finite.
std::unique_ptr<NonFiniteInputs> nonfinite_inputs(const ExternCall& call, const Operands& o) {
  return o.x_constant ? nullptr : conv_nonfinite_inputs(call, o.w_constant);
}

// The extern running primitive `p` on the operands: X, W and B reordered into the layouts
// `p` reads where they differ, the binary post-op operands bound (read in `order`), the sum
// post-op's operand (`sum`, when its input is set) copied into Y's memory first, and Y
// reordered back when `p` writes another layout. Null when a constant operand lies outside
// its buffer.
std::unique_ptr<DnnlExtern> assemble(const ExternCall& call, const ConvArgs& a, Border border,
                                     const Primitive& p, const Operands& o,
                                     const std::vector<BinaryOperand>& binaries,
                                     const BinaryOperand& sum, const std::vector<int>& order,
                                     const std::vector<ExternBuffer>& constants,
                                     const PackedForms& packed, int threads,
                                     std::unique_ptr<NonFiniteInputs> nonfinite = nullptr) {
  auto conv = std::make_unique<DnnlConv>(call, threads, a.has_bias, std::move(border));
  conv->set_nonfinite(std::move(nonfinite));
  conv->set_implementation(p.impl);
  DnnlSteps& steps = conv->steps();
  steps.use_packed(&packed);
  Args args;
  args[DNNL_ARG_SRC] = steps.input(o.x, p.src, 0, o.x_constant);
  args[DNNL_ARG_WEIGHTS] = steps.input(o.w, p.weights, 1, o.w_constant);
  if (a.has_bias) args[DNNL_ARG_BIAS] = steps.input(o.b, f32_desc({a.c_out}, {1}), 2, o.b_constant);
  if (!bind_binary_operands(binaries, order, constants, &steps, &args)) return nullptr;
  dnnl::memory copy_back;
  const dnnl::memory dst = steps.output(o.y, p.dst, 0, &copy_back);
  args[DNNL_ARG_DST] = dst;
  if (sum.input != SIZE_MAX) steps.add_copy(sum.view, sum.input, dst);
  steps.add(p.primitive, p.scratchpad, std::move(args));
  if (copy_back) steps.add_reorder(dst, copy_back);
  steps.finish();
  return conv;
}

// A Winograd convolution for the call (winograd_candidate), or null when oneDNN has none for
// it or its post-ops (binary ones other than a full-size Add, which becomes a sum), or a
// constant W is not finite (its signs give the outputs next to non-finite inputs:
// nonfinite_inputs.h), or X is a constant (packed at prepare time, it is not there to read).
std::unique_ptr<DnnlExtern> build_winograd(const ExternCall& call, const ConvArgs& a,
                                           const ConvSpatial& spatial, const Operands& o,
                                           const std::vector<ExternBuffer>& constants,
                                           const PackedForms& packed, int threads) {
  dnnl::post_ops ops;
  std::vector<BinaryOperand> binaries;
  BinaryOperand sum;
  const std::vector<int> order = channels_last_order(4);
  if (!append_post_ops(call, order, &ops, &binaries, &sum) || !binaries.empty()) return nullptr;
  dnnl::primitive_attr attr = user_scratchpad_attr();
  attr.set_post_ops(ops);
  const auto f32 = dnnl::memory::data_type::f32;
  const auto any = dnnl::memory::format_tag::any;
  try {
    const Primitive p = create_primitive(
        a, dnnl::algorithm::convolution_winograd, spatial, dnnl::memory::desc(o.x.dims, f32, any),
        dnnl::memory::desc(o.w.dims, f32, any),
        a.has_bias ? f32_desc({a.c_out}, {1}) : dnnl::memory::desc(),
        dnnl::memory::desc(o.y.dims, f32, any), attr);
    if (p.impl.find("wino") == std::string::npos) return nullptr;
    // After the primitive: where oneDNN has no Winograd kernels (no AVX-512) the weights'
    // signs are not taken for nothing (the direct convolution takes them again).
    std::unique_ptr<NonFiniteInputs> nonfinite = nonfinite_inputs(call, o);
    if (!nonfinite) return nullptr;
    return assemble(call, a, Border{}, p, o, binaries, sum, order, constants, packed, threads,
                    std::move(nonfinite));
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

// Whether some window of a Conv reaches into the padding (a ConvTranspose's pads crop its
// output instead).
bool padded(const ConvArgs& a) {
  if (a.transpose) return false;
  for (size_t D = 0; D < 3; ++D)
    if (a.pad_begin[D] > 0 || a.pad_end[D] > 0) return true;
  return false;
}

// `call` prepared as `computed` (the same call, or its cropped part: crop_call) with
// geometry `a`; with `bf16` (fast math), X and W rounded to bfloat16 (W once when it is a
// constant, X at each run) into a direct convolution with float32 sums and Y. Throws
// dnnl::error when oneDNN rejects it.
std::unique_ptr<DnnlExtern> build(const ExternCall& call, const ExternCall& computed,
                                  const ConvArgs& a, Border border,
                                  const std::vector<ExternBuffer>& constants,
                                  const PackedForms& packed, int threads, bool bf16) {
  const TensorRef &x = computed.inputs[0], &w = computed.inputs[1], &y = computed.outputs[0];
  const size_t rank = x.shape.size();
  bool bad = false;
  Operands o;
  o.x_constant = constant_input(call, constants, 0, &bad);
  o.w_constant = constant_input(call, constants, 1, &bad);
  o.b_constant = a.has_bias ? constant_input(call, constants, 2, &bad) : nullptr;
  ConvSpatial spatial;
  if (bad || !conv_spatial(a, rank - 2, &spatial)) return nullptr;
  o.x = view_of(x);
  o.y = view_of(y);
  o.w = conv_weights_view(a, w);
  o.b = View{{a.c_out}, {a.b_stride}, a.b_offset};

  // oneDNN's Winograd kernels are float32 only; its bfloat16 direct ones are as fast.
  if (!bf16 && border.lead.empty() && winograd_candidate(a, rank))
    if (auto conv = build_winograd(call, a, spatial, o, constants, packed, threads)) return conv;

  const auto in_type = bf16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
  const dnnl::memory::desc w_any(o.w.dims, in_type, dnnl::memory::format_tag::any);
  const dnnl::memory::desc b_want = a.has_bias ? f32_desc({a.c_out}, {1}) : dnnl::memory::desc();
  dnnl::primitive_attr attr = user_scratchpad_attr();
  dnnl::post_ops ops;
  std::vector<BinaryOperand> binaries;
  const std::vector<int> order = channels_last_order(rank);
  if (!append_post_ops(computed, order, &ops, &binaries)) return nullptr;
  attr.set_post_ops(ops);
  const Primitive p = create_primitive(a, dnnl::algorithm::convolution_direct, spatial,
                                       channels_last(o.x.dims, in_type), w_any, b_want,
                                       channels_last(o.y.dims), attr);
  if (!worth_using(p.impl, true, !binaries.empty())) return nullptr;
  BinaryOperand no_sum;
  no_sum.input = SIZE_MAX;
  std::unique_ptr<NonFiniteInputs> nonfinite;
  const bool padded_run_time_w = padded(a) && !o.w_constant;  // checked at each run
  if (flushes_nan(call) || padded_run_time_w) {
    nonfinite = nonfinite_inputs(call, o);
    if (!nonfinite && padded_run_time_w) return nullptr;
  } else if (padded(a) && !finite_weights(call, *o.w_constant)) {
    // A constant W with an infinity or NaN: oneDNN's AVX2 kernels multiply the padding's
    // zeros by it (0 * NaN), where the reference adds no term for a padded tap
    // (diff_conv_padded_nan_957bb6768a, on an AVX2-only CPU): the portable op takes it.
    return nullptr;
  }
  return assemble(call, a, std::move(border), p, o, binaries, no_sum, order, constants, packed,
                  threads, std::move(nonfinite));
}

// The part of a ConvTranspose call with negative pads that its full output covers: pads
// clamped to 0, and Y and the post-op operands cropped to that part (`*border` says where
// it lies). False when it is empty.
bool crop_call(const ExternCall& call, const ConvArgs& a, ExternCall* cropped, Border* border) {
  *cropped = call;
  const size_t k = call.outputs[0].shape.size() - 2;
  for (size_t d = 0; d < k; ++d) {
    const size_t D = 3 - k + d;
    const int64_t lead = std::max<int64_t>(-a.pad_begin[D], 0);
    const int64_t inner = a.out[D] - lead - std::max<int64_t>(-a.pad_end[D], 0);
    if (inner <= 0) return false;
    border->lead.push_back(lead);
    border->inner.push_back(inner);
    const std::string s = std::to_string(d);
    cropped->ints["pad_begin" + s] = std::max<int64_t>(a.pad_begin[D], 0);
    cropped->ints["pad_end" + s] = std::max<int64_t>(a.pad_end[D], 0);
  }
  auto crop = [&](TensorRef* r) {
    for (size_t d = 0; d < k; ++d) {
      r->offset += border->lead[d] * r->strides[2 + d];
      r->shape[2 + d] = border->inner[d];
    }
  };
  crop(&cropped->outputs[0]);
  for (const PostOp& p : call.post_ops)
    if (post_op_is_binary(p.kind)) crop(&cropped->inputs[static_cast<size_t>(p.input)]);
  return true;
}

bool negative_pads(const ConvArgs& a) {
  for (size_t D = 0; D < 3; ++D)
    if (a.pad_begin[D] < 0 || a.pad_end[D] < 0) return true;
  return false;
}

}  // namespace

std::unique_ptr<DnnlExtern> prepare_conv(const ExternCall& call,
                                         const std::vector<ExternBuffer>& constants,
                                         const PackedForms& packed, int threads, bool bf16) {
  ConvArgs a;
  try {
    a = parse_conv_shapes(call);
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
  // Binary post-op operands must be views of Y's shape for the border (append_post_ops
  // refuses the others too).
  for (const PostOp& p : call.post_ops)
    if (post_op_is_binary(p.kind) &&
        (p.input < 0 || static_cast<size_t>(p.input) >= call.inputs.size() ||
         call.inputs[static_cast<size_t>(p.input)].shape != y.shape ||
         call.inputs[static_cast<size_t>(p.input)].strides.size() != y.shape.size()))
      return nullptr;
  ExternCall cropped;
  Border border;
  if (negative_pads(a)) {
    if (!crop_call(call, a, &cropped, &border)) return nullptr;
    try {
      a = parse_conv_shapes(cropped);
    } catch (const Error&) {
      return nullptr;
    }
  }
  const ExternCall& computed = border.lead.empty() ? call : cropped;
  ThreadScope scope(threads);
  // In bfloat16 first when asked; what has no fast bfloat16 form stays float32.
  for (bool in_bf16 : {bf16, false}) {
    try {
      if (auto conv = build(call, computed, a, border, constants, packed, threads, in_bf16))
        return conv;
    } catch (const dnnl::error&) {
      // No oneDNN implementation for it.
    }
    if (!in_bf16) break;
  }
  return nullptr;
}

}  // namespace onednn
}  // namespace ferrite
