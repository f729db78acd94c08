// The portable backend's analysis of a Kernel: a vectorized interpreter plan, computed once
// at prepare time. One loop variable is the "lane" variable: the interpreter walks it in
// blocks of up to kBlock points and runs each instruction as one loop over the block (a
// Highway loop for f32). Every SSA value gets a level:
//   Const - no loop variable and no memory: computed once, at prepare time;
//   Row   - fixed while only the lane variable moves: computed once per row, as a scalar;
//   Lane  - varies along the lane variable: computed per block, in a block slot.
// Uniform values feeding Lane instructions are broadcast into a slot once per row.
//
// Pointwise kernels use the innermost dim as the lane variable. Reduction kernels either
// do the same (lanes run along the reduction, accumulated in vector partials) or, when
// that reduction is short or strided and the innermost outer dim is contiguous, put the
// lanes on the innermost outer dim and walk the reduction sequentially with one
// accumulator per lane (then the post phase is vectorized too). Both give the reference's
// results; sums may differ by reassociation in the first mode only.
//
// A kernel with several inner loops (Kernel::loop_ends) gets one pair of instruction lists
// per loop. Lanes-inner: per outer point, each loop sweeps the reduction in blocks; its
// Reduce results are then Row values for later loops (broadcast where Lane instructions
// read them). Lanes-outer: per block of outer lanes, each loop walks the reduction in
// order; its per-lane accumulators are the Lane values later loops read.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/plan/index_expr.h"
#include "compiler/plan/kernel.h"

namespace ferrite {
namespace portable {

// Lanes per block. A multiple of every vector width (SVE's 2048 bits included).
constexpr int kBlock = 256;

enum class Level : uint8_t { Const = 0, Row = 1, Lane = 2 };

// A Lane-level index compiled for lane-wise evaluation, in postfix order.
struct IndexStep {
  enum Kind : uint8_t { Const, LaneVar, Uniform, Value, Add, Mul, FloorDiv, Mod };
  Kind kind = Const;
  int64_t c = 0;                    // Const
  int32_t id = 0;                   // Value: a Lane-level SSA value
  const IndexNode* node = nullptr;  // Uniform: a subtree without lane dependence
};

struct LaneIndex {
  bool affine = false;
  AffineIndex form;              // affine: offset + sum(coeff[v] * var_v)
  std::vector<IndexStep> steps;  // otherwise
  int depth = 0;                 // evaluation stack depth of `steps`
};

struct InstrInfo {
  Level level = Level::Const;
  int slot = -1;  // block slot: Lane values and broadcast uniforms
  bool broadcast = false;
  int index = -1;     // Lane Load/Store: into BlockProgram::indices
  int acc_slot = -1;  // lanes-outer ArgMax/ArgMin: the running extremum per lane
};

// One inner loop of the body (a pointwise kernel has one), in program order.
struct LoopLists {
  std::vector<int> row, lane;  // by level; the Reduces are in `lane`
  std::vector<int> reduces;
};

struct BlockProgram {
  Kernel k;                  // after merge_loop_dims (compiler/plan/loop_dims.h)
  int lane_var = -1;         // -1 for a kernel without dims
  bool lanes_outer = false;  // reduction with lanes on the innermost outer dim
  std::vector<InstrInfo> info;
  std::vector<LaneIndex> indices;
  std::vector<int> consts;               // Const level, any phase
  std::vector<LoopLists> loops;          // the body's inner loops
  std::vector<int> post_row, post_lane;  // post phase (lanes-inner: all in post_row)
  int num_slots = 0;
  int index_depth = 1;
  // Lanes per block: kBlock, or 1 when a load may see a store of the kernel in another
  // order than the reference's (hazard_loads: a read-modify-write such as a scatter-add may
  // depend on an earlier point's store; one lane at a time keeps the point order).
  int block = kBlock;
};

BlockProgram build_program(const Kernel& validated);

// Per instruction of k: a load that may see one of k's stores in another order once blocks
// of lanes run each instruction over many points (lanes on the innermost outer dim when
// lanes_outer, else on the innermost dim). A load and a store in one phase (inner loop or
// post) that may touch one element are a hazard; in different phases they are not, since
// phases run in order per outer point (with lanes_outer: when no two lanes of a block can
// touch one element through them).
std::vector<bool> hazard_loads(const Kernel& validated, bool lanes_outer);

}  // namespace portable
}  // namespace ferrite
