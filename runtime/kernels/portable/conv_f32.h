// The portable backend's Conv and ConvTranspose (semantics in
// runtime/kernels/reference/conv.h), on gemm_f32 and the Highway loops of conv_simd_f32.h:
//   1x1, stride 1, unpadded Conv   one GEMM per image and group, W @ X straight on X;
//   depthwise Conv                 a direct vectorized loop per channel;
//   3x3 stride-1 2-D Conv          Winograd F(2x2, 3x3) with 8+ channels each way and a
//                                  constant W: 16 GEMMs over transformed tiles (2.25x fewer
//                                  multiply-adds), the weights transformed and packed once;
//   any other Conv                 an implicit GEMM per image and group: W @ im2col(X), the
//                                  im2col matrix never materialized. Kernels larger than 1x1
//                                  pack its panels with plain copies from a padded,
//                                  phase-split copy of X (the windows layout of
//                                  conv_simd_f32.h) when that pays for the columns it
//                                  computes between output rows; otherwise, and for strided
//                                  1x1, they are packed straight from X;
//   ConvTranspose                  GEMM W^T X into columns, then col2im adds them into Y.
// The bias and the post-ops (ExternCall::post_ops) are applied while each output block is in
// cache: per GEMM tile, per depthwise output row (the bias seeds the sums there); after
// col2im, per image. Post-op operands whose spatial strides do not flatten into one (rare)
// are applied after the whole op instead, by the reference walk.
// A constant W (the session says so at prepare time) is packed once, per group. Operands
// that are not dense views (a transposed or sliced X, say) are first copied into dense
// scratch. Scratch memory is sized from the call's shapes at prepare time and taken from the
// session's shared arena (PreparedExtern::scratch_bytes). Threads split each GEMM's columns
// and the depthwise channels; results do not depend on the thread count.
#pragma once

#include <memory>
#include <vector>

#include "runtime/backend.h"

namespace ferrite {

class PackedStore;

// The prepared form; `call` (op "Conv" or "ConvTranspose") must outlive it. Checks the
// call's shapes now and throws ferrite::Error naming the op. With a `store`, a constant W
// packed by another session of the model is used from it, and one packed here is added.
std::unique_ptr<PreparedExtern> prepare_portable_conv(const ExternCall& call,
                                                      const std::vector<ExternBuffer>& constants,
                                                      const std::vector<PackedInput>& packed,
                                                      int threads, PackedStore* store = nullptr);

}  // namespace ferrite
