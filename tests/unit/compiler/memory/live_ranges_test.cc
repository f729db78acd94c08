// Live ranges from step uses, and assign_pool_offsets on a whole Plan: the result passes
// validate_plan and temps that are live together get disjoint bytes.
#include "compiler/memory/live_ranges.h"

#include <gtest/gtest.h>

#include "compiler/plan/error.h"

namespace ferrite {
namespace {

TEST(LiveRangesTest, FirstAndLastUse) {
  std::vector<StepUses> steps = {{{}, {0}}, {{0}, {1}}, {{0, 1}, {2}}, {{2}, {}}};
  std::vector<LiveBuffer> r = live_ranges({10, 20, 30, 40}, steps);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].bytes, 10);
  EXPECT_EQ(r[0].first, 0);
  EXPECT_EQ(r[0].last, 2);
  EXPECT_EQ(r[1].first, 1);
  EXPECT_EQ(r[1].last, 2);
  EXPECT_EQ(r[2].first, 2);
  EXPECT_EQ(r[2].last, 3);
  EXPECT_EQ(r[3].first, 0);  // never used: [0, 0]
  EXPECT_EQ(r[3].last, 0);
  EXPECT_THROW(live_ranges({10}, {{{1}, {}}}), Error);
  EXPECT_THROW(live_ranges({10}, {{{}, {-1}}}), Error);
}

// A chain of four pointwise kernels in -> a -> b -> c -> out, each kernel "copy".
Plan chain_plan() {
  Kernel copy;
  copy.name = "copy";
  copy.ranges = {100};
  copy.args = {{DType::F32, 100, false}, {DType::F32, 100, true}};
  Instr ld;
  ld.op = Op::Load;
  ld.arg = 0;
  ld.index = ix_var(0);
  Instr st;
  st.op = Op::Store;
  st.a = 0;
  st.arg = 1;
  st.index = ix_var(0);
  copy.code = {ld, st};
  copy.post_begin = 2;
  Plan p;
  const char* names[5] = {"in", "a", "b", "c", "out"};
  for (int i = 0; i < 5; ++i) {
    PlanBuffer b;
    b.name = names[i];
    b.shape = {100};
    b.kind = i == 0 ? BufferKind::Input : i == 4 ? BufferKind::Output : BufferKind::Temp;
    p.buffers.push_back(b);
  }
  p.kernels = {copy};
  for (int i = 0; i < 4; ++i) {
    Step s;
    s.index = 0;
    s.buffers = {i, i + 1};
    p.steps.push_back(s);
  }
  p.inputs = {0};
  p.outputs = {4};
  return p;
}

TEST(LiveRangesTest, AssignPoolOffsetsOnAPlan) {
  Plan p = chain_plan();
  // Without in-place reuse: a [0,1], b [1,2], c [2,3], 448 bytes each after rounding: a and
  // c share, b does not.
  TempMemory plain = plan_temp_memory(p, false);
  EXPECT_EQ(plain.temps, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_TRUE(plain.in_place.empty());
  EXPECT_EQ(plain.pool.lower_bound, 2 * 448);
  EXPECT_EQ(plain.pool.pool_bytes, 2 * 448);
  EXPECT_EQ(plain.pool.offsets[0], plain.pool.offsets[2]);
  EXPECT_NE(plain.pool.offsets[0], plain.pool.offsets[1]);
  EXPECT_EQ(plain.live_bytes, (std::vector<int64_t>{448, 896, 896, 448}));
  EXPECT_EQ(plain.peak_step, 1);
  // With it (what assign_pool_offsets does): a -> b at step 1 and b -> c at step 2 are
  // in-place pairs, so the chain lives in one 448-byte slot.
  PoolPlan pool = assign_pool_offsets(&p).pool;
  EXPECT_NO_THROW(validate_plan(p));
  EXPECT_EQ(pool.lower_bound, 448);
  EXPECT_EQ(p.pool_bytes, 448);
  EXPECT_EQ(p.buffers[1].offset, p.buffers[2].offset);
  EXPECT_EQ(p.buffers[2].offset, p.buffers[3].offset);
  EXPECT_EQ(p.buffers[0].offset, -1);  // inputs and outputs are not in the pool
  EXPECT_EQ(p.buffers[4].offset, -1);
  TempMemory m = plan_temp_memory(p);
  ASSERT_EQ(m.in_place.size(), 2u);
  EXPECT_EQ(m.in_place[0].step, 1);
  EXPECT_EQ(m.in_place[0].input, 1);
  EXPECT_EQ(m.in_place[0].output, 2);
  EXPECT_EQ(m.in_place[1].step, 2);
  EXPECT_EQ(m.in_place[1].input, 2);
  EXPECT_EQ(m.in_place[1].output, 3);
  EXPECT_EQ(m.live_bytes, (std::vector<int64_t>{448, 448, 448, 448}));
  EXPECT_EQ(m.peak_step, 0);
  // The ranges stay each buffer's own.
  EXPECT_EQ(m.ranges[1].first, 1);
  EXPECT_EQ(m.ranges[1].last, 2);
}

TEST(LiveRangesTest, ExternUsesCount) {
  Plan p = chain_plan();
  ExternCall x;
  x.op = ExternOp::TopK;  // a known op; its operands are not checked here
  TensorRef r;
  r.buffer = 1;
  r.shape = {100};
  r.strides = {1};
  x.inputs = {r};
  r.buffer = 4;
  x.outputs = {r};
  p.externs = {x};
  Step s;
  s.kind = StepKind::Extern;
  s.index = 0;
  p.steps.push_back(s);  // step 4 reads a: a now lives [0, 4], so it is not given to b
  std::vector<StepUses> uses = plan_step_uses(p);
  ASSERT_EQ(uses.size(), 5u);
  EXPECT_EQ(uses[4].reads, std::vector<int32_t>{1});
  EXPECT_EQ(uses[4].writes, std::vector<int32_t>{4});
  EXPECT_EQ(uses[0].reads, std::vector<int32_t>{0});
  EXPECT_EQ(uses[0].writes, std::vector<int32_t>{1});
  assign_pool_offsets(&p);
  EXPECT_NO_THROW(validate_plan(p));
  // a [0,4] alone; b -> c in place at step 2.
  EXPECT_EQ(p.pool_bytes, 2 * 448);
  EXPECT_NE(p.buffers[1].offset, p.buffers[2].offset);
  EXPECT_EQ(p.buffers[2].offset, p.buffers[3].offset);
  EXPECT_EQ(plan_temp_memory(p, false).pool.pool_bytes, 3 * 448);
  p.steps[4].index = 3;
  EXPECT_THROW(plan_step_uses(p), Error);
}

}  // namespace
}  // namespace ferrite
