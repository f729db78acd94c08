// The portable backend's prepared kernel: runs a BlockProgram (block_program.h). The drivers
// and scalar (Row level) evaluation are in block_executor.cc, the lane-wise value ops in
// block_lane_ops.cc, loads/stores/indices in block_memory.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/plan/pairwise_sum.h"
#include "compiler/plan/scalar_ops.h"
#include "runtime/backend.h"
#include "runtime/kernels/portable/block_program.h"
#include "runtime/tensor.h"

namespace ferrite {
namespace portable {

// Throws the CheckIndex failure: "<messages[in.arg]>: index v out of range [-n, n)".

class BlockExecutor : public PreparedKernel {
 public:
  explicit BlockExecutor(const Kernel& validated);
  void run(void* const* args) override;

 private:
  // Drivers, one per iteration shape.
  void run_pointwise();
  void run_lanes_inner_reduce();
  void run_lanes_outer_reduce();
  void sweep_rows(const LoopLists& loop);
  bool next(int lo, int hi);  // odometer over vars_[lo, hi); false when it wraps
  void eval_row(const std::vector<int>& ids);
  void eval_lanes(const std::vector<int>& ids);

  // Row level: one scalar, as the reference computes it.
  void eval_scalar(int i);
  int64_t scalar_index(const Instr& in);
  void broadcast(int i);

  // Lane level (block_lane_ops.cc).
  void eval_lane(int i);
  void lane_unary(int i);
  void lane_binary(int i);
  void lane_cast(int i);
  void lane_where(int i);
  void lane_check(int i);
  void lane_reduce(int i);
  void init_reduces(const std::vector<int>& reduces);
  // Lanes-inner: the results of `reduces` become Row values (broadcast where Lane
  // instructions of later loops read them).
  void finish_reduces(const std::vector<int>& reduces);
  // Float Sums add pairwise (pairwise_sum.h). Lanes-inner: the f32 partials (the lanes
  // reduce_f32 uses) become a leaf every leaf_blocks_ blocks, about kPairwiseLeaf adds in a
  // row per lane (f64 sums lane by lane, as the reference). Lanes-outer: each lane's sum
  // every kPairwiseLeaf points; finish adds the leaves into the lanes.
  bool pairwise(int i) const;
  void push_block_leaves(const std::vector<int>& reduces);
  void push_outer_leaves(const std::vector<int>& reduces, bool finish);

  // Lane memory access (block_memory.cc).
  void lane_load(int i);
  void lane_store(int i);
  // Affine index of the block: element of lane l is *start + l * *stride. False when
  // the computation overflows int64.
  bool affine_start(const AffineIndex& f, int64_t* start, int64_t* stride) const;
  // Index of every lane into idx_ (wrapping arithmetic; the caller checks bounds).
  const int64_t* lane_indices(const LaneIndex& li);
  [[noreturn]] void out_of_bounds(const Instr& in, int64_t index) const;

  template <class T>
  T* slot_at(int slot_number) {
    return reinterpret_cast<T*>(slots_.get() + static_cast<size_t>(slot_number) * kSlotBytes);
  }
  template <class T>
  T* slot(int id) {
    return slot_at<T>(p_.info[id].slot);
  }

  static constexpr size_t kSlotBytes = kBlock * sizeof(int64_t);

  BlockProgram p_;
  void* const* args_ = nullptr;
  std::vector<int64_t> vars_;
  std::vector<Scalar> uval_;    // Row/Const values
  std::vector<int64_t> uival_;  // their i64 view, for index Value leaves
  AlignedBytes slots_;
  AlignedBytes idx_;  // index evaluation stack: index_depth x kBlock
  int64_t j0_ = 0;    // the block: lane l is lane variable j0_ + l
  int len_ = 0;
  int fill_ = kBlock;         // lanes a broadcast or an accumulator reset fills
  int64_t reduce_index_ = 0;  // linear reduction index of lane 0 (lanes-inner: of the row)
  // Lanes-inner reductions: per Reduce, vector partials (f32 Sum/Prod/Max/Min) or a
  // scalar accumulator with the best index (everything else).
  std::vector<std::vector<float>> partials_;
  std::vector<Scalar> acc_;
  std::vector<int64_t> best_;
  std::vector<PairwiseSum<float>> sum32_;         // per float32 Sum
  std::vector<PairwiseSum<double>> sum64_;        // per float64 Sum
  int64_t leaf_blocks_ = 1, blocks_to_leaf_ = 1;  // lanes-inner: blocks per leaf, until the next
};

}  // namespace portable
}  // namespace ferrite
