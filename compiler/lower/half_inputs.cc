// float16 and bfloat16 through the ops whose lowerings compute in float32 only (the MatMul
// and convolution externs, attention, the recurrences, onnxruntime's transformer ops): their
// half inputs are widened to float32 — a constant (a model's fp16 weights) once, at compile
// time, into a float32 constant the backends prepack as any weight; a computed one by a
// pointwise cast the scheduler fuses into its producer — and their float32 outputs narrowed
// back to the inputs' half type, before any fused epilogue, which computes on the half values
// as the nodes it absorbed would. Results are float32 computations rounded once to the half
// type (onnxruntime's CPU kernels widen likewise, or compute in half precision).
#include <string>

#include "compiler/graph/ferrite_ops.h"
#include "compiler/graph/layout_attr.h"
#include "compiler/lower/lowering.h"
#include "compiler/plan/scalar_ops.h"

namespace ferrite {
namespace {

bool is_half(DType t) {
  return t == DType::F16 || t == DType::BF16;
}

TensorBoxPtr widened(const LowerCtx& c, const TensorBoxPtr& t) {
  if (std::shared_ptr<const TensorData> d = c.gl.constant_data(t)) {
    auto f = std::make_shared<TensorData>();
    f->dtype = DType::F32;
    f->shape = d->shape;
    const int64_t n = d->elements();
    f->bytes.assign(static_cast<size_t>(n) * sizeof(float), 0);
    float* out = reinterpret_cast<float*>(f->bytes.mutable_data());
    for (int64_t i = 0; i < n; ++i) out[i] = load_element(d->dtype, d->bytes.data(), i).f32;
    return constant_box(c.gl, f, c.origin() + " widened");
  }
  return make_pointwise_box(DType::F32, t->size, t->loader(), c.origin());
}

LowerFn in_float32(LowerFn fn) {
  return [fn](LowerCtx& c) {
    DType half = DType::Undefined;
    for (const TensorBoxPtr& t : c.in)
      if (t && is_half(t->dtype) && half == DType::Undefined) half = t->dtype;
    if (half == DType::Undefined) return fn(c);
    // A fused epilogue (graph/ferrite_ops.h) computes on the half result, as the nodes it
    // absorbed did: it follows the narrowing, as a pointwise function of it.
    const EpiloguePost post = epilogue_nodes(c);
    Node plain = c.node;
    plain.attrs.erase(kEpilogueAttr);
    LowerCtx f{c.gl, plain, c.in, c.opset};
    // A channels-last convolution's X (graph/layout_attr.h) is widened into channels-last
    // storage, the order the convolution reads: in logical order it would be reordered again.
    const bool nhwc = c.node.attr_string(kLayoutAttr, "") == kChannelsLastLayout;
    for (size_t i = 0; i < f.in.size(); ++i) {
      TensorBoxPtr& t = f.in[i];
      if (!t || !is_half(t->dtype)) continue;
      t = widened(c, t);
      if (i == 0 && nhwc && t->size.size() >= 3 && t->size[1] >= GraphLowering::kMinChannelsLast &&
          !t->storage->realized())
        t = c.gl.realize_channels_last(t);
    }
    std::vector<TensorBoxPtr> outs = fn(f);
    for (TensorBoxPtr& o : outs)
      if (o && o->dtype == DType::F32)
        o = make_pointwise_box(half, o->size, o->loader(), c.origin());
    if (post && !outs.empty() && outs[0]) outs[0] = post(outs[0]);
    return outs;
  };
}

}  // namespace

void compute_halves_in_float32(LoweringTable& t) {
  const std::string ms = std::string(kMicrosoftDomain) + ".";
  for (const std::string& op : {std::string("MatMul"),
                                std::string("Gemm"),
                                std::string("Conv"),
                                std::string("ConvTranspose"),
                                std::string("CausalConvWithState"),
                                std::string("DeformConv"),
                                std::string("Attention"),
                                std::string("LinearAttention"),
                                std::string("ai.onnx.preview.FlexAttention"),
                                std::string("LSTM"),
                                std::string("GRU"),
                                std::string("RNN"),
                                std::string("Einsum"),
                                ms + "MultiHeadAttention",
                                ms + "Attention",
                                ms + "GroupQueryAttention",
                                ms + "Gelu",
                                ms + "FastGelu",
                                ms + "BiasGelu",
                                ms + "QuickGelu",
                                ms + "BiasAdd",
                                ms + "SkipLayerNormalization",
                                ms + "SkipSimplifiedLayerNormalization",
                                ms + "SimplifiedLayerNormalization",
                                ms + "EmbedLayerNormalization",
                                ms + "RotaryEmbedding",
                                ms + "MatMulNBits"}) {
    auto it = t.fns.find(op);
    if (it != t.fns.end()) it->second = in_float32(it->second);
  }
}

}  // namespace ferrite
