// The order of a kernel's outer points: whether it may change, and the kernel with its outer
// dims permuted. The compiler's loop normalisation (compiler/schedule/loop_normalize.h) puts
// the store-contiguous dim innermost; the portable backend puts a long dim innermost where
// the store-contiguous one is too short to fill its blocks (block_program.cc).
#pragma once

#include <vector>

#include "compiler/plan/kernel.h"

namespace ferrite {

// True when the outer points of k may run in any order: every arg that k stores is accessed
// only through affine indices with the same coefficients on the outer dims, which place the
// elements of different outer points apart (so no point reads or writes an element another
// point writes), and k has no CheckIndex (its failing point would change).
bool outer_points_commute(const Kernel& validated);

// The kernel with its outer dims in `order` (order[new position] = old dim; reduction dims
// stay). The caller proves the outer points commute (outer_points_commute).
Kernel permute_outer_dims(const Kernel& validated, const std::vector<int>& order);

}  // namespace ferrite
