// The portable "Attention" extern (contract: reference/attention.h) on float32, without the
// [Sq x Skv] scores, as FlashAttention computes it: each part of the work is one batch,
// head and block of up to 64 query rows; it walks the keys in tiles of up to 256, computes
// a tile of scores with the GEMM (gemm_f32.h, any strides: Q, K and V are read where they
// lie, [B, S, H, D] views included), applies softcap, mask and causality, and folds the
// tile into each row's running maximum, sum and output (the online softmax: a new maximum
// rescales what was summed before), then multiplies the tile's probabilities by V's tile
// into the output. Scratch per part is 64 x 256 scores and two 64 x Dv tiles, whatever
// the sequence length. Key tiles wholly above a causal diagonal are skipped. Parts are
// fixed by the shapes, so results do not depend on the thread count.
#pragma once

#include <memory>

#include "runtime/backend.h"

namespace ferrite {

std::unique_ptr<PreparedExtern> prepare_portable_attention(const ExternCall& call, int threads);

}  // namespace ferrite
