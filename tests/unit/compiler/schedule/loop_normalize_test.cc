// The order-changing steps of loop normalisation on hand-built kernels: reordering the
// outer dims, splitting dims taken apart by div/mod, tiling transposes, each checked on the
// resulting ranges and indices and refused where it would change what the kernel stores;
// and the pass as emit_plan runs it on a compiled graph.
#include "compiler/schedule/loop_normalize.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/graph/graph.h"
#include "tests/unit/compiler/lower/run_graph.h"
#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace {

using testing::Add;
using testing::Affine;
using testing::C;
using testing::Div;
using testing::KernelBuilder;
using testing::Mod;
using testing::V;

std::string index_of(const Kernel& k, int instr) {
  return index_to_string(*k.code[instr].index);
}

void expect_unchanged(const Kernel& before, const Kernel& after) {
  EXPECT_EQ(kernel_to_string(after), kernel_to_string(before));
}

// out[store] = in[load] (f32) over `ranges`.
Kernel copy(std::vector<int64_t> ranges, Index load, Index store, int64_t in_elements,
            int64_t out_elements) {
  KernelBuilder b(std::move(ranges));
  const int in = b.arg(DType::F32, in_elements), out = b.arg(DType::F32, out_elements, true);
  b.store(out, std::move(store), b.load(in, std::move(load)));
  return b.build();
}

// Tiles of `tile` whatever the sizes.
LoopNormalizeOptions tiles(int64_t tile) {
  LoopNormalizeOptions o;
  o.transpose_tile = tile;
  o.transpose_min_bytes = o.transpose_min_row = 0;
  return o;
}

// out[i, j] = in[j, i] over [rows, cols].
Kernel transpose(int64_t rows, int64_t cols) {
  return copy({rows, cols}, Affine({{1, rows}, {0, 1}}), Affine({{0, cols}, {1, 1}}), rows * cols,
              rows * cols);
}

TEST(ReorderOuterDims, PutsTheContiguousStoreInnermost) {
  // The store walks i0 with stride 1, the load i1: the store wins.
  const Kernel k =
      reorder_outer_dims(copy({8, 4}, Affine({{0, 4}, {1, 1}}), Affine({{0, 1}, {1, 8}}), 32, 32));
  EXPECT_EQ(k.ranges, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(index_of(k, 0), "(i0 + (i1*4))");
  EXPECT_EQ(index_of(k, 1), "((i0*8) + i1)");
}

TEST(ReorderOuterDims, FollowsTheLoadsWhenNoStoreIsContiguous) {
  // A strided store (every other element) and a load contiguous along i0.
  const Kernel k =
      reorder_outer_dims(copy({8, 4}, Affine({{0, 1}, {1, 8}}), Affine({{0, 2}, {1, 16}}), 32, 64));
  EXPECT_EQ(k.ranges, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(index_of(k, 0), "((i0*8) + i1)");
  EXPECT_EQ(index_of(k, 1), "((i0*16) + (i1*2))");
}

TEST(ReorderOuterDims, OrdersTheOtherDimsByStoreStride) {
  // out[i0, i1, i2] of shape [3, 4, 5] stored as [i1][i0][i2]: i1 goes outermost.
  const Kernel k = reorder_outer_dims(copy({3, 4, 5}, Affine({{0, 20}, {1, 5}, {2, 1}}),
                                           Affine({{1, 15}, {0, 5}, {2, 1}}), 60, 60));
  EXPECT_EQ(k.ranges, (std::vector<int64_t>{4, 3, 5}));
  EXPECT_EQ(index_of(k, 1), "(((i0*15) + (i1*5)) + i2)");
}

TEST(ReorderOuterDims, LeavesReductionDims) {
  // out[i0 + i1*4] = sum over i2 of in[i0*15 + i1*5 + i2], outer [4, 3].
  KernelBuilder b({4, 3, 5}, 1);
  const int in = b.arg(DType::F32, 60), out = b.arg(DType::F32, 12, true);
  const int r = b.reduce(ReduceKind::Sum, b.load(in, Affine({{0, 15}, {1, 5}, {2, 1}})));
  b.post();
  b.store(out, Affine({{0, 1}, {1, 4}}), r);
  const Kernel k = reorder_outer_dims(b.build());
  EXPECT_EQ(k.ranges, (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(k.num_reduce, 1);
  EXPECT_EQ(index_of(k, 0), "(((i0*5) + (i1*15)) + i2)");
  EXPECT_EQ(index_of(k, 2), "((i0*4) + i1)");
}

// A kernel that reorder_outer_dims would permute ([8, 4], store contiguous along i0), with
// its store index, an extra instruction or a load of the output given by the test.
Kernel reorderable(Index store, bool check_index = false, int extra_load_shift = -1) {
  KernelBuilder b({8, 4});
  const int in = b.arg(DType::F32, 32), out = b.arg(DType::F32, 33, true);
  int x = b.load(in, Affine({{0, 4}, {1, 1}}));
  if (check_index) {
    const int idx = b.check_index(b.loop_var(1), 4, "index");
    x = b.load(in, Add(testing::Mul(ix_value(idx), C(8)), V(0)));
  }
  if (extra_load_shift >= 0) x = b.binary(Op::Add, x, b.load(out, Add(store, C(extra_load_shift))));
  b.store(out, std::move(store), x);
  return b.build();
}

TEST(ReorderOuterDims, RefusedWhenPointsDoNotCommute) {
  const Index store = Affine({{0, 1}, {1, 8}});
  ASSERT_TRUE(outer_points_commute(reorderable(store)));
  EXPECT_EQ(reorder_outer_dims(reorderable(store)).ranges, (std::vector<int64_t>{4, 8}));
  // Reading and writing one's own element commutes; reading a neighbour's does not.
  EXPECT_EQ(reorder_outer_dims(reorderable(store, false, 0)).ranges, (std::vector<int64_t>{4, 8}));
  for (const Kernel& k : {
           reorderable(Affine({{0, 1}})),                        // i1 broadcast: 4 writers
           reorderable(Affine({{0, 1}, {1, 2}})),                // overlapping rows
           reorderable(Add(Mod(V(0), C(8)), Affine({{1, 8}}))),  // not affine
           reorderable(store, true),                             // a CheckIndex
           reorderable(store, false, 1),                         // reads a neighbour's element
       }) {
    EXPECT_FALSE(outer_points_commute(k)) << kernel_to_string(k);
    expect_unchanged(k, reorder_outer_dims(k));
  }
}

TEST(OuterPointsCommute, SeveralStoresToOneArg) {
  // out[2i] and out[2i + 1]: each point its own pair. out[i] and out[i + 1]: shared.
  for (int64_t shift : {1, 2}) {
    KernelBuilder b({8});
    const int in = b.arg(DType::F32, 8), out = b.arg(DType::F32, 17, true);
    const int x = b.load(in, V(0));
    b.store(out, Affine({{0, shift}}), x);
    b.store(out, Affine({{0, shift}}, 1), x);
    EXPECT_EQ(outer_points_commute(b.build()), shift == 2);
  }
}

TEST(SplitDivmodDims, BertHeadsCopyBecomesAffine) {
  // [1, 12, 128, 64] -> [1, 128, 12, 64] read as a [128, 768] view.
  const Index load = Add(Add(Mod(V(1), C(64)), testing::Mul(Div(V(1), C(64)), C(8192))),
                         testing::Mul(V(0), C(64)));
  const Kernel k = copy({128, 768}, load, Affine({{0, 768}, {1, 1}}), 98304, 98304);
  const Kernel s = split_divmod_dims(k);
  EXPECT_EQ(s.ranges, (std::vector<int64_t>{128, 12, 64}));
  AffineIndex f;
  ASSERT_TRUE(as_affine(*s.code[0].index, 3, &f)) << index_of(s, 0);
  EXPECT_EQ(f.coeff, (std::vector<int64_t>{64, 8192, 1}));
  ASSERT_TRUE(as_affine(*s.code[1].index, 3, &f)) << index_of(s, 1);
  EXPECT_EQ(f.coeff, (std::vector<int64_t>{768, 64, 1}));
  EXPECT_EQ(normalize_loops(k).ranges, s.ranges);
}

TEST(SplitDivmodDims, RefusedWhenTheRangeDoesNotDivideOrALoopVarReadsTheDim) {
  const Index load = Add(Mod(V(0), C(64)), testing::Mul(Div(V(0), C(64)), C(100)));
  expect_unchanged(copy({760}, load, V(0), 1300, 760),
                   split_divmod_dims(copy({760}, load, V(0), 1300, 760)));
  KernelBuilder b({768});
  const int in = b.arg(DType::F32, 1300), out = b.arg(DType::F32, 768, true);
  const int x = b.load(in, load);
  b.store(out, V(0), b.binary(Op::Add, x, b.cast(ScalarType::F32, b.loop_var(0))));
  const Kernel k = b.build();
  expect_unchanged(k, split_divmod_dims(k));
}

TEST(TileTranspose, WalksATileInnermost) {
  const Kernel k = tile_transpose(transpose(64, 32), tiles(16));
  // i = 16*i0 + i2, j = 16*i1 + i3.
  EXPECT_EQ(k.ranges, (std::vector<int64_t>{4, 2, 16, 16}));
  EXPECT_EQ(index_of(k, 0), "((((i0*16) + (i1*1024)) + i2) + (i3*64))");
  EXPECT_EQ(index_of(k, 1), "((((i0*512) + (i1*16)) + (i2*32)) + i3)");
}

TEST(TileTranspose, RefusedWhereItDoesNotApply) {
  // Ranges the tile does not divide; a load not large enough; rows too short.
  expect_unchanged(transpose(64, 40), tile_transpose(transpose(64, 40), tiles(16)));
  LoopNormalizeOptions small = tiles(16);
  small.transpose_min_bytes = 8193;
  expect_unchanged(transpose(64, 32), tile_transpose(transpose(64, 32), small));
  LoopNormalizeOptions short_rows = tiles(16);
  short_rows.transpose_min_row = 33;
  expect_unchanged(transpose(64, 32), tile_transpose(transpose(64, 32), short_rows));
  // No transposed load.
  const Kernel same =
      copy({64, 32}, Affine({{0, 32}, {1, 1}}), Affine({{0, 32}, {1, 1}}), 2048, 2048);
  expect_unchanged(same, tile_transpose(same, tiles(16)));
  // A LoopVar of a tiled dim.
  {
    KernelBuilder b({64, 32});
    const int in = b.arg(DType::F32, 2048), out = b.arg(DType::F32, 2048, true);
    const int x = b.load(in, Affine({{1, 64}, {0, 1}}));
    b.store(out, Affine({{0, 32}, {1, 1}}),
            b.binary(Op::Add, x, b.cast(ScalarType::F32, b.loop_var(1))));
    const Kernel k = b.build();
    expect_unchanged(k, tile_transpose(k, tiles(16)));
  }
  // A reduction.
  {
    KernelBuilder b({64, 32}, 1);
    const int in = b.arg(DType::F32, 2048), out = b.arg(DType::F32, 64, true);
    const int r = b.reduce(ReduceKind::Sum, b.load(in, Affine({{1, 64}, {0, 1}})));
    b.post();
    b.store(out, V(0), r);
    const Kernel k = b.build();
    expect_unchanged(k, tile_transpose(k, tiles(16)));
  }
  // Points that do not commute (a broadcast store).
  const Kernel shared = copy({64, 32}, Affine({{1, 64}, {0, 1}}), V(1), 2048, 32);
  expect_unchanged(shared, tile_transpose(shared, tiles(16)));
}

TEST(NormalizeLoops, TilesOnlyLargeTransposesWithLongRowsByDefault) {
  EXPECT_EQ(normalize_loops(transpose(2048, 2048)).ranges, (std::vector<int64_t>{32, 32, 64, 64}));
  EXPECT_EQ(normalize_loops(transpose(256, 256)).ranges, (std::vector<int64_t>{256, 256}));
  EXPECT_EQ(normalize_loops(transpose(2048, 512)).ranges, (std::vector<int64_t>{2048, 512}));
  LoopNormalizeOptions off;
  off.transpose_tile = 0;
  EXPECT_EQ(normalize_loops(transpose(2048, 2048), off).ranges, (std::vector<int64_t>{2048, 2048}));
}

TEST(NormalizeLoops, RunsOnEveryKernelOfAPlan) {
  // [1, 6, 4, 2] -> transpose -> [1, 4, 6, 2] -> reshape [4, 12]: lowered as a kernel over
  // [4, 12] that reads with div/mod; in the plan it is an affine [4, 6, 2] copy.
  GraphBuilder gb;
  Value* x = gb.input("x", DType::F32, {1, 6, 4, 2});
  Value* t = gb.op("Transpose", {x}, {{"perm", attr_is({0, 2, 1, 3})}});
  gb.output(gb.op("Reshape", {t, gb.constant_i64({2}, {4, 12})}));
  auto g = gb.finish();
  const std::vector<float> v = lower_test::random_floats(48, 7);
  std::vector<Tensor> in;
  in.emplace_back(DType::F32, std::vector<int64_t>{1, 6, 4, 2}, v.data());
  for (const char* backend : {"reference", "portable"}) {
    const lower_test::Compiled c = lower_test::run_graph(*g, in, backend);
    ASSERT_EQ(c.plan.kernels.size(), 1u);
    EXPECT_EQ(c.plan.kernels[0].ranges, (std::vector<int64_t>{4, 6, 2}));
    std::vector<float> want;
    for (int h = 0; h < 4; ++h)
      for (int cc = 0; cc < 6; ++cc)
        for (int w = 0; w < 2; ++w) want.push_back(v[cc * 8 + h * 2 + w]);
    EXPECT_EQ(lower_test::values_of<float>(c.outputs[0]), want) << backend;
  }
}

}  // namespace
}  // namespace ferrite
