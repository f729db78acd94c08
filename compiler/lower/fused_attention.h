// Attention as one "Attention" extern (its meaning: runtime/kernels/reference/attention.h):
// what ONNX's Attention, com.microsoft's Attention, MultiHeadAttention and
// GroupQueryAttention, and the plain-op pattern (fuse_attention.cc) lower to when nothing
// but their output is read. Backends compute it in tiles of keys with an online softmax,
// so no [S x T] score matrix is ever stored.
#pragma once

#include <cstdint>

#include "compiler/lower/lowering.h"

namespace ferrite {

struct FusedAttention {
  TensorBoxPtr q, k, v;  // float32 [B, Hq, S, D], [B, Hkv, T, D], [B, Hkv, T, Dv]; any views
  // Added to the scores: float32 of rank 4, each dim 1 (broadcast) or the full
  // [B, Hq, S, T]; null: none. Realized at its own size, never expanded.
  TensorBoxPtr bias;
  TensorBoxPtr key_lengths;  // int64 [B]: batch entry b sees keys [0, key_lengths[b]); or null
  TensorBoxPtr sinks;        // float32 [Hq]: a softmax sink per head; or null
  double scale = 1, softcap = 0;
  // Query i sits at key position i + causal_offset (+ key_lengths[b] - S with
  // offset_from_lengths); causal hides the keys after it, the windows (-1: none) those more
  // than left_window before or right_window after it.
  bool causal = false, offset_from_lengths = false;
  bool empty_rows_nan = false;  // a row that sees no key: NaN (Softmax's), not zeros
  int64_t causal_offset = 0, left_window = -1, right_window = -1;
};

// Y as [B, Hq, S, Dv], or, with `heads_last`, as [B, S, Hq * Dv] (the extern writes the
// heads interleaved, so the usual transpose back costs nothing).
TensorBoxPtr fused_attention(const LowerCtx& c, const FusedAttention& f, bool heads_last);

// ferrite.Attention (graph/ferrite_ops.h): the extern when its operands fit it, else its
// ferrite_unfused subgraph.
void register_fused_attention_ops(LoweringTable& t);

}  // namespace ferrite
