// Drivers of the block interpreter: walk the rows of the iteration space, evaluate Row
// level values as scalars (exactly as the reference does), and hand each block of lanes
// to the lane-wise ops.
#include "runtime/kernels/portable/block_executor.h"

#include "compiler/plan/interpret.h"

#include <algorithm>

#include "runtime/kernels/portable/block_lanes.h"

namespace ferrite {
namespace portable {

BlockExecutor::BlockExecutor(const Kernel& validated) : p_(build_program(validated)) {
  const size_t n = p_.k.code.size();
  vars_.assign(p_.k.ranges.size(), 0);
  uval_.assign(n, scalar_i64(0));
  uival_.assign(n, 0);
  slots_ = aligned_alloc_bytes(static_cast<size_t>(std::max(p_.num_slots, 1)) * kSlotBytes);
  idx_ = aligned_alloc_bytes(static_cast<size_t>(p_.index_depth) * kSlotBytes);
  partials_.resize(n);
  acc_.resize(n);
  best_.resize(n);
  sum32_.resize(n);
  sum64_.resize(n);
  // Broadcasts fill the lanes a block can use, rounded up to the widest vector (the f32
  // loops read whole vectors).
  const int64_t lanes = p_.lane_var >= 0 ? p_.k.ranges[p_.lane_var] : 1;
  const int64_t used = std::max<int64_t>(1, std::min<int64_t>(p_.block, lanes));
  fill_ = static_cast<int>(std::min<int64_t>(kBlock, (used + 63) / 64 * 64));
  // Const values touch no memory and cannot fail: computed (and broadcast) once, here.
  eval_row(p_.consts);
}

void BlockExecutor::run(void* const* args) {
  const Kernel& k = p_.k;
  for (size_t a = 0; a < k.args.size(); ++a) {
    const size_t align = dtype_size(k.args[a].dtype);
    if (reinterpret_cast<uintptr_t>(args[a]) % align != 0)
      fail("kernel '", k.name, "': arg ", a, " is not aligned to its ", align, "-byte elements");
  }
  args_ = args;
  if (k.num_reduce == 0) {
    run_pointwise();
  } else if (p_.lanes_outer) {
    run_lanes_outer_reduce();
  } else {
    run_lanes_inner_reduce();
  }
}

bool BlockExecutor::next(int lo, int hi) {
  for (int d = hi - 1; d >= lo; --d) {
    if (++vars_[d] < p_.k.ranges[d]) return true;
    vars_[d] = 0;
  }
  return false;
}

void BlockExecutor::eval_row(const std::vector<int>& ids) {
  for (int i : ids) {
    eval_scalar(i);
    if (p_.info[i].broadcast) broadcast(i);
  }
}

void BlockExecutor::eval_lanes(const std::vector<int>& ids) {
  for (int i : ids) eval_lane(i);
}

void BlockExecutor::run_pointwise() {
  const Kernel& k = p_.k;
  for (int64_t r : k.ranges)
    if (r == 0) return;
  const int lane = p_.lane_var;  // -1: a kernel without dims is one point
  const int64_t n = lane >= 0 ? k.ranges[lane] : 1;
  const LoopLists& body = p_.loops[0];
  std::fill(vars_.begin(), vars_.end(), 0);
  do {
    eval_row(body.row);
    for (j0_ = 0; j0_ < n; j0_ += p_.block) {
      len_ = static_cast<int>(std::min<int64_t>(p_.block, n - j0_));
      eval_lanes(body.lane);
    }
  } while (next(0, std::max(lane, 0)));
}

// Lanes along the innermost reduction dim: per outer point, each inner loop sweeps every
// row of the reduction in blocks and folds them into its accumulators, whose results are
// then scalars for the later loops; then the post phase runs as scalars.
void BlockExecutor::run_lanes_inner_reduce() {
  const Kernel& k = p_.k;
  const int outer = k.num_outer(), lane = p_.lane_var;
  for (int d = 0; d < outer; ++d)
    if (k.ranges[d] == 0) return;
  bool empty = false;
  for (int d = outer; d <= lane; ++d) empty |= k.ranges[d] == 0;
  std::fill(vars_.begin(), vars_.end(), 0);
  do {
    for (const LoopLists& loop : p_.loops) {
      init_reduces(loop.reduces);
      if (!empty) sweep_rows(loop);
      finish_reduces(loop.reduces);
    }
    eval_row(p_.post_row);
  } while (next(0, outer));
}

// One inner loop, lanes-inner: every row of the reduction dims in blocks along the lanes
// (the reduction vars end back at 0).
void BlockExecutor::sweep_rows(const LoopLists& loop) {
  const int outer = p_.k.num_outer(), lane = p_.lane_var;
  const int64_t n = p_.k.ranges[lane];
  int64_t row = 0;
  do {
    eval_row(loop.row);
    for (j0_ = 0; j0_ < n; j0_ += p_.block) {
      len_ = static_cast<int>(std::min<int64_t>(p_.block, n - j0_));
      reduce_index_ = row * n + j0_;
      eval_lanes(loop.lane);
      if (--blocks_to_leaf_ == 0) push_block_leaves(loop.reduces);
    }
    ++row;
  } while (next(outer, lane));
}

// Lanes along the innermost outer dim: one accumulator per lane, each inner loop walks the
// reduction point by point (the reference's order), and the post phase is vectorized like
// the body.
void BlockExecutor::run_lanes_outer_reduce() {
  const Kernel& k = p_.k;
  const int outer = k.num_outer(), dims = static_cast<int>(k.ranges.size());
  const int lane = p_.lane_var;
  for (int d = 0; d < outer; ++d)
    if (k.ranges[d] == 0) return;
  bool empty = false;
  for (int d = outer; d < dims; ++d) empty |= k.ranges[d] == 0;
  std::fill(vars_.begin(), vars_.end(), 0);
  do {
    for (j0_ = 0; j0_ < k.ranges[lane]; j0_ += p_.block) {
      len_ = static_cast<int>(std::min<int64_t>(p_.block, k.ranges[lane] - j0_));
      for (const LoopLists& loop : p_.loops) {
        init_reduces(loop.reduces);
        reduce_index_ = 0;
        while (!empty) {
          eval_row(loop.row);
          eval_lanes(loop.lane);
          ++reduce_index_;
          if (reduce_index_ % kPairwiseLeaf == 0) push_outer_leaves(loop.reduces, false);
          if (!next(outer, dims)) break;
        }
        push_outer_leaves(loop.reduces, true);
      }
      eval_row(p_.post_row);
      eval_lanes(p_.post_lane);
    }
  } while (next(0, lane));
}

int64_t BlockExecutor::scalar_index(const Instr& in) {
  const int64_t idx = eval_index(*in.index, vars_.data(), uival_.data());
  if (idx < 0 || idx >= p_.k.args[in.arg].elements) out_of_bounds(in, idx);
  return idx;
}

void BlockExecutor::out_of_bounds(const Instr& in, int64_t index) const {
  fail("kernel '", p_.k.name, "': ", op_name(in.op), " of arg ", in.arg, " at element ", index,
       " is outside its ", p_.k.args[in.arg].elements, " elements");
}

void BlockExecutor::eval_scalar(int i) {
  const Kernel& k = p_.k;
  const Instr& in = k.code[i];
  Scalar r = scalar_i64(0);
  switch (in.op) {
    case Op::Load:
      if (in.mask < 0 || uval_[in.mask].b) {
        r = load_element(k.args[in.arg].dtype, args_[in.arg], scalar_index(in));
      } else {
        r = make_const(in.type, 0, 0);
      }
      break;
    case Op::Store:
      store_element(k.args[in.arg].dtype, args_[in.arg], scalar_index(in), in.type, uval_[in.a]);
      return;
    case Op::LoopVar:
      r = scalar_i64(vars_[in.arg]);
      break;
    case Op::Reduce:
      fail("kernel '", k.name, "': internal: Reduce evaluated as a scalar");
    default:
      r = eval_instr(k, in, uval_.data());
  }
  uval_[i] = r;
  uival_[i] = in.type == ScalarType::I64 ? r.i64 : 0;
}

void BlockExecutor::broadcast(int i) {
  with_lane_type(p_.k.code[i].type, [&](auto tag) {
    using T = decltype(tag);
    T v;
    unpack(uval_[i], &v);
    std::fill_n(slot<T>(i), fill_, v);
  });
}

}  // namespace portable
}  // namespace ferrite
