// The portable backend: Kernels run on the block interpreter (block_program.h), vectorized
// with Highway, so the same code is fast on ARM (NEON/SVE), in the browser (WASM SIMD128)
// and on any x86 (dynamic dispatch to SSE4/AVX2/AVX-512). No code is generated at run
// time. Externs: a Highway GEMM for MatMul, GEMM-based and direct convolutions for Conv and
// ConvTranspose, CSR segment reductions, a float32 ScatterElements; the other ops run their
// reference implementation.
#pragma once

#include <memory>
#include <string>

#include "runtime/backend.h"

namespace ferrite {

// options.threads: threads each MatMul / Conv may use (OpenMP; one in wasm).
std::unique_ptr<KernelBackend> make_portable_backend(const BackendOptions& options = {});

// The Highway target chosen on this machine, e.g. "AVX3" or "WASM" (for reports).
const char* portable_target_name();

}  // namespace ferrite
