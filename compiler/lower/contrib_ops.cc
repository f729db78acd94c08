// onnxruntime's contrib ops (domain com.microsoft) that transformer exports and
// onnxruntime's transformer optimizer write, with the semantics of its ContribOperators
// documentation: Gelu, FastGelu, BiasGelu, QuickGelu, BiasAdd, SkipLayerNormalization,
// SkipSimplifiedLayerNormalization, SimplifiedLayerNormalization (also in the default
// domain, where onnxruntime registers it), EmbedLayerNormalization and RotaryEmbedding;
// MultiHeadAttention in contrib_attention_ops.cc.
// Each is a composition of pointwise ops, reductions over the hidden dim and gathers, which
// the scheduler fuses as it would the plain ops.
#include <cmath>

#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

using Pointwise = std::function<V(KernelBuilder&, const std::vector<V>&)>;

TensorBoxPtr add_all(const LowerCtx& c, const std::vector<TensorBoxPtr>& ins) {
  return make_pointwise(c, ins, ins[0]->dtype, [](KernelBuilder& b, const std::vector<V>& v) {
    V s = v[0];
    for (size_t i = 1; i < v.size(); ++i) s = b.binary(Op::Add, s, v[i]);
    return s;
  });
}

V gelu_erf(KernelBuilder& b, V x) {  // 0.5 x (1 + erf(x / sqrt 2))
  const V e = b.unary(Op::Erf, b.binary(Op::Mul, x, b.constant(x.type, M_SQRT1_2)));
  return b.binary(Op::Mul, b.binary(Op::Mul, x, b.constant(x.type, 0.5)),
                  b.binary(Op::Add, e, b.constant(x.type, 1)));
}

V gelu_tanh(KernelBuilder& b, V x) {  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  const V x3 = b.binary(Op::Mul, b.binary(Op::Mul, x, x), x);
  const V inner = b.binary(Op::Add, x, b.binary(Op::Mul, x3, b.constant(x.type, 0.044715)));
  const V t = b.unary(Op::Tanh, b.binary(Op::Mul, inner, b.constant(x.type, 0.7978845608028654)));
  return b.binary(Op::Mul, b.binary(Op::Mul, x, b.constant(x.type, 0.5)),
                  b.binary(Op::Add, t, b.constant(x.type, 1)));
}

const TensorBoxPtr& float_input(const LowerCtx& c, size_t i) {
  const TensorBoxPtr& t = c.input(i);
  if (t->dtype != DType::F32) c.unsupported(c.node.op_type, " on ", dtype_name(t->dtype));
  return t;
}

// y = fn(sum of the given inputs): Gelu(X), FastGelu(X[, bias]), BiasGelu(A, B).
LowerFn gelu_of_sum(size_t first_optional, bool tanh_form) {
  return [first_optional, tanh_form](LowerCtx& c) {
    std::vector<TensorBoxPtr> ins;
    for (size_t i = 0; i < c.in.size(); ++i) {
      if (i < first_optional || c.has(i)) ins.push_back(float_input(c, i));
    }
    TensorBoxPtr s = ins.size() > 1 ? add_all(c, ins) : ins[0];
    return std::vector<TensorBoxPtr>{
        make_pointwise(c, {s}, s->dtype, [tanh_form](KernelBuilder& b, const std::vector<V>& v) {
          return tanh_form ? gelu_tanh(b, v[0]) : gelu_erf(b, v[0]);
        })};
  };
}

// Statistics over the last dim of x (keepdims): mean (null for RMS) and 1/sqrt(var + eps),
// or 1/sqrt(mean(x^2) + eps) for RMS.
struct Stats {
  TensorBoxPtr mean, inv_std;
};

Stats last_dim_stats(const LowerCtx& c, const TensorBoxPtr& x, double eps, bool rms) {
  const int axis = static_cast<int>(x->size.size()) - 1;
  if (axis < 0) c.error("input must have rank >= 1");
  const double n = static_cast<double>(x->size.back());
  auto div_n = [n](KernelBuilder& b, V v) { return b.binary(Op::Div, v, b.constant(v.type, n)); };
  auto inv = [n, eps](KernelBuilder& b, V v) {
    const V var = b.binary(Op::Div, v, b.constant(v.type, n));
    return b.unary(Op::Rsqrt, b.binary(Op::Add, var, b.constant(v.type, eps)));
  };
  Stats s;
  TensorBoxPtr centred = x;
  if (!rms) {
    s.mean = make_reduction(c, x, {axis}, true, ReduceKind::Sum, x->dtype, nullptr, div_n);
    centred = make_pointwise(
        c, {x, s.mean}, x->dtype,
        [](KernelBuilder& b, const std::vector<V>& v) { return b.binary(Op::Sub, v[0], v[1]); });
  }
  s.inv_std = make_reduction(
      c, centred, {axis}, true, ReduceKind::Sum, x->dtype,
      [](KernelBuilder& b, V v) { return b.binary(Op::Mul, v, v); }, inv);
  return s;
}

// (x - mean) * inv_std * gamma [+ beta], or x * inv_std * gamma for RMS.
TensorBoxPtr normalized(const LowerCtx& c, const TensorBoxPtr& x, const Stats& s,
                        const TensorBoxPtr& gamma, const TensorBoxPtr& beta) {
  std::vector<TensorBoxPtr> ins{x, s.inv_std, gamma};
  if (beta) ins.push_back(beta);
  if (s.mean) ins.push_back(s.mean);
  const bool has_beta = beta != nullptr, has_mean = s.mean != nullptr;
  return make_pointwise(c, ins, x->dtype,
                        [has_beta, has_mean](KernelBuilder& b, const std::vector<V>& v) {
                          V y = v[0];
                          if (has_mean) y = b.binary(Op::Sub, y, v.back());
                          y = b.binary(Op::Mul, b.binary(Op::Mul, y, v[1]), v[2]);
                          return has_beta ? b.binary(Op::Add, y, v[3]) : y;
                        });
}

void check_hidden(const LowerCtx& c, const TensorBoxPtr& t, int64_t hidden, const char* what) {
  if (t->size != std::vector<int64_t>{hidden}) c.error(what, " must be [", hidden, "]");
}

// SkipLayerNormalization (rms false) and SkipSimplifiedLayerNormalization (rms true):
// s = input + skip [+ bias], normalized over the hidden dim; outputs y, mean,
// inv_std_var, s.
std::vector<TensorBoxPtr> lower_skip_norm(LowerCtx& c, bool rms) {
  const TensorBoxPtr &x = float_input(c, 0), &skip = float_input(c, 1);
  const TensorBoxPtr& gamma = float_input(c, 2);
  if (x->size.size() < 2) c.error("input must have rank >= 2");
  const int64_t hidden = x->size.back();
  check_hidden(c, gamma, hidden, "gamma");
  const size_t bias_i = rms ? 3 : 4;  // SkipSimplified has no beta
  TensorBoxPtr beta = !rms && c.has(3) ? float_input(c, 3) : nullptr;
  TensorBoxPtr bias = c.has(bias_i) ? float_input(c, bias_i) : nullptr;
  if (beta) check_hidden(c, beta, hidden, "beta");
  if (bias) check_hidden(c, bias, hidden, "bias");
  std::vector<TensorBoxPtr> terms{x, skip};
  if (bias) terms.push_back(bias);
  TensorBoxPtr s = add_all(c, terms);
  if (s->size != x->size) c.error("skip must broadcast to the input's shape");
  c.gl.realize(s);
  const Stats st = last_dim_stats(c, s, c.node.attr_float("epsilon", 1e-12), rms);
  return {normalized(c, s, st, gamma, beta), st.mean, st.inv_std, s};
}

// SimplifiedLayerNormalization: RMS normalization over [axis, rank); outputs Y, inv_std_var.
std::vector<TensorBoxPtr> lower_simplified_norm(LowerCtx& c) {
  const TensorBoxPtr &x = float_input(c, 0), &scale = float_input(c, 1);
  const size_t r = x->size.size();
  if (r == 0) c.error("input must have rank >= 1");
  const int axis = c.axis(c.node.attr_int("axis", -1), r);
  std::vector<int64_t> flat{1, 1};
  for (size_t d = 0; d < r; ++d) flat[static_cast<int>(d) < axis ? 0 : 1] *= x->size[d];
  TensorBoxPtr x2 = reshape_view(x, flat);
  const Stats st = last_dim_stats(c, x2, c.node.attr_float("epsilon", 1e-5), true);
  std::vector<int64_t> stat_shape(x->size.begin(), x->size.begin() + axis);
  stat_shape.resize(r, 1);
  TensorBoxPtr inv = reshape_view(st.inv_std, stat_shape);
  TensorBoxPtr y =
      make_pointwise(c, {x, inv, scale}, x->dtype, [](KernelBuilder& b, const std::vector<V>& v) {
        return b.binary(Op::Mul, b.binary(Op::Mul, v[0], v[1]), v[2]);
      });
  if (y->size != x->size) c.error("scale must broadcast to the normalized dims");
  return {y, inv};
}

// A checked gather of rows of table [rows, hidden] by ids [B, S] (int32 or int64).
TensorBoxPtr embed(const LowerCtx& c, const TensorBoxPtr& table, const TensorBoxPtr& ids,
                   int64_t batch, int64_t seq, const char* what) {
  if (table->dtype != DType::F32 || table->size.size() != 2) {
    c.error(what, " must be a float32 matrix");
  }
  const int64_t rows = table->size[0];
  const std::string msg = str_cat(c.origin(), ": an id outside ", what);
  Loader fn = [table, ids, rows, msg](KernelBuilder& b, const std::vector<Index>& i) {
    std::vector<Index> at(ids->size.size());
    for (size_t d = 0; d < at.size(); ++d) at[d] = ids->size[d] == 1 ? ix_const(0) : i[d];
    const V id = b.check_index(b.cast(ids->load(b, at), ScalarType::I64), rows, msg);
    return table->load(b, {ix_value(id.id), i[2]});
  };
  return make_pointwise_box(DType::F32, {batch, seq, table->size[1]}, fn, c.origin());
}

// EmbedLayerNormalization: LayerNorm(word[input_ids] + position[position_ids or s]
// [+ segment[segment_ids]]) * gamma + beta; mask_index counts each row's mask entries
// equal to 1 (zeros without a mask); the third output is the sum before normalization.
std::vector<TensorBoxPtr> lower_embed_layer_norm(LowerCtx& c) {
  const TensorBoxPtr& ids = c.input(0);
  if (ids->size.size() != 2 || dtype_is_float(ids->dtype)) {
    c.error("input_ids must be an integer [batch, sequence]");
  }
  const int64_t batch = ids->size[0], seq = ids->size[1];
  const TensorBoxPtr &word = c.input(2), &pos_table = c.input(3);
  const int64_t hidden = word->size.size() == 2 ? word->size[1] : -1;
  TensorBoxPtr positions = c.has(8) ? c.input(8) : nullptr;
  if (positions && (positions->size.size() != 2 || positions->size[1] != seq ||
                    (positions->size[0] != 1 && positions->size[0] != batch))) {
    c.error("position_ids must be [batch or 1, ", seq, "]");
  }
  if (!positions) {
    positions = make_pointwise_box(
        DType::I64, {1, seq},
        [](KernelBuilder& b, const std::vector<Index>& i) { return b.index_value(i[1]); },
        c.origin());
  }
  std::vector<TensorBoxPtr> parts{embed(c, word, ids, batch, seq, "word_embedding"),
                                  embed(c, pos_table, positions, batch, seq, "position_embedding")};
  if (c.has(1) != c.has(4)) c.error("segment_ids and segment_embedding come together");
  if (c.has(1)) {
    if (c.input(1)->size != ids->size) c.error("segment_ids must be [", batch, ", ", seq, "]");
    parts.push_back(embed(c, c.input(4), c.input(1), batch, seq, "segment_embedding"));
  }
  for (const TensorBoxPtr& p : parts) {
    if (p->size.back() != hidden) c.error("the embeddings differ in hidden size");
  }
  const TensorBoxPtr &gamma = float_input(c, 5), &beta = float_input(c, 6);
  check_hidden(c, gamma, hidden, "gamma");
  check_hidden(c, beta, hidden, "beta");
  TensorBoxPtr sum = add_all(c, parts);
  c.gl.realize(sum);
  const Stats st = last_dim_stats(c, sum, c.node.attr_float("epsilon", 1e-12), false);
  TensorBoxPtr mask_index;
  if (c.has(7)) {
    const TensorBoxPtr& mask = c.input(7);
    if (mask->size != ids->size) c.error("mask must be [", batch, ", ", seq, "]");
    mask_index =
        make_reduction(c, mask, {1}, false, ReduceKind::Sum, DType::I32, [](KernelBuilder& b, V v) {
          return b.cast(b.binary(Op::Eq, b.cast(v, ScalarType::I64), b.constant_i64(1)),
                        ScalarType::I64);
        });
  } else {
    mask_index = make_pointwise_box(
        DType::I32, {batch},
        [](KernelBuilder& b, const std::vector<Index>&) { return b.constant_i64(0); }, c.origin());
  }
  return {normalized(c, sum, st, gamma, beta), mask_index, sum};
}

// com.microsoft RotaryEmbedding: (input, position_ids, cos_cache, sin_cache); position_ids
// [B, S], or [1]: the first token's position, the others following it.
std::vector<TensorBoxPtr> lower_ms_rotary(LowerCtx& c) {
  RotarySpec spec;
  spec.x = c.input(0);
  spec.cos = c.input(2);
  spec.sin = c.input(3);
  const TensorBoxPtr& pos = c.input(1);
  if (pos->dtype != DType::I64) c.error("position_ids must be int64");
  const auto& xs = spec.x->size;
  if (xs.size() != 3 && xs.size() != 4) c.error("input must be 3-D or 4-D");
  const int64_t batch = xs[0], seq = xs.size() == 4 ? xs[2] : xs[1];
  if (pos->size == std::vector<int64_t>{1}) {
    spec.positions = make_pointwise_box(
        DType::I64, {batch, seq},
        [pos](KernelBuilder& b, const std::vector<Index>& i) {
          return b.binary(Op::Add, pos->load(b, {ix_const(0)}), b.index_value(i[1]));
        },
        c.origin());
  } else {
    spec.positions = pos;
  }
  spec.interleaved = c.node.attr_int("interleaved", 0) != 0;
  spec.rot = c.node.attr_int("rotary_embedding_dim", 0);
  spec.num_heads = c.node.attr_int("num_heads", 0);
  if (c.node.attr_int("is_packed_batching", 0) != 0) c.unsupported("is_packed_batching");
  if (xs.size() == 3 && spec.num_heads == 0 && spec.cos->size.size() == 2) {
    const int64_t head = 2 * spec.cos->size[1];  // full rotation: the caches give the head size
    if (head <= 0 || xs[2] % head != 0) c.error("num_heads is needed for this input");
    spec.num_heads = xs[2] / head;
  }
  return {rotary_embedding(c, spec)};
}

void add_contrib(LoweringTable& t, const char* op, LowerFn fn) {
  t.add(str_cat(kMicrosoftDomain, ".", op), std::move(fn));
}

}  // namespace

// The attention contrib ops (lower/contrib_attention_ops.cc, contrib_gqa_ops.cc), registered
// with this family.
void register_contrib_attention_ops(LoweringTable& t);
void register_contrib_gqa_ops(LoweringTable& t);

void register_contrib_ops(LoweringTable& t) {
  register_contrib_attention_ops(t);
  register_contrib_gqa_ops(t);
  add_contrib(t, "Gelu", gelu_of_sum(1, false));
  add_contrib(t, "BiasGelu", gelu_of_sum(2, false));
  add_contrib(t, "FastGelu", gelu_of_sum(1, true));
  add_contrib(t, "QuickGelu", [](LowerCtx& c) {
    const double alpha = c.node.attr_float("alpha", 1.702);
    const TensorBoxPtr& x = float_input(c, 0);
    return std::vector<TensorBoxPtr>{
        make_pointwise(c, {x}, x->dtype, [alpha](KernelBuilder& b, const std::vector<V>& v) {
          const V s = b.unary(Op::Sigmoid, b.binary(Op::Mul, v[0], b.constant(v[0].type, alpha)));
          return b.binary(Op::Mul, v[0], s);
        })};
  });
  add_contrib(t, "BiasAdd", [](LowerCtx& c) {
    const TensorBoxPtr& x = float_input(c, 0);
    if (x->size.size() != 3) c.error("X must be [N, S, C]");
    check_hidden(c, float_input(c, 1), x->size[2], "bias");
    if (float_input(c, 2)->size != x->size) c.error("skip must have X's shape");
    return std::vector<TensorBoxPtr>{add_all(c, {x, c.input(1), c.input(2)})};
  });
  add_contrib(t, "SkipLayerNormalization", [](LowerCtx& c) { return lower_skip_norm(c, false); });
  add_contrib(t, "SkipSimplifiedLayerNormalization",
              [](LowerCtx& c) { return lower_skip_norm(c, true); });
  add_contrib(t, "SimplifiedLayerNormalization", lower_simplified_norm);
  t.add("SimplifiedLayerNormalization", lower_simplified_norm);
  add_contrib(t, "EmbedLayerNormalization", lower_embed_layer_norm);
  add_contrib(t, "RotaryEmbedding", lower_ms_rotary);
}

}  // namespace ferrite
