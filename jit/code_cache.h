// The process-wide cache of generated code, keyed by a kernel's structure (everything the
// code depends on: dims, args, instructions, indices, constants bit for bit; not its name
// or messages) and the ISA. Identical kernels (a repeated layer, the same plan loaded twice)
// share one function.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "compiler/plan/kernel.h"
#include "jit/cpu_isa.h"
#include "jit/kernel_codegen.h"

namespace ferrite {
namespace jit {

std::string kernel_structure_key(const Kernel& k, Isa isa);

// The cached code for `key`, or make() stored under it. Thread-safe.
std::shared_ptr<const CompiledCode> cached_code(
    const std::string& key, const std::function<std::unique_ptr<CompiledCode>()>& make,
    bool* reused);

// The keys the cache holds (those of code some kernel still holds, and up to as many again
// of code freed since the last pruning).
size_t cached_code_keys();

}  // namespace jit
}  // namespace ferrite
