// Linear forms of indices and merge_loop_dims: size-1 dims dropped, dims walked as one
// merged (also under div/mod), and every merge refused that would change an index or the
// order of a reduction.
#include "compiler/plan/loop_dims.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/plan/error.h"
#include "compiler/plan/interpret.h"
#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace {

using testing::Add;
using testing::Affine;
using testing::C;
using testing::Div;
using testing::KernelBuilder;
using testing::Mod;
using testing::Mul;
using testing::V;

std::string index_of(const Kernel& k, int instr) {
  return index_to_string(*k.code[instr].index);
}

// out[store] = in[load] (f32) over `ranges`.
Kernel copy(std::vector<int64_t> ranges, Index load, Index store, int64_t elements,
            int num_reduce = 0) {
  KernelBuilder b(std::move(ranges), num_reduce);
  const int in = b.arg(DType::F32, elements), out = b.arg(DType::F32, elements, true);
  b.store(out, std::move(store), b.load(in, std::move(load)));
  return b.build();
}

TEST(LinearIndex, FormsAndBack) {
  // ((i0 + 2) * 3 + (i1 // 4)) * 2: 6*i0 + 2*(i1 // 4) + 12.
  const Index e = Mul(Add(Mul(Add(V(0), C(2)), C(3)), Div(V(1), C(4))), C(2));
  const LinearForm f = linearize(*e, 2);
  EXPECT_EQ(f.offset, 12);
  EXPECT_EQ(f.coeff, (std::vector<int64_t>{6, 0}));
  ASSERT_EQ(f.terms.size(), 1u);
  EXPECT_EQ(f.terms[0].factor, 2);
  EXPECT_EQ(f.terms[0].kind, IndexKind::FloorDiv);
  EXPECT_EQ(f.terms[0].operands[0].coeff, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(index_to_string(*delinearize(f)), "(((i0*6) + ((i1 // 4)*2)) + 12)");
  // Constant div/mod fold; a product of two variables stays a term.
  EXPECT_EQ(index_to_string(*delinearize(linearize(*Add(Mod(C(-7), C(3)), V(0)), 1))), "(i0 + 2)");
  EXPECT_EQ(index_to_string(*delinearize(linearize(*Mul(V(0), V(1)), 2))), "(i0*i1)");
}

TEST(LinearIndex, WrapsLikeEvalIndex) {
  // Coefficients that overflow int64 wrap as eval_index does: the values agree.
  const Index e = Mul(Add(Mul(V(0), C(INT64_MAX)), V(1)), C(3));
  const Index back = delinearize(linearize(*e, 2));
  for (int64_t x : {0, 1, 5})
    for (int64_t y : {0, 7}) {
      const int64_t vars[2] = {x, y};
      EXPECT_EQ(eval_index(*back, vars, nullptr), eval_index(*e, vars, nullptr));
    }
}

TEST(MergeLoopDims, DropsSizeOneDims) {
  // A transpose over [1, 4, 1, 8] with a LoopVar of a size-1 dim.
  KernelBuilder b({1, 4, 1, 8});
  const int in = b.arg(DType::F32, 32), out = b.arg(DType::F32, 32, true);
  const int x = b.load(in, Affine({{3, 4}, {1, 1}, {0, 32}}));
  const int lv = b.cast(ScalarType::F32, b.loop_var(2));
  b.store(out, Affine({{1, 8}, {3, 1}, {2, 8}}), b.binary(Op::Add, x, lv));
  const Kernel k = merge_loop_dims(b.build());
  EXPECT_EQ(k.ranges, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(index_of(k, 0), "(i0 + (i1*4))");
  EXPECT_EQ(k.code[1].op, Op::Const);  // LoopVar of the dropped dim: always 0
  EXPECT_EQ(k.code[1].type, ScalarType::I64);
  EXPECT_EQ(k.code[1].iimm, 0);
  EXPECT_EQ(index_of(k, 4), "((i0*8) + i1)");
}

TEST(MergeLoopDims, KeepsOneReductionDim) {
  KernelBuilder b({4, 1, 1}, 2);
  const int in = b.arg(DType::F32, 4), out = b.arg(DType::F32, 4, true);
  const int r = b.reduce(ReduceKind::Sum, b.load(in, Affine({{0, 1}, {1, 1}, {2, 1}})));
  b.post();
  b.store(out, V(0), r);
  const Kernel k = merge_loop_dims(b.build());
  EXPECT_EQ(k.ranges, (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(k.num_reduce, 1);
  EXPECT_EQ(index_of(k, 0), "i0");
}

TEST(MergeLoopDims, MergesDimsWalkedAsOne) {
  const Kernel k = merge_loop_dims(
      copy({2, 4, 8}, Affine({{0, 32}, {1, 8}, {2, 1}}, 3), Affine({{0, 32}, {1, 8}, {2, 1}}), 67));
  EXPECT_EQ(k.ranges, (std::vector<int64_t>{64}));
  EXPECT_EQ(index_of(k, 0), "(i0 + 3)");
  EXPECT_EQ(index_of(k, 1), "i0");
}

TEST(MergeLoopDims, MergesUnderDivMod) {
  // (i0*8 + i1) // 3 walks i0 and i1 as one, and so does the store.
  const Kernel k = merge_loop_dims(
      copy({4, 8}, Div(Affine({{0, 8}, {1, 1}}), C(3)), Affine({{0, 8}, {1, 1}}), 32));
  EXPECT_EQ(k.ranges, (std::vector<int64_t>{32}));
  EXPECT_EQ(index_of(k, 0), "(i0 // 3)");
}

TEST(MergeLoopDims, RefusesWhatWouldChangeAnIndex) {
  // A transposed load.
  Kernel k = copy({4, 8}, Affine({{1, 4}, {0, 1}}), Affine({{0, 8}, {1, 1}}), 32);
  EXPECT_EQ(kernel_to_string(merge_loop_dims(k)), kernel_to_string(k));
  // A div/mod that takes one of the dims alone.
  k = copy({4, 8}, Add(Mul(V(0), C(8)), Div(V(1), C(2))), Affine({{0, 8}, {1, 1}}), 32);
  EXPECT_EQ(kernel_to_string(merge_loop_dims(k)), kernel_to_string(k));
  // A product of the variables.
  k = copy({4, 8}, Add(Mul(V(0), V(1)), Affine({{0, 8}, {1, 1}})), Affine({{0, 8}, {1, 1}}), 64);
  EXPECT_EQ(kernel_to_string(merge_loop_dims(k)), kernel_to_string(k));
}

TEST(MergeLoopDims, RefusesDimsReadByLoopVar) {
  KernelBuilder b({4, 8});
  const int in = b.arg(DType::F32, 32), out = b.arg(DType::F32, 32, true);
  const int x = b.load(in, Affine({{0, 8}, {1, 1}}));
  const int lv = b.cast(ScalarType::F32, b.loop_var(1));
  b.store(out, Affine({{0, 8}, {1, 1}}), b.binary(Op::Add, x, lv));
  const Kernel k = b.build();
  EXPECT_EQ(kernel_to_string(merge_loop_dims(k)), kernel_to_string(k));
}

TEST(MergeLoopDims, NeverMixesOuterAndReductionDims) {
  KernelBuilder b({4, 8}, 1);
  const int in = b.arg(DType::F32, 32), out = b.arg(DType::F32, 4, true);
  const int r = b.reduce(ReduceKind::Sum, b.load(in, Affine({{0, 8}, {1, 1}})));
  b.post();
  b.store(out, V(0), r);
  const Kernel k = b.build();
  EXPECT_EQ(kernel_to_string(merge_loop_dims(k)), kernel_to_string(k));
}

TEST(MergeLoopDims, MergedReductionDimsKeepArgMaxIndex) {
  // argmax over [3, 4] of each of 2 rows, with ties: the first maximum's row-major index.
  KernelBuilder b({2, 3, 4}, 2);
  const int in = b.arg(DType::F32, 24), out = b.arg(DType::I64, 2, true);
  const int r = b.reduce(ReduceKind::ArgMax, b.load(in, Affine({{0, 12}, {1, 4}, {2, 1}})));
  b.post();
  b.store(out, V(0), r);
  const Kernel k = b.build();
  const Kernel m = merge_loop_dims(k);
  EXPECT_EQ(m.ranges, (std::vector<int64_t>{2, 12}));
  EXPECT_EQ(m.num_reduce, 1);
  std::vector<float> data = {0, 1, 5, 2, 5, 0, 1, 1, 0, 0, 5, 3,
                             7, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7};
  std::vector<int64_t> got(2), want(2);
  void* args_k[2] = {data.data(), want.data()};
  void* args_m[2] = {data.data(), got.data()};
  interpret_kernel(k, args_k);
  interpret_kernel(m, args_m);
  EXPECT_EQ(want, (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(got, want);
}

TEST(MergeLoopDims, LeavesEmptyKernels) {
  const Kernel k = copy({0, 1, 4}, Affine({{1, 4}, {2, 1}}), Affine({{1, 4}, {2, 1}}), 4);
  EXPECT_EQ(kernel_to_string(merge_loop_dims(k)), kernel_to_string(k));
}

TEST(RemapDims, LoopVarWithoutSingleNewVarIsInternalError) {
  KernelBuilder b({4});
  const int out = b.arg(DType::I64, 4, true);
  b.store(out, V(0), b.loop_var(0));
  DimMap m;
  m.ranges = {2, 2};
  m.coeff = {{{0, 2}, {1, 1}}};
  m.loop_var = {kNoLoopVar};
  EXPECT_THROW(remap_dims(b.build(), m), Error);
}

}  // namespace
}  // namespace ferrite
