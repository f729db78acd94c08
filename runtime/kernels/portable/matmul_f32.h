// The portable backend's MatMul extern (semantics in runtime/kernels/reference/matmul.h), one
// gemm_f32 per batch item with the call's post-ops fused per tile. A constant B (a weight:
// the session says so at prepare time) is packed once for the session; a B shared by every
// batch item (batch strides 0) is packed once per run. Threads go to batch items when there
// are enough of them, else into each product; results are the same for any thread count.
#pragma once

#include <memory>
#include <vector>

#include "runtime/backend.h"

namespace ferrite {

// `call` must outlive the result; `constants` and `packed` as KernelBackend::prepare_extern
// has them. With a `store`, a constant B packed by another session of the model is used
// from it, and one packed here is added.
class PackedStore;
std::unique_ptr<PreparedExtern> prepare_portable_matmul(const ExternCall& call,
                                                        const std::vector<ExternBuffer>& constants,
                                                        const std::vector<PackedInput>& packed,
                                                        int threads, PackedStore* store = nullptr);

// Whether `call` is a one-row product (a GEMV, per batch item) by a constant B: the portable
// GEMM packs such a B to be read as one stream (PackedOperand::row_grouped), at about L3
// bandwidth, and computes no padding columns — on a Zen 4 core the mlp's layers at batch 1
// (784x512, 512x512, 512x10) took 18.7, 12.4 and 1.4 us against oneDNN's 20.0, 13.7 and
// 2.0; 512x200 tied.
bool portable_matmul_streams_weights(const ExternCall& call,
                                     const std::vector<ExternBuffer>& constants);

}  // namespace ferrite
