// validate_kernel: valid kernels of each shape pass, and each rule family rejects a kernel
// that breaks it with a message naming the kernel and the instruction.
#include "compiler/plan/kernel.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/plan/error.h"
#include "tests/unit/compiler/plan/test_plans.h"

namespace ferrite {
namespace {

using plan_test::error_of;
using plan_test::instr;

Instr load(ScalarType t, int arg, Index index, int mask = -1) {
  Instr in = instr(Op::Load, t);
  in.arg = arg;
  in.index = std::move(index);
  in.mask = mask;
  return in;
}

Instr store(ScalarType t, int arg, Index index, int value) {
  Instr in = instr(Op::Store, t, value);
  in.arg = arg;
  in.index = std::move(index);
  return in;
}

Instr fconst(double v) {
  Instr in = instr(Op::Const, ScalarType::F32);
  in.fimm = v;
  return in;
}

Instr loop_var(int v) {
  Instr in = instr(Op::LoopVar, ScalarType::I64);
  in.arg = v;
  return in;
}

Instr reduce(ReduceKind k, ScalarType t, int a) {
  Instr in = instr(Op::Reduce, t, a);
  in.reduce = k;
  return in;
}

Index affine2(int v0, int64_t stride, int v1) {
  return ix_binary(IndexKind::Add, ix_binary(IndexKind::Mul, ix_var(v0), ix_const(stride)),
                   ix_var(v1));
}

const ScalarType kF = ScalarType::F32, kI = ScalarType::I64, kB = ScalarType::Bool;

// out[i0, i1] = in[i0, i1] * 2 over ranges [4, 8].
Kernel pointwise() {
  Kernel k;
  k.name = "pw";
  k.ranges = {4, 8};
  k.args = {{DType::F32, 32, false}, {DType::F32, 32, true}};
  k.code = {load(kF, 0, affine2(0, 8, 1)), fconst(2.0), instr(Op::Mul, kF, 0, 1),
            store(kF, 1, affine2(0, 8, 1), 2)};
  k.post_begin = 4;
  return k;
}

// sum[i0] = 0.5 * sum_i1(0.5 * in[i0, i1]); arg[i0] = argmax_i1 in[i0, i1].
Kernel reduction() {
  Kernel k;
  k.name = "k3";
  k.ranges = {4, 16};
  k.num_reduce = 1;
  k.args = {{DType::F32, 64, false}, {DType::F32, 4, true}, {DType::I64, 4, true}};
  k.code = {load(kF, 0, affine2(0, 16, 1)),
            fconst(0.5),
            instr(Op::Mul, kF, 0, 1),
            reduce(ReduceKind::Sum, kF, 2),
            reduce(ReduceKind::ArgMax, kI, 0),
            instr(Op::Mul, kF, 3, 1),  // post: a Reduce result times a body Const
            store(kF, 1, ix_var(0), 5),
            store(kI, 2, ix_var(0), 4)};
  k.post_begin = 5;
  return k;
}

// out[i0] = data[check(idx[i0])] where idx[i0] >= 0, else 0 (a masked load).
Kernel gather() {
  Kernel k;
  k.name = "gather";
  k.ranges = {3};
  k.args = {{DType::F32, 10, false}, {DType::I32, 3, false}, {DType::F32, 3, true}};
  Instr zero = instr(Op::Const, kI);
  Instr check = instr(Op::CheckIndex, kI, 0);
  check.arg = 0;
  check.iimm = 10;
  k.code = {load(kI, 1, ix_var(0)),      zero,
            instr(Op::Ge, kB, 0, 1),     check,
            load(kF, 0, ix_value(3), 2), store(kF, 2, ix_var(0), 4)};
  k.code[3].mask = 2;
  k.post_begin = 6;
  k.messages = {"Gather: index out of range"};
  return k;
}

// Softmax over the rows of x[4, 16] in three inner loops: m = max(x); s = sum(exp(x - m));
// y = exp(x - m) / s.
Kernel softmax() {
  Kernel k;
  k.name = "softmax";
  k.ranges = {4, 16};
  k.num_reduce = 1;
  k.args = {{DType::F32, 64, false}, {DType::F32, 64, true}};
  k.code = {load(kF, 0, affine2(0, 16, 1)),       // loop 0
            reduce(ReduceKind::Max, kF, 0),       //
            load(kF, 0, affine2(0, 16, 1)),       // loop 1
            instr(Op::Sub, kF, 2, 1),             //
            instr(Op::Exp, kF, 3),                //
            reduce(ReduceKind::Sum, kF, 4),       //
            load(kF, 0, affine2(0, 16, 1)),       // loop 2
            instr(Op::Sub, kF, 6, 1),             //
            instr(Op::Exp, kF, 7),                //
            instr(Op::Div, kF, 8, 5),             //
            store(kF, 1, affine2(0, 16, 1), 9)};  //
  k.loop_ends = {2, 6, 11};
  k.post_begin = 11;
  return k;
}

TEST(KernelTest, ValidKernelsPass) {
  EXPECT_NO_THROW(validate_kernel(pointwise()));
  EXPECT_NO_THROW(validate_kernel(reduction()));
  EXPECT_NO_THROW(validate_kernel(gather()));
  Kernel empty;
  empty.name = "empty";
  EXPECT_NO_THROW(validate_kernel(empty));
}

TEST(KernelTest, PointCounts) {
  EXPECT_EQ(pointwise().outer_points(), 32);
  EXPECT_EQ(pointwise().reduce_points(), 1);
  EXPECT_EQ(reduction().outer_points(), 4);
  EXPECT_EQ(reduction().reduce_points(), 16);
  Kernel k;
  EXPECT_EQ(k.outer_points(), 1);
  EXPECT_EQ(k.reduce_points(), 1);
  k.ranges = {2, 3, 5, 7};
  k.num_reduce = 2;
  EXPECT_EQ(k.outer_points(), 6);
  EXPECT_EQ(k.reduce_points(), 35);
  k.ranges = {int64_t{1} << 40, int64_t{1} << 40};
  k.num_reduce = 0;
  EXPECT_THROW(k.outer_points(), Error);
}

TEST(KernelTest, MessageNamesKernelAndInstr) {
  Kernel k = pointwise();
  k.code[2].b = 7;
  EXPECT_EQ(error_of(k).rfind("kernel 'pw': instr %2 (Mul): ", 0), 0u) << error_of(k);
}

TEST(KernelTest, HeaderRules) {
  Kernel k = pointwise();
  k.ranges[1] = -1;
  EXPECT_KERNEL_ERROR(k, "kernel 'pw': range 1 is negative");
  k = pointwise();
  k.ranges = {int64_t{1} << 32, int64_t{1} << 32, 4};
  EXPECT_KERNEL_ERROR(k, "overflows");
  k = pointwise();
  k.num_reduce = 3;
  EXPECT_KERNEL_ERROR(k, "num_reduce 3 not in [0, 2]");
  k.num_reduce = -1;
  EXPECT_KERNEL_ERROR(k, "num_reduce -1");
  k = reduction();
  k.post_begin = 9;
  EXPECT_KERNEL_ERROR(k, "post_begin 9 not in [0, 8]");
  k = pointwise();
  k.post_begin = 2;
  EXPECT_KERNEL_ERROR(k, "must equal code size 4");
  k = pointwise();
  k.args[0].elements = -5;
  EXPECT_KERNEL_ERROR(k, "arg 0 has negative elements");
  k = pointwise();
  k.args[0].dtype = DType::String;
  EXPECT_KERNEL_ERROR(k, "arg 0 has dtype string");
}

TEST(KernelTest, SsaRules) {
  Kernel k = pointwise();
  k.code[2].a = 2;  // itself
  EXPECT_KERNEL_ERROR(k, "instr %2 (Mul): operand a is %2, not defined before %2");
  k = pointwise();
  k.code[2].b = -1;
  EXPECT_KERNEL_ERROR(k, "operand b is %-1");
  k = pointwise();
  k.code[3].a = 3;
  EXPECT_KERNEL_ERROR(k, "instr %3 (Store): operand a is %3");
  k = gather();
  k.code[4].mask = 4;
  EXPECT_KERNEL_ERROR(k, "instr %4 (Load): mask is %4");
  k = gather();
  k.code[4].index = ix_value(5);
  EXPECT_KERNEL_ERROR(k, "index value is %5, not defined before %4");
  k = gather();
  k.code[0].index = nullptr;
  EXPECT_KERNEL_ERROR(k, "instr %0 (Load): missing index");
  // A Store defines no value (no backend keeps one for it): the fuzzer's plan whose Div read
  // a Store made the portable backend index its block slots at -1.
  k = pointwise();
  Instr neg;
  neg.op = Op::Neg;
  neg.a = 3;
  k.code.push_back(neg);
  k.post_begin = static_cast<int>(k.code.size());
  EXPECT_KERNEL_ERROR(k, "instr %4 (Neg): operand a is %3, a Store, which has no value");
  // A leaf with operands: index_values walked into the stray child, whose Value id no one
  // checked (the JIT's analysis indexed its users with it; found by fuzz_plan_run).
  k = gather();
  auto leaf = std::make_shared<IndexNode>(*ix_const(12));
  leaf->a = ix_value(1000);
  k.code[4].index = leaf;
  EXPECT_KERNEL_ERROR(k, "index leaf (12) with operands");
  // A symbol (a size known at run time) is bound before a kernel reaches a backend.
  k = gather();
  k.code[4].index = ix_binary(IndexKind::Add, ix_const(1), ix_sym(0));
  EXPECT_KERNEL_ERROR(k, "index symbol s0: a kernel holds no symbols (bind_syms)");
}

// Issue 25, C2: an operand field an op does not use held an id nobody checked, and a
// backend walking every field of every instruction wrote through it.
TEST(KernelTest, UnusedFieldsAreUnset) {
  Kernel k = pointwise();
  k.code[0].b = 1000;  // Load takes no operand
  EXPECT_KERNEL_ERROR(k, "instr %0 (Load): operand b is %1000, but the op takes 0");
  k = pointwise();
  k.code[1].a = 0;  // Const
  EXPECT_KERNEL_ERROR(k, "instr %1 (Const): operand a is %0, but the op takes 0");
  k = pointwise();
  k.code[2].c = 2147483647;  // Mul takes a and b
  EXPECT_KERNEL_ERROR(k, "instr %2 (Mul): operand c is %2147483647, but the op takes 2");
  k = pointwise();
  k.code[3].b = 0;  // Store takes a
  EXPECT_KERNEL_ERROR(k, "instr %3 (Store): operand b is %0, but the op takes 1");
  k = pointwise();
  k.code[2].b = -2;  // a used operand out of range is still an SSA error
  EXPECT_KERNEL_ERROR(k, "instr %2 (Mul): operand b is %-2, not defined before %2");
  k = pointwise();
  k.code[1].index = ix_var(0);
  EXPECT_KERNEL_ERROR(k, "instr %1 (Const): only Load and Store take an index");
  k = pointwise();
  k.code[2].index = ix_value(1000);
  EXPECT_KERNEL_ERROR(k, "instr %2 (Mul): only Load and Store take an index");
  k = pointwise();
  k.code[2].arg = 7;
  EXPECT_KERNEL_ERROR(k, "instr %2 (Mul): arg is 7, but the op takes none");
  k = gather();
  k.code[2].mask = 1000;  // Ge takes no mask
  EXPECT_KERNEL_ERROR(k, "instr %2 (Ge): only Load and CheckIndex take a mask");
  k = gather();  // CheckIndex keeps its message id in arg; Consts their immediates
  k.code[1].fimm = 5;
  EXPECT_NO_THROW(validate_kernel(k));
}

TEST(KernelTest, ArithmeticAndLogicTypes) {
  Kernel k = pointwise();
  k.code[1].type = kI;  // f32 * i64
  EXPECT_KERNEL_ERROR(k, "instr %2 (Mul): needs a, b and result of one non-bool type");
  k = gather();
  k.code[2] = instr(Op::Add, kB, 0, 1);  // i64 + i64 -> bool
  EXPECT_KERNEL_ERROR(k, "(Add): needs a, b and result");
  k = gather();
  k.code[2].type = kI;  // comparison yielding i64
  EXPECT_KERNEL_ERROR(k, "(Ge): needs equal operand types and a bool result");
  k = gather();
  k.code[2] = instr(Op::And, kB, 0, 1);  // i64 operands
  EXPECT_KERNEL_ERROR(k, "(And): needs bool operands");
  k = gather();
  k.code[2] = instr(Op::Not, kB, 0);
  EXPECT_KERNEL_ERROR(k, "(Not): needs bool -> bool");
  k = gather();
  k.code[2] = instr(Op::IsNaN, kB, 0);  // on an i64
  EXPECT_KERNEL_ERROR(k, "(IsNaN): needs float -> bool");
  k = pointwise();
  k.code[2] = instr(Op::Exp, kI, 0);
  EXPECT_KERNEL_ERROR(k, "(Exp): needs operand type == result type");
  k = gather();
  k.code.insert(k.code.begin() + 3, instr(Op::Exp, kB, 2));  // exp of a bool
  k.post_begin = 7;
  EXPECT_KERNEL_ERROR(k, "instr %3 (Exp): not defined on bool");
  k = pointwise();
  k.code[2] = instr(Op::BitAnd, kF, 0, 1);  // bits of floats
  EXPECT_KERNEL_ERROR(k, "(BitAnd): needs i64 operands and an i64 result");
  k = gather();
  k.code[2] = instr(Op::Shr, kB, 0, 1);  // a shift yielding bool
  EXPECT_KERNEL_ERROR(k, "(Shr): needs i64 operands and an i64 result");
  k = pointwise();
  k.code[2] = instr(Op::BitNot, kF, 0);
  EXPECT_KERNEL_ERROR(k, "(BitNot): needs i64 -> i64");
  k = pointwise();
  k.code[2] = instr(Op::Where, kF, 0, 0, 1);  // condition is f32
  EXPECT_KERNEL_ERROR(k, "(Where): needs a bool");
  k = pointwise();
  k.code[2] = instr(Op::Cast, kI, 0);
  k.code[3].a = 2;  // an i64 into an f32 buffer
  EXPECT_KERNEL_ERROR(k, "instr %3 (Store): stored type f32 / value type i64");
}

TEST(KernelTest, LeafAndStructureTypes) {
  Kernel k = pointwise();
  k.code[1] = loop_var(2);
  EXPECT_KERNEL_ERROR(k, "instr %1 (LoopVar): loop variable i2 not in [0, 2)");
  k.code[1] = loop_var(1);
  k.code[1].type = kF;
  EXPECT_KERNEL_ERROR(k, "(LoopVar): result must be i64");
  k = gather();
  k.code[3].arg = 1;
  EXPECT_KERNEL_ERROR(k, "instr %3 (CheckIndex): message 1 not in [0, 1)");
  k = gather();
  k.code[3].iimm = -1;
  EXPECT_KERNEL_ERROR(k, "dimension size -1 is negative");
  k = gather();
  k.code[3].type = kF;
  EXPECT_KERNEL_ERROR(k, "(CheckIndex): needs i64 -> i64");
  k = gather();
  k.code[3].mask = 0;  // an i64 mask
  EXPECT_KERNEL_ERROR(k, "mask %0 is not bool");
  k = pointwise();
  k.code[2].mask = 0;
  EXPECT_KERNEL_ERROR(k, "(Mul): only Load and CheckIndex take a mask");
  k = reduction();
  k.code[3].type = kI;
  EXPECT_KERNEL_ERROR(k, "instr %3 (Reduce): needs operand type == result type");
  k = reduction();
  k.code[4].type = kF;
  EXPECT_KERNEL_ERROR(k, "instr %4 (Reduce): arg reductions yield i64");
}

TEST(KernelTest, MemoryRules) {
  Kernel k = pointwise();
  k.code[0].arg = 2;
  EXPECT_KERNEL_ERROR(k, "instr %0 (Load): arg 2 not in [0, 2)");
  k = pointwise();
  k.code[0].type = kF;
  k.args[0].dtype = DType::F64;
  EXPECT_KERNEL_ERROR(k, "type f32 is not the compute type f64 of arg 0");
  k = gather();  // i32 storage loads as i64: valid; as i32 it is not a compute type
  k.code[0].type = kF;
  EXPECT_KERNEL_ERROR(k, "not the compute type i64");
  k = pointwise();
  k.code[3].arg = 0;
  EXPECT_KERNEL_ERROR(k, "instr %3 (Store): arg 0 is not an output");
  k = pointwise();
  k.code[3].index = nullptr;
  EXPECT_KERNEL_ERROR(k, "instr %3 (Store): missing index");
  k = pointwise();
  k.args[1].dtype = DType::F16;  // f16 stores from f32: valid
  EXPECT_NO_THROW(validate_kernel(k));
}

TEST(KernelTest, PhaseRules) {
  Kernel k = reduction();
  k.code[4] = instr(Op::Neg, kF, 3);  // a body instr reading a Reduce result
  k.code[7].a = 5;
  k.code[7].type = kF;
  k.args[2].dtype = DType::F32;
  EXPECT_KERNEL_ERROR(k, "instr %4 (Neg): operand a uses Reduce result %3 of its own loop");
  k = reduction();
  k.code[5].a = 2;  // post reads a body Mul
  EXPECT_KERNEL_ERROR(k, "instr %5 (Mul): operand a uses body value %2 (Mul) in the post phase");
  k = reduction();
  k.code[5] = instr(Op::Mul, kF, 3, 0);  // post reads a body Load
  EXPECT_KERNEL_ERROR(k, "uses body value %0 (Load)");
  k = reduction();
  k.code[6].index = affine2(0, 16, 1);  // post store indexed by the reduction variable
  EXPECT_KERNEL_ERROR(k, "instr %6 (Store): index variable i1 is a reduction variable");
  k = reduction();
  k.code.insert(k.code.begin() + 5, loop_var(1));
  EXPECT_KERNEL_ERROR(k, "instr %5 (LoopVar): loop variable i1 is a reduction variable");
  k = reduction();
  k.code[5] = reduce(ReduceKind::Max, kF, 3);
  EXPECT_KERNEL_ERROR(k, "instr %5 (Reduce): Reduce after post_begin");
  k = reduction();
  k.code.insert(k.code.begin() + 3, store(kF, 1, ix_var(0), 2));
  k.post_begin = 6;
  for (int i = 6; i < 9; ++i) {  // renumber the post operands after the insert
    if (k.code[i].a >= 3) k.code[i].a += 1;
  }
  EXPECT_NO_THROW(validate_kernel(k));  // a body store in a reduction kernel is fine
  k = pointwise();
  k.code.insert(k.code.begin() + 3, reduce(ReduceKind::Sum, kF, 2));
  k.post_begin = 5;
  EXPECT_KERNEL_ERROR(k, "instr %3 (Reduce): Reduce in a kernel without reduction dims");
}

TEST(KernelTest, InnerLoops) {
  const Kernel k = softmax();
  EXPECT_NO_THROW(validate_kernel(k));  // loop 1 and 2 read Reduce results of earlier loops
  EXPECT_EQ(k.num_loops(), 3);
  EXPECT_EQ(k.loop_begin(1), 2);
  EXPECT_EQ(k.loop_end(1), 6);
  EXPECT_EQ(k.loop_of(1), 0);
  EXPECT_EQ(k.loop_of(2), 1);
  EXPECT_EQ(k.loop_of(10), 2);
  EXPECT_EQ(reduction().num_loops(), 1);
  EXPECT_EQ(reduction().loop_end(0), 5);
  Kernel one = reduction();  // one loop spelled out
  one.loop_ends = {5};
  EXPECT_NO_THROW(validate_kernel(one));
  Kernel pw = pointwise();
  pw.loop_ends = {4};
  EXPECT_NO_THROW(validate_kernel(pw));
}

TEST(KernelTest, LoopEndsRules) {
  Kernel k = softmax();
  k.loop_ends = {6, 2, 11};
  EXPECT_KERNEL_ERROR(k, "kernel 'softmax': loop_ends[1] = 2 not in (6, 11]");
  k.loop_ends = {2, 2, 11};
  EXPECT_KERNEL_ERROR(k, "loop_ends[1] = 2 not in (2, 11]");
  k.loop_ends = {0, 6, 11};
  EXPECT_KERNEL_ERROR(k, "loop_ends[0] = 0 not in (0, 11]");
  k.loop_ends = {2, 6, 12};
  EXPECT_KERNEL_ERROR(k, "loop_ends[2] = 12 not in (6, 11]");
  k.loop_ends = {2, 6};
  EXPECT_KERNEL_ERROR(k, "kernel 'softmax': the last loop ends at 6, not at post_begin 11");
  k = pointwise();
  k.loop_ends = {2, 4};
  EXPECT_KERNEL_ERROR(k, "kernel 'pw': 2 inner loops without reduction dims");
}

TEST(KernelTest, InnerLoopPhaseRules) {
  Kernel k = softmax();
  k.code[3].a = 0;  // loop 1 reads loop 0's Load
  EXPECT_KERNEL_ERROR(k,
                      "instr %3 (Sub): operand a uses %0 (Load) of inner loop 0 in loop 1; only "
                      "Reduce results and Consts cross loops");
  k = softmax();
  k.code[9].b = 4;  // loop 2 reads loop 1's Exp
  EXPECT_KERNEL_ERROR(k, "instr %9 (Div): operand b uses %4 (Exp) of inner loop 1");
  k = softmax();
  k.code[6].index = ix_value(4);
  EXPECT_KERNEL_ERROR(k, "instr %6 (Load): index value uses %4 (Exp) of inner loop 1");
  k = softmax();
  k.loop_ends = {6, 11};  // the max is now in the loop that subtracts it
  EXPECT_KERNEL_ERROR(k, "instr %3 (Sub): operand b uses Reduce result %1 of its own loop");
  k = softmax();  // a body Const crosses loops
  k.code.insert(k.code.begin(), fconst(2.0));
  for (size_t i = 1; i < k.code.size(); ++i) {
    Instr& in = k.code[i];
    for (int32_t* id : {&in.a, &in.b})
      if (*id >= 0) ++*id;
  }
  k.code[10].b = 0;  // loop 2 divides by the Const of loop 0
  k.loop_ends = {3, 7, 12};
  k.post_begin = 12;
  EXPECT_NO_THROW(validate_kernel(k)) << error_of(k);
}

TEST(KernelTest, IndexRules) {
  Kernel k = pointwise();
  k.code[0].index = affine2(0, 8, 2);
  EXPECT_KERNEL_ERROR(k, "instr %0 (Load): index variable i2 not in [0, 2)");
  k = gather();
  k.code[4].index = ix_value(2);  // a bool value as an index
  EXPECT_KERNEL_ERROR(k, "index value %2 is not i64");
  k = pointwise();
  k.code[0].index = ix_binary(IndexKind::Add, ix_var(0), nullptr);
  EXPECT_KERNEL_ERROR(k, "index operator node without both operands");
  Index deep = ix_var(0);
  for (int i = 0; i < 300; ++i) deep = ix_binary(IndexKind::Add, deep, ix_const(1));
  k = pointwise();
  k.code[0].index = deep;
  EXPECT_KERNEL_ERROR(k, "index deeper than 256");
  k = reduction();
  k.code[6].index = ix_value(0);  // post index through a body Load
  EXPECT_KERNEL_ERROR(k, "instr %6 (Store): index value uses body value %0");
}

TEST(KernelTest, ToString) {
  std::string s = kernel_to_string(reduction());
  EXPECT_NE(s.find("kernel k3 ranges [4 | 16] args (f32 in 64, f32 out 4, i64 out 4)\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("  %0 = Load.f32 arg0[((i0*16) + i1)]\n"), std::string::npos) << s;
  EXPECT_NE(s.find("  %1 = Const.f32 0.5\n"), std::string::npos) << s;
  EXPECT_NE(s.find("  %3 = Reduce.sum %2\n  %4 = Reduce.argmax %0\n post:\n  %5 = Mul.f32 %3, %1"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("  Store arg1[i0] %5\n"), std::string::npos) << s;
  std::string g = kernel_to_string(gather());
  EXPECT_NE(g.find("%3 = CheckIndex %0 in [-10, 10) msg0 mask %2"), std::string::npos) << g;
  EXPECT_NE(g.find("%4 = Load.f32 arg0[%3] mask %2"), std::string::npos) << g;
  EXPECT_NE(g.find("msg0: \"Gather: index out of range\""), std::string::npos) << g;
  std::string sm = kernel_to_string(softmax());
  EXPECT_NE(sm.find("  %1 = Reduce.max %0\n loop 1:\n  %2 = Load.f32 arg0[((i0*16) + i1)]\n"),
            std::string::npos)
      << sm;
  EXPECT_NE(sm.find("  %5 = Reduce.sum %4\n loop 2:\n  %6 = Load.f32"), std::string::npos) << sm;
  EXPECT_NE(sm.find("  Store arg1[((i0*16) + i1)] %9\n post:\n"), std::string::npos) << sm;
  Kernel bad = pointwise();
  bad.code[0].index = ix_binary(IndexKind::Mul, nullptr, ix_var(0));
  EXPECT_NE(kernel_to_string(bad).find("arg0[<malformed index>]"), std::string::npos);
}

}  // namespace
}  // namespace ferrite
