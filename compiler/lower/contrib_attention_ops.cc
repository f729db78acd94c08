// com.microsoft MultiHeadAttention and Attention, as onnxruntime's ContribOperators
// documentation and CPU kernels define them. MultiHeadAttention, for separate query
// [B, S, H * D], key [B, L, H * D] and value
// [B, L, H * Dv] (the packed and BNSH layouts are refused, naming the input):
//   q, k, v  = inputs (+ their parts of `bias`), split into heads; past keys and values
//              [B, H, P, D] in front of k and v (present_key, present_value)
//   scores   = scale * q k^T  (+ attention_bias [B or 1, H or 1, S, T])
//              + mask_filter_value where key_padding_mask hides the key (int32: [B] key
//              lengths, or [B, T] / [B, S, T] with 0 for hidden) or, with unidirectional,
//              where the key is after the query (its position P + i)
//   output   = softmax(scores) v, heads merged back: [B, S, H * Dv]
// The mask is additive, as onnxruntime's (mask_filter_value, -10000 by default), so a row
// with every key hidden averages them rather than giving zeros.
#include <cmath>

#include "compiler/lower/fused_attention.h"
#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

// [B, S, H * D] → [B, H, S, D]
TensorBoxPtr heads_first(const LowerCtx& c, const TensorBoxPtr& t, int64_t heads,
                         const char* what) {
  const auto& s = t->size;
  if (t->dtype != DType::F32) c.unsupported("MultiHeadAttention on ", dtype_name(t->dtype));
  if (s.size() != 3) {
    c.unsupported(what, " of rank ", s.size(), " (only the [batch, sequence, hidden] layout)");
  }
  if (s[2] % heads != 0) c.error(what, "'s hidden size ", s[2], " is not divisible by ", heads);
  return permute_view(reshape_view(t, {s[0], s[1], heads, s[2] / heads}), {0, 2, 1, 3});
}

// t + bias[offset, offset + t's last dim)
TensorBoxPtr plus_bias(const LowerCtx& c, const TensorBoxPtr& t, const TensorBoxPtr& bias,
                       int64_t offset) {
  if (!bias) return t;
  const int64_t n = t->size.back();
  TensorBoxPtr part = make_view(bias, {n}, [offset](const std::vector<Index>& i) {
    return std::vector<Index>{ix_add(i[0], ix_const(offset))};
  });
  return make_pointwise(c, {t, part}, t->dtype, [](KernelBuilder& b, const std::vector<V>& v) {
    return b.binary(Op::Add, v[0], v[1]);
  });
}

// The additive mask over [Bm, 1, S, T]: mask_filter_value where the key is hidden.
// With `starts` (Attention's mask_index), a [2B] mask is each batch's end positions and then
// its start positions: keys before the start are hidden too.
TensorBoxPtr key_mask(const LowerCtx& c, const TensorBoxPtr& mask, bool causal, int64_t past,
                      int64_t batch, int64_t s_len, int64_t t_len, double filter,
                      bool starts = false) {
  int mode = 0;  // 1: key lengths [B]; 2: [B, T]; 3: [B, S, T]; 4: ends and starts [2B]
  const char* what = starts ? "mask_index" : "key_padding_mask";
  if (mask) {
    if (mask->dtype != DType::I32) c.error(what, " must be int32");
    const auto& m = mask->size;
    if (m == std::vector<int64_t>{batch}) {
      mode = 1;
    } else if (starts && m == std::vector<int64_t>{2 * batch}) {
      mode = 4;
    } else if (m == std::vector<int64_t>{batch, t_len}) {
      mode = 2;
    } else if (m == std::vector<int64_t>{batch, s_len, t_len}) {
      mode = 3;
    } else {
      c.unsupported(what, " of shape ", TensorType{mask->dtype, m, {}, true}.to_string(),
                    " (only [B], ", starts ? "[2B], " : "", "[B, ", t_len, "] and [B, ", s_len,
                    ", ", t_len, "])");
    }
  }
  // One row for every query unless the mask or causality depends on the query.
  const int64_t rows = mode == 3 || causal ? s_len : 1;
  Loader fn = [mask, mode, causal, past, filter, batch](KernelBuilder& b,
                                                        const std::vector<Index>& i) {
    const V j = b.index_value(i[3]);
    V hidden = b.constant(ScalarType::Bool, 0);
    if (mode == 1 || mode == 4) {
      const V len = b.cast(mask->load(b, {i[0]}), ScalarType::I64);
      hidden = b.binary(Op::Ge, j, len);
      if (mode == 4) {
        const V start = b.cast(mask->load(b, {ix_add(i[0], ix_const(batch))}), ScalarType::I64);
        hidden = b.binary(Op::Or, hidden, b.binary(Op::Lt, j, start));
      }
    } else if (mode >= 2) {
      const std::vector<Index> at =
          mode == 2 ? std::vector<Index>{i[0], i[3]} : std::vector<Index>{i[0], i[2], i[3]};
      hidden = b.binary(Op::Eq, b.cast(mask->load(b, at), ScalarType::I64), b.constant_i64(0));
    }
    if (causal) {
      const V pos = b.binary(Op::Add, b.index_value(i[2]), b.constant_i64(past));
      hidden = b.binary(Op::Or, hidden, b.binary(Op::Gt, j, pos));
    }
    const V zero = b.constant(ScalarType::F32, 0);
    return b.where(hidden, b.constant(ScalarType::F32, filter), zero);
  };
  return make_pointwise_box(DType::F32, {mode ? batch : 1, 1, rows, t_len}, fn, c.origin());
}

// What the two attention ops share, from q, k, v split into heads ([B, H, S or L, D or Dv]):
// past keys and values ([B, H, P, D], inputs past_k and past_v when given) in front of k and
// v, scale * q k^T, the additive key mask (`mask`, input `mask_input`: key_mask) and
// attention_bias (input `bias_input`), softmax, times v, heads merged back, all but the past
// in one fused Attention extern (fused_attention.h). Returns the output [B, S, H * Dv] and
// the keys and values with the past ([B, H, T, D or Dv]).
struct Attended {
  TensorBoxPtr y, k, v;
};
Attended attend(LowerCtx& c, const TensorBoxPtr& q, TensorBoxPtr k, TensorBoxPtr v,
                const TensorBoxPtr& past_k, const TensorBoxPtr& past_v, size_t mask_input,
                size_t bias_input, bool mask_starts) {
  const int64_t batch = q->size[0], heads = q->size[1], s_len = q->size[2], d = q->size[3],
                dv = v->size[3];
  if (k->size[0] != batch || v->size[0] != batch) c.error("query, key and value differ in batch");
  if (k->size[3] != d) c.error("key's head size ", k->size[3], " is not query's ", d);
  if (k->size[2] != v->size[2]) c.error("key and value differ in sequence length");
  int64_t past = 0;
  if (past_k) {
    auto fits = [&](const TensorBoxPtr& t, int64_t last) {
      const auto& s = t->size;
      return t->dtype == DType::F32 && s.size() == 4 && s[0] == batch && s[1] == heads &&
             s[3] == last && s[2] == past_k->size[2];
    };
    if (past_k->size.size() != 4 || !fits(past_k, d) || !fits(past_v, dv)) {
      c.error("the past keys and values must be float32 [batch, num_heads, past, head_size]");
    }
    past = past_k->size[2];
    k = concat_values(c.gl, {past_k, k}, 2, c.origin());
    v = concat_values(c.gl, {past_v, v}, 2, c.origin());
  }
  const int64_t t_len = k->size[2];
  const double scale = c.node.attr_float("scale", 0.0) != 0.0
                           ? c.node.attr_float("scale", 0.0)
                           : 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<TensorBoxPtr> terms;
  const bool causal = c.node.attr_int("unidirectional", 0) != 0;
  if (c.has(mask_input) || causal) {
    terms.push_back(key_mask(c, c.has(mask_input) ? c.input(mask_input) : nullptr, causal, past,
                             batch, s_len, t_len, c.node.attr_float("mask_filter_value", -10000.0),
                             mask_starts));
  }
  if (c.has(bias_input)) {
    const TensorBoxPtr& ab = c.input(bias_input);
    const auto& s = ab->size;
    if (ab->dtype != DType::F32 || s.size() != 4 || (s[0] != 1 && s[0] != batch) ||
        (s[1] != 1 && s[1] != heads) || s[2] != s_len || s[3] != t_len) {
      c.error("attention_bias must be float32 [batch or 1, num_heads or 1, ", s_len, ", ", t_len,
              "]");
    }
    terms.push_back(ab);
  }
  FusedAttention f;
  f.q = q;
  f.k = k;
  f.v = v;
  f.scale = scale;
  if (terms.size() == 1) f.bias = terms[0];
  if (terms.size() == 2) {
    f.bias = make_pointwise(c, terms, DType::F32, [](KernelBuilder& b, const std::vector<V>& x) {
      return b.binary(Op::Add, x[0], x[1]);
    });
  }
  return {fused_attention(c, f, true), k, v};
}

int64_t num_heads(const LowerCtx& c) {
  const int64_t heads = c.node.attr_int("num_heads", 0);
  if (heads <= 0) c.error("num_heads must be positive");
  return heads;
}

std::vector<TensorBoxPtr> lower_multi_head_attention(LowerCtx& c) {
  const int64_t heads = num_heads(c);
  if (!c.has(1) || !c.has(2)) {
    c.unsupported("packed query/key/value (only separate query, key and value inputs)");
  }
  const TensorBoxPtr &query = c.input(0), &key = c.input(1), &value = c.input(2);
  const TensorBoxPtr bias = c.has(3) ? c.input(3) : nullptr;
  const int64_t dq = query->size.size() == 3 ? query->size[2] : 0;
  const int64_t dkey = key->size.size() == 3 ? key->size[2] : 0;
  const int64_t dval = value->size.size() == 3 ? value->size[2] : 0;
  if (bias && (bias->dtype != DType::F32 || bias->size != std::vector<int64_t>{dq + dkey + dval})) {
    c.error("bias must be float32 [", dq + dkey + dval, "]");
  }
  TensorBoxPtr q = heads_first(c, plus_bias(c, query, bias, 0), heads, "query");
  TensorBoxPtr k = heads_first(c, plus_bias(c, key, bias, dq), heads, "key");
  TensorBoxPtr v = heads_first(c, plus_bias(c, value, bias, dq + dkey), heads, "value");
  if (c.has(6) != c.has(7)) c.error("past_key and past_value come together");
  const Attended a = attend(c, q, k, v, c.has(6) ? c.input(6) : nullptr,
                            c.has(7) ? c.input(7) : nullptr, 4, 5, false);
  return {a.y, a.k, a.v};
}

// com.microsoft Attention (BERT's, as onnxruntime's transformer optimizer writes it): input
// [B, S, Din] times weights [Din, Dq + Dk + Dv] (qkv_hidden_sizes, else three equal parts)
// plus bias, split into query, key and value, then MultiHeadAttention's steps with
// mask_index ([B] end positions, [2B] ends then starts, [B, T] or [B, S, T] with 0 for
// hidden keys) and past ([2, B, H, P, D]: keys, values); present is [2, B, H, T, D].
std::vector<TensorBoxPtr> lower_attention(LowerCtx& c) {
  const int64_t heads = num_heads(c);
  for (const char* attr : {"do_rotary", "past_present_share_buffer"}) {
    if (c.node.attr_int(attr, 0) != 0) c.unsupported(attr);
  }
  if (c.has(6)) c.unsupported("past_sequence_length (a past sharing present's buffer)");
  const TensorBoxPtr &x = c.input(0), &w = c.input(1);
  const TensorBoxPtr bias = c.has(2) ? c.input(2) : nullptr;
  if (x->dtype != DType::F32 || x->size.size() != 3) c.error("input must be float32 [B, S, D]");
  if (w->dtype != DType::F32 || w->size.size() != 2 || w->size[0] != x->size[2]) {
    c.error("weights must be float32 [", x->size[2], ", hidden sizes]");
  }
  std::vector<int64_t> parts = c.node.attr_ints("qkv_hidden_sizes", {});
  if (parts.empty()) {
    if (w->size[1] % 3 != 0) c.error("weights' ", w->size[1], " columns are not three equal parts");
    parts.assign(3, w->size[1] / 3);
  }
  if (parts.size() != 3 || parts[0] != parts[1] || parts[0] <= 0 || parts[2] <= 0 ||
      parts[0] + parts[1] + parts[2] != w->size[1]) {
    c.error(
        "qkv_hidden_sizes must be 3 positive sizes (query's and key's equal) adding up to "
        "weights' ",
        w->size[1], " columns");
  }
  if (bias && (bias->dtype != DType::F32 || bias->size != std::vector<int64_t>{w->size[1]})) {
    c.error("bias must be float32 [", w->size[1], "]");
  }
  TensorBoxPtr qkv = plus_bias(c, matmul_extern(c, x, w, 1.0), bias, 0);
  auto part = [&](int64_t offset, int64_t n, const char* what) {
    const TensorBoxPtr t =
        make_view(qkv, {x->size[0], x->size[1], n}, [offset](const std::vector<Index>& i) {
          return std::vector<Index>{i[0], i[1], ix_add(i[2], ix_const(offset))};
        });
    return heads_first(c, t, heads, what);
  };
  const TensorBoxPtr q = part(0, parts[0], "query"), k = part(parts[0], parts[1], "key"),
                     v = part(2 * parts[0], parts[2], "value");
  TensorBoxPtr past_k, past_v;
  if (c.has(4)) {
    const TensorBoxPtr& past = c.input(4);
    if (past->size.size() != 5 || past->size[0] != 2) {
      c.error("past must be [2, batch, num_heads, past, head_size]");
    }
    auto half = [&past](int64_t which) {
      std::vector<int64_t> s(past->size.begin() + 1, past->size.end());
      return make_view(past, s, [which](const std::vector<Index>& i) {
        return std::vector<Index>{ix_const(which), i[0], i[1], i[2], i[3]};
      });
    };
    past_k = half(0);
    past_v = half(1);
  }
  const Attended a = attend(c, q, k, v, past_k, past_v, 3, 5, true);
  if (c.node.outputs.size() < 2 || !c.node.outputs[1]) return {a.y};
  if (parts[2] != parts[0]) c.error("present needs value's hidden size equal to key's");
  auto one = [](const TensorBoxPtr& t) {
    std::vector<int64_t> s{1};
    s.insert(s.end(), t->size.begin(), t->size.end());
    return reshape_view(t, s);
  };
  return {a.y, concat_values(c.gl, {one(a.k), one(a.v)}, 0, c.origin())};
}

}  // namespace

void register_contrib_attention_ops(LoweringTable& t) {
  t.add(str_cat(kMicrosoftDomain, ".MultiHeadAttention"), lower_multi_head_attention);
  t.add(str_cat(kMicrosoftDomain, ".Attention"), lower_attention);
}

}  // namespace ferrite
