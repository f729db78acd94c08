// validate_plan: the full test plan passes, and each consistency rule (sizes, pool offsets,
// constants, bindings, kernel steps, extern views) rejects a plan that breaks it.
#include "compiler/plan/plan.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/plan/error.h"
#include "tests/unit/compiler/plan/test_plans.h"

namespace ferrite {
namespace {

using plan_test::error_of;
using plan_test::full_plan;
using plan_test::ref;

TEST(PlanTest, FullPlanIsValid) {
  EXPECT_NO_THROW(validate_plan(full_plan()));
}

TEST(PlanTest, BufferSizes) {
  PlanBuffer b = plan_test::buffer("b", DType::F16, {3, 5, 7}, BufferKind::Temp, 0);
  EXPECT_EQ(b.elements(), 105);
  EXPECT_EQ(b.nbytes(), 210);
  b.shape = {};
  EXPECT_EQ(b.elements(), 1);
  b.shape = {4, 0};
  EXPECT_EQ(b.nbytes(), 0);
  b.shape = {2, -3};
  EXPECT_THROW(b.elements(), Error);
  b.shape = {int64_t{1} << 62, 2};
  EXPECT_THROW(b.elements(), Error);
  b.shape = {int64_t{1} << 62};  // elements fit, bytes do not
  EXPECT_EQ(b.elements(), int64_t{1} << 62);
  EXPECT_THROW(b.nbytes(), Error);

  Plan p = full_plan();
  p.buffers[3].shape = {2, -4};
  EXPECT_PLAN_ERROR(p, "buffer 't0': negative dimension -4");
  p = full_plan();
  p.buffers[0].dtype = DType::String;
  EXPECT_PLAN_ERROR(p, "buffer 0 ('x') has dtype string");
}

TEST(PlanTest, PoolOffsets) {
  Plan p = full_plan();
  p.buffers[4].offset = 32;
  EXPECT_PLAN_ERROR(p, "buffer 4 ('t1') has pool offset 32");
  p.buffers[4].offset = -64;
  EXPECT_PLAN_ERROR(p, "has pool offset -64");
  p = full_plan();
  p.buffers[4].offset = 128;  // 8 bytes past a 128-byte pool
  EXPECT_PLAN_ERROR(p, "buffer 4 ('t1') at offset 128 with 8 bytes ends past the pool");
  p = full_plan();
  p.pool_bytes = -1;
  EXPECT_PLAN_ERROR(p, "negative pool size");
}

TEST(PlanTest, Constants) {
  Plan p = full_plan();
  p.buffers[1].constant = 2;
  EXPECT_PLAN_ERROR(p, "buffer 1 ('w') refers to constant 2 of 2");
  p = full_plan();
  p.constants[1].resize(23);
  EXPECT_PLAN_ERROR(p, "buffer 2 ('idx') needs 24 bytes but constant 1 has 23");
}

TEST(PlanTest, Bindings) {
  Plan p = full_plan();
  p.inputs.clear();
  EXPECT_PLAN_ERROR(p, "input buffer 0 ('x') is not listed in inputs");
  p = full_plan();
  p.outputs = {5, 6, 5};
  EXPECT_PLAN_ERROR(p, "outputs lists buffer 5 ('y0') twice");
  p = full_plan();
  p.outputs = {5, 6, 3};
  EXPECT_PLAN_ERROR(p, "outputs lists buffer 3 ('t0') of kind temp");
  p = full_plan();
  p.inputs = {0, 9};
  EXPECT_PLAN_ERROR(p, "inputs lists buffer 9 of 7");
}

TEST(PlanTest, KernelSteps) {
  Plan p = full_plan();
  p.steps[1].index = 2;
  EXPECT_PLAN_ERROR(p, "step 1 calls kernel 2 of 2");
  p = full_plan();
  p.steps[1].buffers.pop_back();
  EXPECT_PLAN_ERROR(p, "step 1 binds 2 buffers to kernel 'row_sum' with 3 args");
  p = full_plan();
  p.steps[1].buffers[0] = -1;
  EXPECT_PLAN_ERROR(p, "step 1 (kernel 'row_sum') arg 0 is buffer -1 of 7");
  p = full_plan();
  p.steps[1].buffers[2] = 5;  // an f32 buffer for the i64 arg
  EXPECT_PLAN_ERROR(p, "arg 2 is int64 but buffer 5 ('y0') is float32");
  p = full_plan();
  p.steps[2].buffers[0] = 3;  // t0 has 8 elements, the arg 2
  EXPECT_PLAN_ERROR(p, "step 2 (kernel 'gather') arg 0 has 2 elements but buffer 3 ('t0') has 8");
  p = full_plan();
  p.buffers[5].kind = BufferKind::Input;  // the gather writes y0
  p.inputs = {0, 5};
  p.outputs = {6};
  EXPECT_PLAN_ERROR(p, "step 2 (kernel 'gather') writes input buffer 5 ('y0')");
  p = full_plan();
  p.kernels[1].code[3].iimm = -2;
  EXPECT_PLAN_ERROR(p, "kernel 'gather': instr %3 (CheckIndex)");
  p = full_plan();
  p.steps[0].index = 1;
  EXPECT_PLAN_ERROR(p, "step 0 calls extern 1 of 1");
  p = full_plan();
  p.steps[0].kind = static_cast<StepKind>(5);
  EXPECT_PLAN_ERROR(p, "step 0 has invalid kind 5");
}

TEST(PlanTest, ExternViews) {
  Plan p = full_plan();
  p.externs[0].inputs[0].buffer = 7;
  EXPECT_PLAN_ERROR(p, "extern 0 (MatMul) input 0 refers to buffer 7 of 7");
  p = full_plan();
  p.externs[0].inputs[1].strides = {4};
  EXPECT_PLAN_ERROR(p, "input 1 has shape rank 2 but strides rank 1");
  p = full_plan();
  p.externs[0].inputs[1] = ref(1, {8, 4}, {4, 1}, 1);  // last element is 32, w has 32
  EXPECT_PLAN_ERROR(p, "input 1 reaches elements [1, 32] outside buffer 1 ('w') of 32");
  p = full_plan();
  p.externs[0].inputs[2].offset = 7;  // rows upside down from row 7/8: starts at -1
  EXPECT_PLAN_ERROR(p, "input 2 reaches elements [-1, 14]");
  p = full_plan();
  p.externs[0].inputs[1] = ref(1, {8, 4}, {INT64_MAX, 1});
  EXPECT_PLAN_ERROR(p, "overflowing int64");
  p = full_plan();
  p.externs[0].inputs[1] = ref(1, {8, 0}, {1000, 1000}, 5000);  // empty: reaches nothing
  EXPECT_NO_THROW(validate_plan(p));
  p.externs[0].inputs[1] = ref(1, {-1, 4}, {4, 1});
  EXPECT_PLAN_ERROR(p, "negative dimension -1");
  p = full_plan();
  p.externs[0].outputs[0].buffer = 1;
  EXPECT_PLAN_ERROR(p, "extern 0 (MatMul) output 0 writes constant buffer");
  p = full_plan();
  p.externs[0].op = static_cast<ExternOp>(kExternOpCount);  // no backend implements it
  EXPECT_PLAN_ERROR(p, str_cat("extern 0 has unknown op ", kExternOpCount));
}

TEST(PlanTest, ExternEpilogue) {
  Plan p = full_plan();
  EXPECT_EQ(op_input_count(p.externs[0]), 3u);  // the Add's operand is input 3
  EXPECT_EQ(p.externs[0].post_ops.size(), 3u);  // the chain the body was built from
  p.externs[0].epilogue.steps[1].input = 4;
  EXPECT_PLAN_ERROR(p, "extern 0 (MatMul) epilogue step 1: loads input 4 of 4");
  p = full_plan();
  p.externs[0].inputs[3] = ref(1, {4}, {1});
  EXPECT_PLAN_ERROR(p, "epilogue reads input 3, whose view does not have the output's shape");
  p = full_plan();  // fuzz_plan_run: the reference refused a uint32 operand, jit read its bits
  p.buffers[static_cast<size_t>(p.externs[0].inputs[3].buffer)].dtype = DType::U32;
  EXPECT_PLAN_ERROR(p,
                    "extern 0 (MatMul) epilogue reads input 3 of uint32 (an epilogue reads "
                    "float32)");
  p = full_plan();
  p.externs[0].epilogue.steps[2].b = 5;
  EXPECT_PLAN_ERROR(p, "extern 0 (MatMul) epilogue step 2: operand b is 5, not an earlier step");
  p = full_plan();
  p.externs[0].post_ops[2].alpha = 0.25f;  // no longer what the body says
  EXPECT_PLAN_ERROR(p, "extern 0 (MatMul)'s post-ops are not its epilogue's chain");
  p = full_plan();
  p.externs[0].op = ExternOp::TopK;
  EXPECT_PLAN_ERROR(p, "extern 0 (TopK) takes no epilogue");
}

TEST(PlanTest, PackedConstants) {
  const Plan p = full_plan();  // w (constant 0) packed as the MatMul's input 1
  Plan q = p;
  EXPECT_EQ(strip_packed_constants(&q), 0u);  // the post-op (input 3) reads w's bytes too
  EXPECT_EQ(q.constants, p.constants);
  q.packed.push_back(PackedConstant{0, 3, "test layout 2x4", {9}});
  EXPECT_EQ(strip_packed_constants(&q), 128u);  // idx stays: a kernel reads it
  EXPECT_TRUE(q.constants[0].empty());
  EXPECT_EQ(q.constants[1], p.constants[1]);
  EXPECT_EQ(packed_only_constants(q), (std::vector<bool>{true, false}));
  EXPECT_NO_THROW(validate_plan(q));

  Plan r = q;
  r.packed.pop_back();
  EXPECT_PLAN_ERROR(r,
                    "step 0 (extern MatMul) input 3 reads buffer 1 ('w'), which the plan "
                    "holds only packed");
  r = p;
  r.packed[0].extern_index = 1;
  EXPECT_PLAN_ERROR(r, "packed constant 0 belongs to extern 1 of 1");
  r = p;
  r.packed[0].input = 9;
  EXPECT_PLAN_ERROR(r, "packed constant 0 is input 9 of extern 0 (MatMul) with 4 inputs");
  r = p;
  r.packed[0].input = 0;
  EXPECT_PLAN_ERROR(r, "packed constant 0 is buffer 0 ('x'), not a constant");
}

TEST(PlanTest, ToString) {
  std::string s = plan_to_string(full_plan());
  EXPECT_NE(s.find("plan pool 128 bytes\n"), std::string::npos) << s;
  EXPECT_NE(s.find("  b1 'w' constant float32[8, 4] const0\n"), std::string::npos) << s;
  EXPECT_NE(s.find("  b4 't1' temp float32[2] @64\n"), std::string::npos) << s;
  EXPECT_NE(s.find("inputs: b0\noutputs: b5, b6\n"), std::string::npos) << s;
  EXPECT_NE(s.find("  0: extern MatMul huge=-9223372036854775808 trans_a=0 alpha=1 beta=-0 "
                   "tiny=9.9999999999999694e-311 in b0[2, 8] strides [8, 1] +0"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find(" out b3[2, 4] strides [4, 1] +0 then add(in 3) then clip(0, 6) then "
                   "leaky_relu(0.125) ()\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("  1: kernel 0 (row_sum) (b3, b4, b6)\n"), std::string::npos) << s;
  EXPECT_NE(s.find("kernel gather ranges [3] args (f32 in 2, i64 in 3, f32 out 3)\n"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace ferrite
