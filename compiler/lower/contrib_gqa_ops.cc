// com.microsoft GroupQueryAttention, as onnxruntime's CPU kernel computes it (the LLM
// exports of onnxruntime-genai and optimum write it): N query heads share Nkv key/value heads
// (query head h reads kv head h / (N / Nkv)), and a KV cache grows by the S new tokens.
//   query [B, S, N * H] and key, value [B, S, Nkv * H] (or all three packed in query);
//   past_key, past_value [B, Nkv, P, H]; seqlens_k [B] int32: each batch's total length - 1;
//   total_sequence_length: an int32 scalar, T.
// Batch b holds L = seqlens_k[b] + 1 tokens; its past is P_b = 0 on the first prompt
// (S == T), else L - S. present [B, Nkv, max(T, P), H] holds the past's first P_b rows, the
// new tokens' at [P_b, P_b + S), zeros after. Query i attends the keys j < P_b + i + 1 and
// j < L (and, with local_window_size w >= 0, j >= P_b + i + 1 - w: the w newest), its scores
// scale * q k^T, then softcap * tanh(score / softcap) (softcap > 0), plus attention_bias
// [B or 1, N or 1, S, T]; softmax over the keys it attends (smooth_softmax or head_sink [N]:
// e^x / (e^sink + sum e^x), sink 0 without head_sink). With do_rotary, query and new keys
// are rotated by cos_cache/sin_cache [max_position, rotary_dim / 2] at position_ids [B, S],
// or at P_b + i.
#include <cmath>

#include "compiler/lower/fused_attention.h"
#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

// [B, S, heads * H] of t's last dim from `offset`.
TensorBoxPtr columns(const TensorBoxPtr& t, int64_t offset, int64_t n) {
  return make_view(t, {t->size[0], t->size[1], n}, [offset](const std::vector<Index>& i) {
    return std::vector<Index>{i[0], i[1], ix_add(i[2], ix_const(offset))};
  });
}

// [B, S, heads * H] → [B, heads, S, H]
TensorBoxPtr heads_first(const TensorBoxPtr& t, int64_t heads) {
  const auto& s = t->size;
  return permute_view(reshape_view(t, {s[0], s[1], heads, s[2] / heads}), {0, 2, 1, 3});
}

struct Gqa {
  int64_t batch = 0, seq = 0, heads = 0, kv_heads = 0, head = 0, total = 0, past = 0, present = 0;
  bool first_prompt = false;
  TensorBoxPtr seqlens;  // [B] int32

  // P_b: where batch i[0]'s new tokens start in present.
  V past_of(KernelBuilder& b, const Index& batch_index) const {
    if (first_prompt) return b.constant_i64(0);
    const V len = b.binary(Op::Add, b.cast(seqlens->load(b, {batch_index}), ScalarType::I64),
                           b.constant_i64(1));
    return b.binary(Op::Sub, len, b.constant_i64(seq));
  }
};

// present [B, Nkv, max(T, P), H]: the past's first P_b rows, then the new ones, then zeros.
TensorBoxPtr present_of(const LowerCtx& c, const Gqa& g, const TensorBoxPtr& past,
                        const TensorBoxPtr& fresh) {
  Loader fn = [g, past, fresh](KernelBuilder& b, const std::vector<Index>& i) {
    const V j = b.index_value(i[2]), start = g.past_of(b, i[0]);
    const V in_past = b.binary(Op::Lt, j, start);
    const V at = b.binary(Op::Sub, j, start);
    const V in_new = b.binary(Op::And, b.binary(Op::Ge, at, b.constant_i64(0)),
                              b.binary(Op::Lt, at, b.constant_i64(g.seq)));
    V value = b.constant(ScalarType::F32, 0);
    {
      MaskScope scope(b, in_new);
      const V row = b.check_index(at, g.seq, "GroupQueryAttention: a new token's row");
      value = b.where(in_new, fresh->load(b, {i[0], i[1], Index(ix_value(row.id)), i[3]}), value);
    }
    if (past) {
      const V inside = b.binary(Op::And, in_past, b.binary(Op::Lt, j, b.constant_i64(g.past)));
      MaskScope scope(b, inside);
      value = b.where(inside, past->load(b, {i[0], i[1], i[2], i[3]}), value);
    }
    return value;
  };
  TensorBoxPtr t =
      make_pointwise_box(DType::F32, {g.batch, g.kv_heads, g.present, g.head}, fn, c.origin());
  c.gl.realize(t);
  return t;
}

// Query heads grouped by their kv head: [B, N, S, H] → [B, Nkv, (N / Nkv) * S, H], and back.
TensorBoxPtr grouped(const TensorBoxPtr& t, int64_t kv_heads) {
  const auto& s = t->size;
  return reshape_view(t, {s[0], kv_heads, s[1] / kv_heads * s[2], s[3]});
}

// attention_bias (input 10) checked; null without one.
TensorBoxPtr attention_bias(const LowerCtx& c, const Gqa& g) {
  if (!c.has(10)) return nullptr;
  TensorBoxPtr bias = c.input(10);
  const auto& s = bias->size;
  if (bias->dtype != DType::F32 || s.size() != 4 || (s[0] != 1 && s[0] != g.batch) ||
      (s[1] != 1 && s[1] != g.heads) || s[2] != g.seq || s[3] != g.total) {
    c.error("attention_bias must be float32 [batch or 1, num_heads or 1, ", g.seq, ", ", g.total,
            "]");
  }
  return bias;
}

// The scores [B, N, S, present] softcapped, biased and masked (-inf where not attended).
TensorBoxPtr masked_scores(const LowerCtx& c, const Gqa& g, const TensorBoxPtr& scores) {
  const double softcap = c.node.attr_float("softcap", 0.0);
  const int64_t window = c.node.attr_int("local_window_size", -1);
  const TensorBoxPtr bias = attention_bias(c, g);
  Loader fn = [g, scores, softcap, window, bias](KernelBuilder& b, const std::vector<Index>& i) {
    const V j = b.index_value(i[3]);
    const V len =
        b.binary(Op::Add, b.cast(g.seqlens->load(b, {i[0]}), ScalarType::I64), b.constant_i64(1));
    const V causal = b.binary(Op::Add, b.binary(Op::Add, g.past_of(b, i[0]), b.index_value(i[2])),
                              b.constant_i64(1));
    V attended = b.binary(Op::And, b.binary(Op::Lt, j, causal), b.binary(Op::Lt, j, len));
    if (window >= 0) {
      const V oldest = b.binary(Op::Sub, causal, b.constant_i64(window));
      attended = b.binary(Op::And, attended, b.binary(Op::Ge, j, oldest));
    }
    V x = scores->load(b, i);
    if (softcap > 0) {
      const V k = b.constant(ScalarType::F32, softcap);
      x = b.binary(Op::Mul, k, b.unary(Op::Tanh, b.binary(Op::Div, x, k)));
    }
    if (bias) {
      const V inside = b.binary(Op::Lt, j, b.constant_i64(g.total));
      MaskScope scope(b, inside);
      const Index bb = bias->size[0] == 1 ? ix_const(0) : i[0];
      const Index bh = bias->size[1] == 1 ? ix_const(0) : i[1];
      x = b.binary(
          Op::Add, x,
          b.where(inside, bias->load(b, {bb, bh, i[2], i[3]}), b.constant(ScalarType::F32, 0)));
    }
    return b.where(attended, x, b.constant(ScalarType::F32, -INFINITY));
  };
  return make_pointwise_box(DType::F32, scores->size, fn, c.origin());
}

// Softmax over the last axis; with a sink (smooth_softmax, head_sink), one more column of
// the head's sink value (0 without head_sink) joins the sum and is dropped after.
TensorBoxPtr attention_probs(const LowerCtx& c, const Gqa& g, const TensorBoxPtr& x) {
  const bool sink = c.node.attr_int("smooth_softmax", 0) == 1 || c.has(11);
  if (!sink) return softmax_over(c, x, 3, false);
  TensorBoxPtr sinks;
  if (c.has(11)) {
    sinks = c.input(11);
    if (sinks->dtype != DType::F32 || sinks->size != std::vector<int64_t>{g.heads})
      c.error("head_sink must be float32 [", g.heads, "]");
  }
  const TensorBoxPtr column = make_pointwise_box(
      DType::F32, {g.batch, g.heads, g.seq, 1},
      [sinks](KernelBuilder& b, const std::vector<Index>& i) {
        return sinks ? sinks->load(b, {i[1]}) : b.constant(ScalarType::F32, 0);
      },
      c.origin());
  const TensorBoxPtr p = softmax_over(c, concat_values(c.gl, {x, column}, 3, c.origin()), 3, false);
  return make_view(p, x->size, [](const std::vector<Index>& i) { return i; });
}

// The whole attention as one fused extern (fused_attention.h): batch entry b sees its
// L_b = seqlens_k[b] + 1 keys, query i sits at key P_b + i (causal), a window of w keys is
// left_window w - 1, the sink (0 for smooth_softmax) joins each row's sum, attention_bias
// (0 past its `total` columns) is the additive mask. Output [B, S, N * H].
TensorBoxPtr fused_gqa(const LowerCtx& c, const Gqa& g, const TensorBoxPtr& q,
                       const TensorBoxPtr& present_k, const TensorBoxPtr& present_v, double scale) {
  FusedAttention f;
  f.q = heads_first(q, g.heads);
  f.k = present_k;
  f.v = present_v;
  f.scale = scale;
  f.softcap = c.node.attr_float("softcap", 0.0);
  f.causal = true;
  const TensorBoxPtr seqlens = g.seqlens;
  f.key_lengths = make_pointwise_box(
      DType::I64, {g.batch},
      [seqlens](KernelBuilder& b, const std::vector<Index>& i) {
        return b.binary(Op::Add, b.cast(seqlens->load(b, {i[0]}), ScalarType::I64),
                        b.constant_i64(1));
      },
      c.origin());
  f.offset_from_lengths = !g.first_prompt;
  const int64_t window = c.node.attr_int("local_window_size", -1);
  f.left_window = window > 0 ? window - 1 : -1;
  if (const TensorBoxPtr bias = attention_bias(c, g)) {
    f.bias = bias;
    if (g.present != g.total) {
      const int64_t total = g.total;
      std::vector<int64_t> size = bias->size;
      size[3] = g.present;
      f.bias = make_pointwise_box(
          DType::F32, size,
          [bias, total](KernelBuilder& b, const std::vector<Index>& i) {
            const V inside = b.binary(Op::Lt, b.index_value(i[3]), b.constant_i64(total));
            MaskScope scope(b, inside);
            return b.where(inside, bias->load(b, i), b.constant(ScalarType::F32, 0));
          },
          c.origin());
    }
  }
  if (c.has(11)) {
    f.sinks = c.input(11);
    if (f.sinks->dtype != DType::F32 || f.sinks->size != std::vector<int64_t>{g.heads})
      c.error("head_sink must be float32 [", g.heads, "]");
  } else if (c.node.attr_int("smooth_softmax", 0) == 1) {
    f.sinks = make_pointwise_box(
        DType::F32, {g.heads},
        [](KernelBuilder& b, const std::vector<Index>&) { return b.constant(ScalarType::F32, 0); },
        c.origin());
  }
  return fused_attention(c, f, true);
}

// Query and the new keys rotated by the caches (inputs 7, 8) at position_ids (input 9) or
// at each token's place in its batch's sequence.
void rotate(const LowerCtx& c, const Gqa& g, TensorBoxPtr* q, TensorBoxPtr* k) {
  if (!c.has(7) || !c.has(8)) c.error("do_rotary needs cos_cache and sin_cache");
  RotarySpec spec;
  spec.cos = c.input(7);
  spec.sin = c.input(8);
  spec.interleaved = c.node.attr_int("rotary_interleaved", 0) != 0;
  if (spec.cos->size.size() != 2) c.error("cos_cache must be [max_position, rotary_dim / 2]");
  spec.rot = 2 * spec.cos->size[1];
  if (c.has(9)) {
    spec.positions = c.input(9);
    if (spec.positions->dtype != DType::I64 || spec.positions->size.size() != 2 ||
        spec.positions->size[0] != g.batch || spec.positions->size[1] < g.seq)
      c.error("position_ids must be int64 [", g.batch, ", at least ", g.seq, "]");
    if (spec.positions->size[1] != g.seq)
      spec.positions = make_view(spec.positions, {g.batch, g.seq},
                                 [](const std::vector<Index>& i) { return i; });
  } else {
    spec.positions = make_pointwise_box(
        DType::I64, {g.batch, g.seq},
        [g](KernelBuilder& b, const std::vector<Index>& i) {
          return b.binary(Op::Add, g.past_of(b, i[0]), b.index_value(i[1]));
        },
        c.origin());
  }
  spec.x = *q;
  spec.num_heads = g.heads;
  *q = rotary_embedding(c, spec);
  spec.x = *k;
  spec.num_heads = g.kv_heads;
  *k = rotary_embedding(c, spec);
}

std::vector<TensorBoxPtr> lower_group_query_attention(LowerCtx& c) {
  Gqa g;
  g.heads = c.node.attr_int("num_heads", 0);
  g.kv_heads = c.node.attr_int("kv_num_heads", 0);
  if (g.heads <= 0 || g.kv_heads <= 0 || g.heads % g.kv_heads != 0)
    c.error("num_heads (", g.heads, ") must be a positive multiple of kv_num_heads (", g.kv_heads,
            ")");
  if (c.node.attr_int("qk_output", 0) != 0) c.unsupported("qk_output");
  const TensorBoxPtr& query = c.input(0);
  if (query->dtype != DType::F32 || query->size.size() != 3)
    c.unsupported("query of ", TensorType{query->dtype, query->size, {}, true}.to_string(),
                  " (float32 [batch, sequence, hidden] only)");
  g.batch = query->size[0];
  g.seq = query->size[1];
  TensorBoxPtr q, k, v;
  if (c.has(1) != c.has(2)) c.error("key and value come together");
  if (c.has(1)) {
    if (query->size[2] % g.heads != 0) c.error("query's hidden size is not num_heads heads");
    g.head = query->size[2] / g.heads;
    q = query;
    k = c.input(1);
    v = c.input(2);
    for (const TensorBoxPtr* t : {&k, &v}) {
      if ((*t)->dtype != DType::F32 ||
          (*t)->size != std::vector<int64_t>{g.batch, g.seq, g.kv_heads * g.head})
        c.error("key and value must be float32 [", g.batch, ", ", g.seq, ", ", g.kv_heads * g.head,
                "]");
    }
  } else {  // packed: query, then key, then value heads
    const int64_t all = g.heads + 2 * g.kv_heads;
    if (query->size[2] % all != 0) c.error("packed query's hidden size is not ", all, " heads");
    g.head = query->size[2] / all;
    q = columns(query, 0, g.heads * g.head);
    k = columns(query, g.heads * g.head, g.kv_heads * g.head);
    v = columns(query, (g.heads + g.kv_heads) * g.head, g.kv_heads * g.head);
  }
  g.seqlens = c.input(5);
  if (g.seqlens->dtype != DType::I32 || g.seqlens->size != std::vector<int64_t>{g.batch})
    c.error("seqlens_k must be int32 [", g.batch, "]");
  const std::vector<int64_t> total = c.const_ints(6);
  if (total.size() != 1 || total[0] < g.seq)
    c.error("total_sequence_length must be one value of at least the sequence length ", g.seq);
  g.total = total[0];
  g.first_prompt = g.seq == g.total;
  if (!g.first_prompt && g.seq > 1 && g.batch != 1)
    c.error("a prompt after the first needs batch 1");
  TensorBoxPtr past_k, past_v;
  if (c.has(3) != c.has(4)) c.error("past_key and past_value come together");
  if (c.has(3)) {
    past_k = c.input(3);
    past_v = c.input(4);
    const auto& s = past_k->size;
    for (const TensorBoxPtr& t : {past_k, past_v}) {
      if (t->dtype != DType::F32 || t->size.size() != 4 || t->size[0] != g.batch ||
          t->size[1] != g.kv_heads || t->size[3] != g.head || t->size[2] != s[2])
        c.error("past_key and past_value must be float32 [", g.batch, ", ", g.kv_heads, ", past, ",
                g.head, "]");
    }
    g.past = s[2];
  }
  g.present = std::max(g.total, g.past);
  if (c.node.attr_int("do_rotary", 0) != 0) rotate(c, g, &q, &k);
  const TensorBoxPtr present_k = present_of(c, g, past_k, heads_first(k, g.kv_heads));
  const TensorBoxPtr present_v = present_of(c, g, past_v, heads_first(v, g.kv_heads));
  const double scale = c.node.attr_float("scale", 0.0) != 0.0
                           ? c.node.attr_float("scale", 0.0)
                           : 1.0 / std::sqrt(static_cast<double>(g.head));
  // A window of 0 keys sees nothing: the unfused form says what that gives.
  if (c.node.attr_int("local_window_size", -1) != 0)
    return {fused_gqa(c, g, q, present_k, present_v, scale), present_k, present_v};
  // Scores per kv head: its group of query heads against its keys.
  const TensorBoxPtr qg = grouped(heads_first(q, g.heads), g.kv_heads);
  const TensorBoxPtr scores =
      reshape_view(matmul_extern(c, qg, permute_view(present_k, {0, 1, 3, 2}), scale),
                   {g.batch, g.heads, g.seq, g.present});
  const TensorBoxPtr probs = attention_probs(c, g, masked_scores(c, g, scores));
  const TensorBoxPtr y = matmul_extern(c, grouped(probs, g.kv_heads), present_v, 1.0);
  const TensorBoxPtr out =
      reshape_view(permute_view(reshape_view(y, {g.batch, g.heads, g.seq, g.head}), {0, 2, 1, 3}),
                   {g.batch, g.seq, g.heads * g.head});
  return {out, present_k, present_v};
}

}  // namespace

void register_contrib_gqa_ops(LoweringTable& t) {
  t.add(str_cat(kMicrosoftDomain, ".GroupQueryAttention"), lower_group_query_attention);
}

}  // namespace ferrite
