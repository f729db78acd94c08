// Kernel templates: the kernels of a plan compiled once for every value of its symbols
// (docs/shapes.md, step 4). A template is the kernel as scheduled — its indices over the
// symbols (Sym leaves), simplified only by proofs that hold for every value of them — with
// the formula of each loop range and arg size. Instantiating it for the symbols' values
// binds them and simplifies again with the concrete ranges, which recovers what the
// symbols hid (contiguous accesses become affine); normalize_loops then runs on it, as on
// any kernel. The instance is an ordinary Kernel: backends never see a symbol.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/plan/index_expr.h"
#include "compiler/plan/kernel.h"

namespace ferrite {

struct KernelTemplate {
  int32_t kernel = 0;           // the plan's kernel this template instantiates
  Kernel body;                  // its ranges and args' elements at the symbols' hints
  std::vector<Index> ranges;    // per loop: its range over the symbols
  std::vector<Index> elements;  // per arg: its size in elements over the symbols
};

// The template's kernel for symbol values `values` (not normalized). A formula that does
// not evaluate, or a kernel that does not validate, is an Error.
Kernel instantiate_kernel(const KernelTemplate& t, const std::vector<int64_t>& values);

std::string kernel_templates_to_string(const std::vector<KernelTemplate>& templates);

}  // namespace ferrite
