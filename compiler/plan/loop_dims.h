// Rewrites of a kernel's loop dimensions. merge_loop_dims keeps the order in which the
// points of the iteration space run, so it is always legal; the compiler's loop
// normalisation (compiler/schedule/loop_normalize.h) runs it on every kernel, and the portable
// backend runs it again on kernels it loads (a plan from elsewhere, a hand-built kernel),
// where it is a no-op for kernels the compiler already normalised.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/plan/kernel.h"
#include "compiler/plan/linear_index.h"

namespace ferrite {

// Drops size-1 dims (an index variable becomes 0, a LoopVar of the dim becomes Const 0) and
// merges adjacent dims of one class (both outer or both reduction) that every index walks as
// one: in every linear form of every index (linear_index.h; operands of div/mod included)
// coeff[d] == coeff[d+1] * range[d+1]. A dim read by a LoopVar is never merged (its value
// would have to be rebuilt by div/mod instructions). Merged reduction dims keep their
// row-major order, so Reduce accumulates in the same order and ArgMax/ArgMin's linear index
// is unchanged; a reduction kernel keeps at least one reduction dim. A kernel with an empty
// dim is returned as it is.
Kernel merge_loop_dims(const Kernel& validated);

// A new set of loop dims for a kernel. Coefficient vectors map through `coeff`
// (linear_index.h: map_coefficients); loop_var[v] is the new variable holding old variable
// v's value, kZeroVar when old variable v is always 0 (its LoopVar becomes Const 0), or
// kNoLoopVar when its value is no single new variable (a LoopVar of it is an error). The
// caller proves that every index keeps its value at every point and orders the points as it
// wants; remap_dims only rewrites.
constexpr int kZeroVar = -1;
constexpr int kNoLoopVar = -2;
struct DimMap {
  std::vector<int64_t> ranges;
  int num_reduce = 0;
  CoeffMap coeff;             // per old variable
  std::vector<int> loop_var;  // per old variable
};

// The kernel over m's dims, validated. Fails ("internal") when a LoopVar reads a variable
// mapped to kNoLoopVar.
Kernel remap_dims(const Kernel& validated, const DimMap& m);

// The linear forms of every Load/Store index of k, one per instruction (empty forms for the
// other instructions).
std::vector<LinearForm> index_forms(const Kernel& k);

// Per loop variable: whether some LoopVar instruction reads it.
std::vector<bool> loop_var_uses(const Kernel& k);

}  // namespace ferrite
