// The kernels of a symbolic compile before instantiation (compiler/schedule/
// kernel_template.h): Kernels whose indices may hold Sym leaves. Only the compiler builds
// them; a plan, and so every backend, holds none (validate_kernel rejects them).
#pragma once

#include "compiler/plan/kernel.h"

namespace ferrite {

// validate_kernel's rules, but for Sym leaves in indices, which are allowed.
void validate_kernel_over_symbols(const Kernel& k);

}  // namespace ferrite
