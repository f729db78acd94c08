// validate_plan's overlap rules (compiler/plan/aliasing.h): a step may read and write the
// same bytes only as the memory planner's in-place pairs do; every other overlap of what a
// step writes with what it touches is refused, since the backends treat args as distinct.
#include "compiler/plan/aliasing.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/plan/error.h"
#include "tests/unit/compiler/plan/test_plans.h"

namespace ferrite {
namespace {

using plan_test::buffer;
using plan_test::error_of;
using plan_test::instr;
using plan_test::mem;

const ScalarType kF = ScalarType::F32;

// args: n inputs of 8 f32, then one output of 8 f32; out[i] = sum of in_k[i] * 2. The
// loads come before the store, all at index i (in place is legal for each input).
Kernel scale_kernel(int inputs, Index load_index = ix_var(0)) {
  Kernel k;
  k.name = "scale";
  k.ranges = {8};
  for (int a = 0; a < inputs; ++a) k.args.push_back({DType::F32, 8, false});
  k.args.push_back({DType::F32, 8, true});
  Instr two = instr(Op::Const, kF);
  two.fimm = 2;
  k.code.push_back(two);
  int acc = 0;
  for (int a = 0; a < inputs; ++a) {
    k.code.push_back(mem(Op::Load, kF, a, a == 0 ? load_index : ix_var(0)));
    k.code.push_back(instr(Op::Mul, kF, static_cast<int>(k.code.size()) - 1, acc));
    acc = static_cast<int>(k.code.size()) - 1;
  }
  k.code.push_back(mem(Op::Store, kF, inputs, ix_var(0), acc));
  k.post_begin = static_cast<int>(k.code.size());
  return k;
}

Step kernel_step(int kernel, std::vector<int32_t> buffers) {
  Step s;
  s.index = kernel;
  s.buffers = std::move(buffers);
  return s;
}

// x (input) -> t0 -> t1 -> y (output); t1 takes t0's bytes in place at step 1.
Plan chain() {
  Plan p;
  p.buffers = {buffer("x", DType::F32, {8}, BufferKind::Input),
               buffer("t0", DType::F32, {8}, BufferKind::Temp, 0),
               buffer("t1", DType::F32, {8}, BufferKind::Temp, 0),
               buffer("y", DType::F32, {8}, BufferKind::Output)};
  p.kernels = {scale_kernel(1)};
  p.steps = {kernel_step(0, {0, 1}), kernel_step(0, {1, 2}), kernel_step(0, {2, 3})};
  p.inputs = {0};
  p.outputs = {3};
  p.pool_bytes = 64;
  return p;
}

TEST(AliasingTest, InPlacePairsPass) {
  EXPECT_EQ(error_of(chain()), "<no error>");
  Plan p = chain();  // one buffer read through two args, written in place
  p.kernels.push_back(scale_kernel(2));
  p.steps[1] = kernel_step(1, {1, 1, 2});
  EXPECT_EQ(error_of(p), "<no error>");
  p = chain();  // reads only: any overlap
  p.kernels.push_back(scale_kernel(2));
  p.buffers[2].offset = 64;
  p.pool_bytes = 128;
  p.steps[1] = kernel_step(1, {1, 1, 2});
  EXPECT_EQ(error_of(p), "<no error>");
}

TEST(AliasingTest, InPlaceNeedsTheKernelRule) {
  Plan p = chain();
  p.kernels.push_back(scale_kernel(
      1,
      ix_binary(IndexKind::Mod, ix_binary(IndexKind::Add, ix_var(0), ix_const(1)), ix_const(8))));
  p.steps[1] = kernel_step(1, {1, 2});  // reads t0[i + 1 mod 8] after an earlier point wrote it
  EXPECT_PLAN_ERROR(p,
                    "plan: step 1 (kernel 'scale') writes output arg 1 in place of arg 0, which it "
                    "may not: the input is loaded at");
  p = chain();
  Kernel k = scale_kernel(1);
  k.code.push_back(mem(Op::Load, kF, 0, ix_var(0)));  // a load after the store
  k.post_begin = 5;
  p.kernels.push_back(k);
  p.steps[1] = kernel_step(1, {1, 2});
  EXPECT_PLAN_ERROR(p, "instr %4 loads the input after the store %3");
  p = chain();
  Kernel r = scale_kernel(1);
  r.ranges = {8, 1};
  r.num_reduce = 1;
  p.kernels.push_back(r);
  p.steps[1] = kernel_step(1, {1, 2});
  EXPECT_PLAN_ERROR(p, "which it may not: the kernel has reduction dims");
}

TEST(AliasingTest, OtherOverlapsAreRefused) {
  Plan p = chain();
  p.buffers[1].shape = {32};  // t0 [0, 128) and t1 [64, 96): not the same bytes
  p.buffers[2].offset = 64;
  p.pool_bytes = 128;
  p.kernels = {scale_kernel(1), scale_kernel(1), scale_kernel(1)};
  p.kernels[0].args[1].elements = 32;
  p.kernels[1].args[0].elements = 32;
  p.steps = {kernel_step(0, {0, 1}), kernel_step(1, {1, 2}), kernel_step(2, {2, 3})};
  EXPECT_PLAN_ERROR(p,
                    "plan: step 1 (kernel 'scale') binds args 0 and 1 to overlapping but "
                    "different bytes");
  p = chain();  // two outputs of one step in the same bytes
  Kernel two = scale_kernel(1);
  two.args.push_back({DType::F32, 8, true});
  two.code.push_back(mem(Op::Store, kF, 2, ix_var(0), 2));
  two.post_begin = 5;
  p.kernels.push_back(two);
  p.steps[1] = kernel_step(1, {1, 2, 2});
  EXPECT_PLAN_ERROR(p, "writes the same bytes through args 1 and 2");
  p = chain();  // element sizes differ
  p.buffers[2].dtype = DType::F16;
  p.buffers[2].shape = {16};
  Kernel h = scale_kernel(1);
  h.args[1] = {DType::F16, 16, true};
  p.kernels.push_back(h);
  p.steps[1] = kernel_step(1, {1, 2});
  p.steps[2] = kernel_step(0, {0, 3});
  EXPECT_PLAN_ERROR(p, "of different element sizes to the same bytes");
}

TEST(AliasingTest, ExternOutputsAreDistinct) {
  Plan p = chain();
  ExternCall mm;
  mm.op = ExternOp::MatMul;
  mm.inputs = {plan_test::ref(1, {2, 4}, {4, 1}), plan_test::ref(0, {4, 2}, {2, 1})};
  mm.outputs = {plan_test::ref(2, {2, 2}, {2, 1})};
  p.externs = {mm};
  Step e;
  e.kind = StepKind::Extern;
  e.index = 0;
  p.steps[1] = e;
  EXPECT_PLAN_ERROR(p, "plan: step 1 (extern MatMul) input 0 and output 0 share bytes");
  p.buffers[2].offset = 64;
  p.pool_bytes = 128;
  EXPECT_EQ(error_of(p), "<no error>");
}

TEST(AliasingTest, ManyArgsOfOneBuffer) {
  // A kernel reading one buffer through many args, in place (a concat of many inputs reads
  // many args): accepted without pairing every arg with every other.
  const int n = 20000;
  Plan p = chain();
  p.kernels.push_back(scale_kernel(n));
  std::vector<int32_t> bufs(n, 1);
  bufs.push_back(2);
  p.steps[1] = kernel_step(1, bufs);
  EXPECT_EQ(error_of(p), "<no error>");
}

// A kernel over `ranges` storing the constant 1 to an output of 64 elements at `index`.
Kernel store_kernel(std::vector<int64_t> ranges, Index index) {
  Kernel k;
  k.name = "store";
  k.ranges = std::move(ranges);
  k.args.push_back({DType::F32, 64, true});
  Instr one = instr(Op::Const, kF);
  one.fimm = 1;
  k.code.push_back(one);
  k.code.push_back(mem(Op::Store, kF, 0, std::move(index), 0));
  k.post_begin = static_cast<int>(k.code.size());
  return k;
}

std::string store_error(std::vector<int64_t> ranges, Index index) {
  try {
    check_store_collisions(store_kernel(std::move(ranges), std::move(index)));
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

Index affine(int64_t c0, int64_t c1) {
  return ix_binary(IndexKind::Add, ix_binary(IndexKind::Mul, ix_const(c0), ix_var(0)),
                   ix_binary(IndexKind::Mul, ix_const(c1), ix_var(1)));
}

TEST(AliasingTest, StoresFromSeveralPointsToOneElement) {
  // Row-major, transposed and strided stores: one element a point.
  EXPECT_EQ(store_error({4, 8}, affine(8, 1)), "<no error>");
  EXPECT_EQ(store_error({4, 8}, affine(1, 4)), "<no error>");
  EXPECT_EQ(store_error({3, 2}, affine(2, 3)), "<no error>");  // {0,2,4} + {0,3}: distinct
  // A loop variable the index ignores, a coefficient of 0, overlapping rows.
  const std::string msg = "writes one element of arg 0 from several iteration points";
  EXPECT_NE(store_error({4, 8}, ix_var(1)).find(msg), std::string::npos);
  EXPECT_NE(store_error({4, 8}, affine(0, 1)).find(msg), std::string::npos);
  EXPECT_NE(store_error({4, 8}, affine(4, 1)).find(msg), std::string::npos);  // 4+0 == 0+4
  // The fuzzer's reproducer: (i0 * i1) + i1 (kernel_store_collision.fplan).
  Index prod =
      ix_binary(IndexKind::Add, ix_binary(IndexKind::Mul, ix_var(0), ix_var(1)), ix_var(1));
  EXPECT_NE(store_error({4, 8}, prod).find(msg), std::string::npos);
  // Ranges of 1 and 0 make no second point.
  EXPECT_EQ(store_error({1, 8}, affine(0, 1)), "<no error>");
  EXPECT_EQ(store_error({0, 8}, affine(0, 0)), "<no error>");
}

}  // namespace
}  // namespace ferrite
