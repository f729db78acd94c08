// Loop normalisation (Inductor's simplify_loops and loop reordering): every kernel is put in
// a canonical loop shape once, in the compiler, so that every backend sees long, contiguous
// innermost loops without analysing the kernel itself. Runs in emit_plan on each kernel.
//
// The result stores the same values at the same elements as the input: Reduce accumulates in
// the same order, and ArgMax/ArgMin's index is unchanged (reduction dims are never
// reordered). Steps that change the order of the outer points run only when the points
// commute (outer_points_commute); a kernel with an out-of-bounds access may then report
// another element than before.
#pragma once

#include <cstdint>

#include "compiler/plan/kernel.h"
#include "compiler/plan/outer_order.h"  // outer_points_commute

namespace ferrite {

struct LoopNormalizeOptions {
  // tile_transpose: the tile (0: off), the least size of the strided load's arg, and the
  // least length of the store-contiguous dim. Without tiles, each row of that dim reads one
  // cache line of the strided load per point; past 512 points (32 KiB of lines, an L1) they
  // are gone before the next row would reuse them. Measured on the portable backend (f32
  // transposes, one core), 64 wins up to 2x on inputs that outgrow L2 with rows past that
  // ([2048, 2048]: 26 -> 14 ms) and ties or loses elsewhere (within 6%); tiles of 16 or 32
  // lose up to 2.7x on small or short-row ones ([56, 56, 64] <- [64, 56, 56]).
  int64_t transpose_tile = 64;
  int64_t transpose_min_bytes = int64_t{1} << 20;
  int64_t transpose_min_row = 513;
};

// merge_loop_dims (compiler/plan/loop_dims.h: drop size-1 dims, merge dims walked as one),
// split_divmod_dims and a merge, reorder_outer_dims and a merge, then tile_transpose when
// options ask for it.
Kernel normalize_loops(const Kernel& validated, const LoopNormalizeOptions& options = {});

// Splits dims that indices take apart with div/mod (a view of a permuted tensor: BERT's
// heads copy reads in[(j % 64) + (j // 64)*8192 + i*64] over [128, 768]). When an index
// divides c*x by D, with q = D / c dividing x's range, x = a*q + b (a outer, b inner, same
// class as x) gives the simplifier (compiler/loopir/simplify.h) what it needs to drop the
// div/mod: [128, 12, 64] reading in[b + a*8192 + i*64]. A split is kept when it lowers the
// number of div/mod nodes, best split first, until none does. The points keep their order
// (row-major over a and b), so this is always legal; a dim a LoopVar reads is not split.
Kernel split_divmod_dims(const Kernel& validated);

// Permutes the outer dims so that the innermost one is where the stores are contiguous
// (stride 1), or failing that where the most loaded bytes are; the other outer dims go in
// the order of the largest store's strides, largest first. Reduction dims stay. Returns k
// as it is when the outer points do not commute.
Kernel reorder_outer_dims(const Kernel& validated);

// Tiling for transposes, in pointwise kernels: when the store is contiguous along the
// innermost dim s and loads are contiguous along another dim l (and strided along s), both
// are split by the tile T (s = s_o*T + s_i, l = l_o*T + l_i) and the T x T tile is walked
// innermost: [..., l_o, ..., s_o, l_i, s_i]. Only loads of args of transpose_min_bytes or
// more count, and only when s has transpose_min_row points or more, T divides both ranges
// (there are no tails), the outer points commute, and no LoopVar reads s or l; otherwise k
// is returned as it is.
Kernel tile_transpose(const Kernel& validated, const LoopNormalizeOptions& options);

}  // namespace ferrite
