// Attention and RotaryEmbedding.
//
// Attention (opset 23, 24): scaled dot-product attention over [batch, heads, seq, head_size]
// tensors (or [batch, seq, heads * head_size], split by the head-count attributes), with a
// mask (boolean, or float added to the scores), causal masking, past keys and values
// concatenated in front of the new ones, grouped-query heads, a softcap, and per-batch key
// lengths (nonpad_kv_seqlen, 24) and a window of keys around each query (25). As the operator's
// function body defines it:
//   scores = scale * Q @ K^T                    qk_matmul_output_mode 0
//   capped = softcap * tanh(scores / softcap)   mode 1 (softcap > 0; else the scores)
//   biased = capped + bias                      mode 2
//   probs  = softmax(biased), 0 on a row whose bias is -inf everywhere   mode 3
//   Y      = probs @ V
// Query head h reads key/value head h / (q_heads / kv_heads). The two products are MatMul
// externs over [batch, kv_heads, group, ...] views, so the keys and values are never
// repeated per query head; the softcap is the first product's epilogue, and the bias, the
// softmax and the fully-masked-row rule fuse into the softmax's kernel.
#include <cmath>
#include <limits>

#include "compiler/lower/fused_attention.h"
#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

bool output_used(const LowerCtx& c, size_t i) {
  return i < c.node.outputs.size() && c.node.outputs[i] && c.gl.uses(c.node.outputs[i]) > 0;
}

// [B, S, H*D] → [B, H, S, D].
TensorBoxPtr split_heads(const LowerCtx& c, const TensorBoxPtr& t, int64_t heads,
                         const char* what) {
  const auto& s = t->size;
  if (heads <= 0) c.error("3-D inputs need q_num_heads and kv_num_heads (> 0)");
  if (s[2] % heads != 0) c.error(what, "'s hidden size ", s[2], " is not divisible by ", heads);
  return permute_view(reshape_view(t, {s[0], s[1], heads, s[2] / heads}), {0, 2, 1, 3});
}

// [B, H, S, D] → [B, KVH, H / KVH, S, D]: the query heads of each key/value head.
TensorBoxPtr group_heads(const TensorBoxPtr& t, int64_t kv_heads) {
  const auto& s = t->size;
  return reshape_view(t, {s[0], kv_heads, s[1] / kv_heads, s[2], s[3]});
}

// [B, KVH, T, D] → [B, KVH, 1, T, D], broadcast over the group.
TensorBoxPtr shared_by_group(const TensorBoxPtr& t) {
  const auto& s = t->size;
  return reshape_view(t, {s[0], s[1], 1, s[2], s[3]});
}

// The additive bias over [Bb, Hb, S, T] (Bb, Hb: 1 where nothing varies along them): the
// mask (a bool as 0 / -inf; columns past its last dim are -inf), the causal rule (key j is
// seen from query i when j <= i + offset), and the per-batch key lengths.
struct BiasParts {
  TensorBoxPtr mask;    // rank <= 4, broadcast to [B, H, S, Tm]; null if none
  TensorBoxPtr nonpad;  // [B] int64; null if none
  bool causal = false;
  int64_t left = -1, right = -1;  // opset 25's window around a query's position; -1: none
  int64_t past = 0;               // the causal offset with past keys
  bool past_given = false;        // with neither past keys nor nonpad: offset 0
};

TensorBoxPtr make_bias(const LowerCtx& c, const BiasParts& p, int64_t batch, int64_t heads,
                       int64_t s_len, int64_t t_len) {
  int64_t bb = p.nonpad ? batch : 1, hb = 1, tm = t_len;
  // One row for every query when nothing depends on the query (a padding mask).
  const size_t mrank = p.mask ? p.mask->size.size() : 0;
  const bool per_query =
      p.causal || p.left >= 0 || p.right >= 0 || (mrank >= 2 && p.mask->size[mrank - 2] != 1);
  const int64_t rows = per_query ? s_len : 1;
  std::vector<int64_t> msize;
  if (p.mask) {
    msize = p.mask->size;
    if (msize.empty() || msize.size() > 4) c.error("attn_mask must have rank 1 to 4");
    tm = msize.back();
    if (tm > t_len) {
      c.error("attn_mask's last dim ", tm, " is longer than the ", t_len, " keys");
    }
    const size_t lead = 4 - msize.size();
    const std::vector<int64_t> want{batch, heads, s_len, t_len};
    for (size_t d = 0; d + 1 < msize.size(); ++d) {
      const int64_t w = want[lead + d];
      if (msize[d] != 1 && msize[d] != w) {
        c.error("attn_mask dim ", d, " is ", msize[d], " where the attention has ", w);
      }
      if (lead + d == 0 && msize[d] != 1) bb = batch;
      if (lead + d == 1 && msize[d] != 1) hb = heads;
    }
  }
  const std::vector<int64_t> size{bb, hb, rows, t_len};
  const BiasParts parts = p;
  Loader fn = [parts, msize, tm, s_len](KernelBuilder& b, const std::vector<Index>& idx) {
    const V ninf = b.constant(ScalarType::F32, -std::numeric_limits<double>::infinity());
    const V zero = b.constant(ScalarType::F32, 0);
    const V j = b.index_value(idx[3]);
    V bias = zero;
    if (parts.mask) {
      // Columns past the mask's are masked; inside, the mask's value at the broadcast index.
      V inside = b.binary(Op::Lt, j, b.constant_i64(tm));
      std::vector<Index> mi(msize.size());
      const size_t lead = 4 - msize.size();
      for (size_t d = 0; d < msize.size(); ++d) {
        mi[d] = msize[d] == 1 ? ix_const(0) : idx[lead + d];
      }
      V m;
      {
        MaskScope scope(b, inside);
        m = parts.mask->load(b, mi);
      }
      if (m.type == ScalarType::Bool) m = b.where(m, zero, ninf);
      bias = b.where(inside, m, ninf);
    }
    V ok;
    bool any = false;
    auto both = [&](V x) {
      ok = any ? b.binary(Op::And, ok, x) : x;
      any = true;
    };
    V limit;  // keys [0, limit) of this batch entry are real
    if (parts.nonpad) {
      limit = parts.nonpad->load(b, {idx[0]});
      both(b.binary(Op::Lt, j, limit));
    }
    if (parts.causal || parts.left >= 0 || parts.right >= 0) {
      // Query i sits at key position i + offset: after the past keys, or (with per-batch
      // lengths and no past) at the end of this entry's keys.
      V offset = b.constant_i64(parts.past);
      if (!parts.past_given && parts.nonpad) {
        offset = b.binary(Op::Sub, limit, b.constant_i64(s_len));
      }
      const V diff = b.binary(Op::Sub, b.binary(Op::Add, b.index_value(idx[2]), offset), j);
      const V zero_i = b.constant_i64(0);
      if (parts.causal) both(b.binary(Op::Ge, diff, zero_i));
      if (parts.left >= 0) both(b.binary(Op::Le, diff, b.constant_i64(parts.left)));
      if (parts.right >= 0) {
        both(b.binary(Op::Ge, diff, b.constant_i64(-parts.right)));
      }
    }
    if (any) bias = b.where(ok, bias, ninf);
    return bias;
  };
  return make_pointwise_box(DType::F32, size, fn, c.origin() + " bias");
}

// Q, K and V as [B, H, S, D] (3-D inputs split by the head-count attributes), checked to
// fit together; returns the inputs' rank.
size_t read_qkv(LowerCtx& c, TensorBoxPtr* q, TensorBoxPtr* k, TensorBoxPtr* v) {
  *q = c.input(0);
  *k = c.input(1);
  *v = c.input(2);
  for (const TensorBoxPtr* t : {q, k, v}) {
    if ((*t)->dtype != DType::F32) {
      c.unsupported("Attention on ", dtype_name((*t)->dtype), " (float32 only)");
    }
  }
  const size_t rank = (*q)->size.size();
  if (rank != 3 && rank != 4) c.error("Q must be 3-D or 4-D, got ", rank, "-D");
  if ((*k)->size.size() != rank || (*v)->size.size() != rank) {
    c.error("Q, K and V must have the same rank");
  }
  const int64_t q_heads_attr = c.node.attr_int("q_num_heads", 0);
  const int64_t kv_heads_attr = c.node.attr_int("kv_num_heads", 0);
  if (rank == 3) {
    if ((*q)->size[0] != (*k)->size[0] || (*q)->size[0] != (*v)->size[0]) {
      c.error("Q, K and V must have the same batch size");
    }
    *q = split_heads(c, *q, q_heads_attr, "Q");
    *k = split_heads(c, *k, kv_heads_attr, "K");
    *v = split_heads(c, *v, kv_heads_attr, "V");
  }
  const auto &qs = (*q)->size, &ks = (*k)->size, &vs = (*v)->size;
  if (ks[0] != qs[0] || vs[0] != qs[0]) c.error("Q, K and V differ in batch size");
  if (vs[1] != ks[1]) c.error("K and V differ in head count");
  if (ks[3] != qs[3]) c.error("K's head size ", ks[3], " is not Q's ", qs[3]);
  if (ks[2] != vs[2]) c.error("K and V differ in sequence length");
  if (ks[1] <= 0 || qs[1] % ks[1] != 0) {
    c.error("Q's ", qs[1], " heads are not a multiple of K's and V's ", ks[1]);
  }
  if (q_heads_attr > 0 && rank == 4 && q_heads_attr != qs[1]) {
    c.error("q_num_heads ", q_heads_attr, " but Q has ", qs[1], " heads");
  }
  if (kv_heads_attr > 0 && rank == 4 && kv_heads_attr != ks[1]) {
    c.error("kv_num_heads ", kv_heads_attr, " but K has ", ks[1], " heads");
  }
  return rank;
}

// The mask, past keys and values (concatenated in front of K and V), key lengths and the
// causal and window attributes.
BiasParts read_bias(LowerCtx& c, TensorBoxPtr* k, TensorBoxPtr* v) {
  const int64_t batch = (*k)->size[0], kv_heads = (*k)->size[1];
  const int64_t dq = (*k)->size[3], dv = (*v)->size[3];
  BiasParts bias;
  if (c.has(4) != c.has(5)) c.error("past_key and past_value come together");
  if (c.has(4)) {
    const TensorBoxPtr &pk = c.input(4), &pv = c.input(5);
    auto fits = [&](const TensorBoxPtr& t, int64_t last) {
      const auto& s = t->size;
      return t->dtype == DType::F32 && s.size() == 4 && s[0] == batch && s[1] == kv_heads &&
             s[3] == last;
    };
    if (!fits(pk, dq)) c.error("past_key must be float32 [batch, kv_heads, past, head_size]");
    if (!fits(pv, dv)) c.error("past_value must be float32 [batch, kv_heads, past, v_size]");
    if (pk->size[2] != pv->size[2]) c.error("past_key and past_value differ in length");
    bias.past = pk->size[2];
    bias.past_given = true;
    *k = concat_values(c.gl, {pk, *k}, 2, c.origin());
    *v = concat_values(c.gl, {pv, *v}, 2, c.origin());
  }
  if (c.has(3)) {
    bias.mask = c.input(3);
    if (bias.mask->dtype != DType::Bool && bias.mask->dtype != DType::F32) {
      c.error("attn_mask must be bool or Q's type, got ", dtype_name(bias.mask->dtype));
    }
  }
  if (c.has(6)) {
    bias.nonpad = c.input(6);
    if (bias.nonpad->dtype != DType::I64 || bias.nonpad->size != std::vector<int64_t>{batch}) {
      c.error("nonpad_kv_seqlen must be int64 [", batch, "]");
    }
  }
  bias.causal = c.node.attr_int("is_causal", 0) != 0;
  bias.left = c.node.attr_int("left_window_size", -1);
  bias.right = c.node.attr_int("right_window_size", -1);
  if (bias.left < -1 || bias.right < -1) c.error("window sizes must be >= -1");
  return bias;
}

std::vector<TensorBoxPtr> lower_attention(LowerCtx& c) {
  TensorBoxPtr q, k, v;
  const size_t rank = read_qkv(c, &q, &k, &v);
  const int64_t batch = q->size[0], heads = q->size[1], s_len = q->size[2], dq = q->size[3];
  const int64_t kv_heads = k->size[1], dv = v->size[3];
  const BiasParts bias = read_bias(c, &k, &v);
  const int64_t t_len = k->size[2];
  const int64_t mode = c.node.attr_int("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) c.error("qk_matmul_output_mode must be 0..3, got ", mode);
  const bool want_qk = output_used(c, 3);
  const double softcap = c.node.attr_float("softcap", 0.0);
  const double scale = c.node.has_attr("scale") ? c.node.attr_float("scale", 1.0)
                                                : 1.0 / std::sqrt(static_cast<double>(dq));
  // One fused extern unless the scores are read. Query i sits at key i + past, or (with
  // key lengths and no past) at the end of its batch entry's keys.
  if (!want_qk) {
    FusedAttention f;
    f.q = q;
    f.k = k;
    f.v = v;
    f.scale = scale;
    f.softcap = softcap;
    f.causal = bias.causal;
    f.causal_offset = bias.past;
    f.left_window = bias.left;
    f.right_window = bias.right;
    f.key_lengths = bias.nonpad;
    f.offset_from_lengths = bias.nonpad && !bias.past_given;
    if (bias.mask) {
      BiasParts mask_only;
      mask_only.mask = bias.mask;
      f.bias = make_bias(c, mask_only, batch, heads, s_len, t_len);
    }
    return {fused_attention(c, f, rank == 3), k, v, nullptr};
  }

  // scores over [B, KVH, group, S, T]; seen as [B, H, S, T].
  auto cap = [&c, softcap](const TensorBoxPtr& x) {
    return make_pointwise(c, {x}, x->dtype, [softcap](KernelBuilder& b, const std::vector<V>& a) {
      const V s = b.constant(a[0].type, softcap);
      return b.binary(Op::Mul, b.unary(Op::Tanh, b.binary(Op::Div, a[0], s)), s);
    });
  };
  const bool capped = softcap > 0;
  const bool cap_in_epilogue = capped && !(want_qk && mode == 0);
  TensorBoxPtr scores5 =
      matmul_extern(c, group_heads(q, kv_heads), permute_view(shared_by_group(k), {0, 1, 2, 4, 3}),
                    scale, cap_in_epilogue ? EpiloguePost(cap) : nullptr);
  const std::vector<int64_t> st{batch, heads, s_len, t_len};
  TensorBoxPtr raw = reshape_view(scores5, st);
  TensorBoxPtr after_cap = capped && !cap_in_epilogue ? cap(raw) : raw;

  const bool any_bias =
      bias.mask || bias.causal || bias.nonpad || bias.left >= 0 || bias.right >= 0;
  TensorBoxPtr biased = after_cap, probs;
  if (any_bias) {
    TensorBoxPtr b4 = make_bias(c, bias, batch, heads, s_len, t_len);
    biased = make_pointwise(
        c, {after_cap, b4}, DType::F32,
        [](KernelBuilder& b, const std::vector<V>& a) { return b.binary(Op::Add, a[0], a[1]); });
    TensorBoxPtr row_max = make_reduction(c, b4, {3}, true, ReduceKind::Max, DType::F32);
    TensorBoxPtr sm = softmax_over(c, biased, 3, false);
    probs =
        make_pointwise(c, {row_max, sm}, DType::F32, [](KernelBuilder& b, const std::vector<V>& a) {
          const V ninf = b.constant(a[0].type, -std::numeric_limits<double>::infinity());
          return b.where(b.binary(Op::Eq, a[0], ninf), b.constant(a[1].type, 0), a[1]);
        });
  } else {
    probs = softmax_over(c, biased, 3, false);
  }

  TensorBoxPtr y5 = matmul_extern(c, group_heads(probs, kv_heads), shared_by_group(v), 1.0);
  TensorBoxPtr y = reshape_view(y5, {batch, heads, s_len, dv});
  if (rank == 3) y = reshape_view(permute_view(y, {0, 2, 1, 3}), {batch, s_len, heads * dv});

  std::vector<TensorBoxPtr> out{y, k, v, nullptr};
  if (want_qk) out[3] = mode == 0 ? raw : mode == 1 ? after_cap : mode == 2 ? biased : probs;
  return out;
}

// FlexAttention (ai.onnx.preview 1): softmax((Q s) @ (K s)^T) @ V over rank-4 inputs, s the
// square root of scale (1 / sqrt(head_size) by default) as the function body applies it to
// both operands, with the score_mod subgraph applied to the scores [B, H, L, S] and the
// prob_mod subgraph to the probabilities, each inlined where it stands (fused like any other
// code). Query head h reads key/value head h / (q_heads / kv_heads), as in Attention.
std::vector<TensorBoxPtr> lower_flex_attention(LowerCtx& c) {
  const TensorBoxPtr &q = c.input(0), &k = c.input(1), &v = c.input(2);
  const DType dt = q->dtype;
  if ((dt != DType::F32 && dt != DType::F64) || k->dtype != dt || v->dtype != dt)
    c.unsupported("inputs of type ", dtype_name(dt), " (float32, float64, float16, bfloat16)");
  const auto &qs = q->size, &ks = k->size, &vs = v->size;
  if (qs.size() != 4 || ks.size() != 4 || vs.size() != 4) c.error("Q, K and V must be 4-D");
  if (ks[0] != qs[0] || vs[0] != qs[0]) c.error("Q, K and V differ in batch size");
  if (vs[1] != ks[1] || vs[2] != ks[2]) c.error("K and V differ in heads or sequence length");
  if (ks[3] != qs[3]) c.error("K's head size ", ks[3], " is not Q's ", qs[3]);
  if (ks[1] <= 0 || qs[1] % ks[1] != 0)
    c.error("Q's ", qs[1], " heads are not a multiple of K's and V's ", ks[1]);
  const double scale = c.node.has_attr("scale") ? c.node.attr_float("scale", 1.0)
                                                : 1.0 / std::sqrt(static_cast<double>(qs[3]));
  const float root = std::sqrt(static_cast<float>(scale));
  auto scaled = [&c, root, dt](const TensorBoxPtr& t) {
    return make_pointwise(c, {t}, dt, [root](KernelBuilder& b, const std::vector<V>& a) {
      return b.binary(Op::Mul, a[0], b.constant(a[0].type, root));
    });
  };
  auto modified = [&c](const char* attr, TensorBoxPtr t) {
    const auto it = c.node.attrs.find(attr);
    if (it == c.node.attrs.end() || !it->second.g) return t;
    const std::vector<TensorBoxPtr> out = c.gl.lower_subgraph(*it->second.g, {t}, c.node);
    if (out.size() != 1 || !out[0] || out[0]->size != t->size || out[0]->dtype != t->dtype)
      c.error(attr, " must give one tensor of its input's type and shape");
    return out[0];
  };
  const int64_t kv_heads = ks[1];
  const TensorBoxPtr scores5 =
      matmul_extern(c, group_heads(scaled(q), kv_heads),
                    permute_view(shared_by_group(scaled(k)), {0, 1, 2, 4, 3}), 1.0);
  const TensorBoxPtr scores =
      modified("score_mod", reshape_view(scores5, {qs[0], qs[1], qs[2], ks[2]}));
  const TensorBoxPtr probs = modified("prob_mod", softmax_over(c, scores, 3, false));
  const TensorBoxPtr y5 = matmul_extern(c, group_heads(probs, kv_heads), shared_by_group(v), 1.0);
  return {reshape_view(y5, {qs[0], qs[1], qs[2], vs[3]})};
}

// RotaryEmbedding (23): rotates the first rotary_embedding_dim entries of each head in
// pairs (x1, x2) by the angle whose cos and sin the caches hold for the token's position:
// (cos x1 - sin x2, sin x1 + cos x2). Pairs are the two halves of the rotated part, or
// neighbours when interleaved. X is [B, H, S, D], or [B, S, H * D] with num_heads.
}  // namespace

TensorBoxPtr rotary_embedding(const LowerCtx& c, const RotarySpec& spec) {
  const TensorBoxPtr& x = spec.x;
  const TensorBoxPtr &cos_cache = spec.cos, &sin_cache = spec.sin;
  if (!dtype_is_float(x->dtype)) c.unsupported("non-float input");
  const size_t rank = x->size.size();
  TensorBoxPtr xv;  // [B, S, H, D]
  if (rank == 4) {
    xv = permute_view(x, {0, 2, 1, 3});
  } else if (rank == 3) {
    const int64_t heads = spec.num_heads;
    if (heads <= 0) c.error("a 3-D input needs num_heads > 0");
    if (x->size[2] % heads != 0) {
      c.error("hidden size ", x->size[2], " is not divisible by num_heads ", heads);
    }
    xv = reshape_view(x, {x->size[0], x->size[1], heads, x->size[2] / heads});
  } else {
    c.error("input must be 3-D or 4-D, got ", rank, "-D");
  }
  const int64_t batch = xv->size[0], seq = xv->size[1], head = xv->size[3];
  int64_t rot = spec.rot;
  if (rot == 0) rot = head;
  if (rot < 0 || rot > head || rot % 2 != 0) {
    c.error("rotary_embedding_dim ", rot, " must be even and at most the head size ", head);
  }
  const int64_t half = rot / 2;
  const bool interleaved = spec.interleaved;
  const TensorBoxPtr& pos_ids = spec.positions;
  for (const TensorBoxPtr* t : {&cos_cache, &sin_cache}) {
    const auto& s = (*t)->size;
    if ((*t)->dtype != x->dtype) c.error("cos_cache and sin_cache must be of X's type");
    if (pos_ids ? s.size() != 2 : s != std::vector<int64_t>{batch, seq, half}) {
      c.error(pos_ids ? "with position_ids, the caches must be [max_position, "
                      : "the caches must be [batch, seq, ",
              half, "], got ", TensorType{(*t)->dtype, s, {}, true}.to_string());
    }
    if (pos_ids && s[1] != half) c.error("the caches' last dim must be ", half);
  }
  if (pos_ids &&
      (pos_ids->dtype != DType::I64 || pos_ids->size != std::vector<int64_t>{batch, seq})) {
    c.error("position_ids must be int64 [", batch, ", ", seq, "]");
  }
  if (pos_ids && cos_cache->size[0] != sin_cache->size[0]) {
    c.error("cos_cache and sin_cache differ in length");
  }
  const int64_t positions = pos_ids ? cos_cache->size[0] : 0;
  const std::string msg = c.origin() + ": position_ids holds a position outside the caches";
  Loader fn = [=](KernelBuilder& b, const std::vector<Index>& idx) {
    const Index& d = idx[3];
    const V dv = b.index_value(d);
    // The pair's entry in the caches, and where its two halves are.
    const Index i = interleaved ? ix_mod(ix_floordiv(d, 2), half) : ix_mod(d, half);
    const Index d1 = interleaved ? ix_mul(i, 2) : i;
    const Index d2 = interleaved ? ix_add(d1, ix_const(1)) : ix_add(i, ix_const(half));
    std::vector<Index> at{idx[0], idx[1], idx[2], d1};
    const V x1 = xv->load(b, at);
    at[3] = d2;
    const V x2 = xv->load(b, at);
    std::vector<Index> ci{idx[0], idx[1], i};
    if (pos_ids) {
      const V p = b.check_index(pos_ids->load(b, {idx[0], idx[1]}), positions, msg);
      ci = {ix_value(p.id), i};
    }
    const V co = cos_cache->load(b, ci), si = sin_cache->load(b, ci);
    const V real = b.binary(Op::Sub, b.binary(Op::Mul, co, x1), b.binary(Op::Mul, si, x2));
    const V imag = b.binary(Op::Add, b.binary(Op::Mul, si, x1), b.binary(Op::Mul, co, x2));
    const V first = interleaved ? b.binary(Op::Eq, b.index_value(ix_mod(d, 2)), b.constant_i64(0))
                                : b.binary(Op::Lt, dv, b.constant_i64(half));
    V out = b.where(first, real, imag);
    if (rot < head) {
      out = b.where(b.binary(Op::Lt, dv, b.constant_i64(rot)), out, xv->load(b, idx));
    }
    return out;
  };
  TensorBoxPtr y = make_pointwise_box(x->dtype, xv->size, fn, c.origin());
  return rank == 4 ? permute_view(y, {0, 2, 1, 3}) : reshape_view(y, x->size);
}

namespace {

std::vector<TensorBoxPtr> lower_rotary(LowerCtx& c) {
  RotarySpec spec;
  spec.x = c.input(0);
  spec.cos = c.input(1);
  spec.sin = c.input(2);
  spec.positions = c.has(3) ? c.input(3) : nullptr;
  spec.num_heads = c.node.attr_int("num_heads", 0);
  spec.rot = c.node.attr_int("rotary_embedding_dim", 0);
  spec.interleaved = c.node.attr_int("interleaved", 0) != 0;
  return {rotary_embedding(c, spec)};
}

}  // namespace

void register_attention_ops(LoweringTable& t) {
  t.add("Attention", lower_attention);
  t.add("RotaryEmbedding", lower_rotary);
  t.add("ai.onnx.preview.FlexAttention", lower_flex_attention);
}

}  // namespace ferrite
