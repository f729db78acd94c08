// The code generator: one x86-64 function per Kernel, from its Layout (kernel_analysis.h).
//
// The function runs a slice of the kernel: `rows` consecutive points of the row odometer
// starting at row_vars, and the vector variable over [vec_begin, vec_end) (the whole
// reduction in LanesInner). The caller (jit_kernel.cc) splits rows, or the vector range,
// across threads; no point's result depends on the split.
//
// Frame: every SSA value has a home slot (one vector) on the stack; values used outside
// the region that computes them, and spilled values, live there. Uniform values keep lane 0
// only. Registers are allocated per region (a straight run of instructions); the innermost
// loop's live-in values are loaded into registers once before the loop when they fit.
// General registers: rbx = position of the vector variable, r12 = its end, rdi/rsi/r8-r11,
// r13-r15, rbp = base pointers of the innermost loop's accesses, rax/rcx/rdx = scratch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "jit/kernel_analysis.h"

namespace ferrite {
namespace jit {

struct JitCall {
  const int64_t* row_vars = nullptr;  // first row: values of Layout::outer_scalar
  const int64_t* row_ptrs = nullptr;  // first row: per access, the address of its element
                                      // with vector/reduce variables 0 and terms left out
  int64_t rows = 0;
  int64_t vec_begin = 0, vec_end = 0;
  // Per access: the addresses of the first and the last element of its arg (for the
  // accesses the analysis checks at run time, Access::checked).
  const uint64_t* bounds = nullptr;
  // Set on failure: the failing CheckIndex instruction + 1 and the index it was given, or
  // the Load + 1 of a checked access and the address it would have read.
  int64_t error_id = 0;
  int64_t error_value = 0;
};
using JitFn = void (*)(JitCall*);

class CompiledCode {
 public:
  virtual ~CompiledCode() = default;
  virtual JitFn fn() const = 0;
  virtual const uint8_t* code() const = 0;
  virtual size_t size() const = 0;
  // The first instruction_bytes() bytes are instructions; the constant pool (vectors
  // read RIP-relative, 64-byte aligned) fills the rest.
  virtual size_t instruction_bytes() const = 0;
};

// Generates and seals (W^X: written, then made read+execute) the function for `layout`.
// Throws ferrite::Error when generation fails (e.g. the code outgrows its buffer).
std::unique_ptr<CompiledCode> generate_kernel(const Layout& layout);

}  // namespace jit
}  // namespace ferrite
