// The Attention extern, defined by its reference implementation here:
//   inputs = {Q, K, V, [Mask], [KeyLengths], [Sinks]} (the optional ones as the call's
//   "mask", "key_lengths" and "sinks" flags say), outputs = {Y}:
//     Q [B, Hq, Sq, D], K [B, Hkv, Skv, D], V [B, Hkv, Skv, Dv], Mask [B, Hq, Sq, Skv],
//     Y [B, Hq, Sq, Dv]: float32 views of any strides (0 included: a broadcast mask is a
//     view with zero strides), Hkv >= 1 dividing Hq (query head h reads key/value head
//     h / (Hq / Hkv): grouped-query attention); KeyLengths [B] int64 in [0, Skv];
//     Sinks [Hq] float32;
//   floats["scale"] (0 or absent: 1 / sqrt(D)), floats["softcap"] (0: none), ints
//   "causal", "causal_offset", "offset_from_lengths", "left_window", "right_window",
//   "empty_rows_nan"
//   (attention_call.h).
// For each b, h and query i, the keys j in [lo, hi) are visible: with
// off = causal_offset (+ KeyLengths[b] - Sq with offset_from_lengths), j < KeyLengths[b],
// j <= i + off when causal, j >= i + off - left_window and j <= i + off + right_window when
// those are >= 0 (visible_keys). Then
//   s_j = scale * sum_d Q[b,h,i,d] * K[b,h/g,j,d]
//   s_j = softcap * tanh(s_j / softcap)            (softcap > 0)
//   s_j += Mask[b,h,i,j]                           (with a Mask)
//   s_j = -inf for j outside [lo, hi)
//   Y[b,h,i,:] = sum_j e^(s_j) V[b,h/g,j,:] / (sum_j e^(s_j) + e^(Sinks[h]))
// (each step of s_j rounded to float32, scale and softcap being float32 values: a score that
// overflows is infinite, and a row with an infinite score is NaN)
// (no e^(Sinks[h]) term without Sinks: then it is softmax(s) @ V). A row whose scores are
// all -inf (every key masked) gives zeros, as ONNX's Attention defines it, and so does
// Skv = 0 (NaN instead with "empty_rows_nan", as Softmax over such a row gives); a NaN
// score makes its row NaN. A backend computes it without the [Sq x Skv]
// scores (tiles of keys with an online softmax); the reference keeps one row of scores and
// sums in double. Bad operands throw ferrite::Error "Attention: ...".
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "compiler/plan/externs/attention_call.h"
#include "runtime/backend.h"

namespace ferrite {

// One float operand: its first element and its four strides (elements).
struct AttentionOperand {
  const float* data = nullptr;
  int64_t stride[4] = {0, 0, 0, 0};
};

struct AttentionArgs {
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, head = 0, v_head = 0;
  AttentionOperand q, k, v, mask;    // mask.data null: none
  const int64_t* lengths = nullptr;  // KeyLengths[b] at lengths[b * length_stride]
  int64_t length_stride = 0;
  const float* sinks = nullptr;  // Sinks[h] at sinks[h * sink_stride]
  int64_t sink_stride = 0;
  float* y = nullptr;
  int64_t y_stride[4] = {0, 0, 0, 0};
  AttentionCall attrs;
};

// Checks the operands and attributes of `call` against its buffers (key lengths too).
AttentionArgs parse_attention(const ExternCall& call, const ExternBuffer* inputs,
                              const ExternBuffer* outputs);

// Where query i of batch b sits among the keys (i + the result).
inline int64_t query_offset(const AttentionArgs& a, int64_t b) {
  int64_t off = a.attrs.causal_offset;
  if (a.attrs.offset_from_lengths) off += a.lengths[b * a.length_stride] - a.q_len;
  return off;
}

// The keys [lo, hi) that query i of batch b sees (empty: lo >= hi).
inline std::pair<int64_t, int64_t> visible_keys(const AttentionArgs& a, int64_t b, int64_t i) {
  const AttentionCall& c = a.attrs;
  int64_t lo = 0, hi = a.lengths ? a.lengths[b * a.length_stride] : a.kv_len;
  const int64_t at = i + query_offset(a, b);
  if (c.causal) hi = std::min(hi, at + 1);
  if (c.right_window >= 0) hi = std::min(hi, at + c.right_window + 1);
  if (c.left_window >= 0) lo = std::max(lo, at - c.left_window);
  return {lo, hi};
}

void reference_attention(const ExternCall& call, const ExternBuffer* inputs,
                         const ExternBuffer* outputs);

}  // namespace ferrite
