// The portable backend's Conv and ConvTranspose (semantics in
// runtime/kernels/reference/conv.h), on gemm_f32 and the Highway loops of conv_simd_f32.h:
//   1x1, stride 1, unpadded Conv   one GEMM per image and group, straight on X;
//   depthwise Conv                 a direct vectorized loop per channel;
//   any other Conv                 im2col of a chunk of output rows, then a GEMM, per image
//                                  and group;
//   ConvTranspose                  GEMM W^T X into columns, then col2im adds them into Y.
// Bias is added to the finished output (depthwise: it seeds the accumulation). Operands that
// are not dense views (a transposed or sliced X, say) are first copied into dense scratch.
// All scratch memory (im2col columns, dense copies) is sized from the call's shapes and
// allocated once, when the extern is prepared.
#pragma once

#include <memory>

#include "runtime/backend.h"

namespace ferrite {

// The prepared form, which owns its scratch; `call` (op "Conv" or "ConvTranspose") must
// outlive it. Checks the call's shapes now and throws ferrite::Error naming the op.
std::unique_ptr<PreparedExtern> prepare_portable_conv(const ExternCall& call);

// One-shot forms (ExternFn) that allocate their scratch per call.
void portable_conv(const ExternCall& call, const ExternBuffer* inputs, const ExternBuffer* outputs);
void portable_conv_transpose(const ExternCall& call, const ExternBuffer* inputs,
                             const ExternBuffer* outputs);

}  // namespace ferrite
