// The "jit" backend: every Kernel the code generator handles becomes x86 machine code at
// prepare time (jit/kernel_analysis.h, kernel_codegen.h); the others run on the portable
// backend. MatMul, Conv and ConvTranspose run on oneDNN (runtime/kernels/dnnl) when it takes
// the call, the other externs on the portable backend. Native x86 builds register it
// (register_jit_backend) and make it the default; BackendOptions::isa (or FERRITE_ISA) picks
// AVX-512 or AVX2, and a CPU without AVX2 gets the portable backend under this name.
#pragma once

#include <memory>
#include <string>

#include "compiler/plan/kernel.h"
#include "runtime/backend.h"

namespace ferrite {
namespace jit {

std::unique_ptr<KernelBackend> make_jit_backend(const BackendOptions& options);
// Adds "jit" to the backend registry (idempotent).
void register_jit_backend();

// Why the JIT would leave `k` to the portable backend under `isa` ("" when it compiles it):
// for tests, dumps and coverage reports.
std::string jit_refusal(const Kernel& k, const std::string& isa);

// Compiled functions, over the process: each distinct kernel structure (and ISA) is
// generated once. `failed`: kernels the analysis accepted whose code generation then failed
// (they ran on the portable backend): always a code generator bug, which tests assert away.
struct JitCacheStats {
  int64_t compiled = 0, reused = 0, failed = 0;
};
JitCacheStats jit_cache_stats();

}  // namespace jit
}  // namespace ferrite
