// The portable backend's kernel analysis: which dims it merges and where it puts the lanes
// (the results themselves are checked against the reference in the *_kernel_test files).
#include "runtime/kernels/portable/block_program.h"

#include <gtest/gtest.h>

#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace testing {
namespace {

// out[n, c, h, w] = x[n, c, h, w] + bias[c]: h and w merge, c stays (the bias walks it).
TEST(BlockProgram, CollapsesContiguousDims) {
  KernelBuilder b({2, 3, 5, 7});
  const int x = b.arg(DType::F32, 210), bias = b.arg(DType::F32, 3),
            out = b.arg(DType::F32, 210, true);
  const Index flat = Affine({{0, 105}, {1, 35}, {2, 7}, {3, 1}});
  b.store(out, flat, b.binary(Op::Add, b.load(x, flat), b.load(bias, V(1))));
  const portable::BlockProgram p = portable::build_program(b.build());
  EXPECT_EQ(p.k.ranges, (std::vector<int64_t>{2, 3, 35}));
  EXPECT_EQ(p.lane_var, 2);
  // The bias load does not move along the lanes: one scalar per row, broadcast.
  EXPECT_EQ(p.loops[0].row.size(), 1u);
}

TEST(BlockProgram, LoopVarBlocksMerging) {
  KernelBuilder b({4, 8});
  const int out = b.arg(DType::I64, 32, true);
  b.store(out, Affine({{0, 8}, {1, 1}}), b.loop_var(1));
  EXPECT_EQ(portable::build_program(b.build()).k.ranges, (std::vector<int64_t>{4, 8}));
}

Kernel column_sum(int64_t rows, int64_t cols) {
  KernelBuilder b({cols, rows}, 1);
  const int x = b.arg(DType::F32, rows * cols), out = b.arg(DType::F32, cols, true);
  const int s = b.reduce(ReduceKind::Sum, b.load(x, Affine({{1, cols}, {0, 1}})));
  b.post();
  b.store(out, V(0), s);
  return b.build();
}

TEST(BlockProgram, ReductionLanesFollowContiguity) {
  // Summing columns: the contiguous dim is the outer one, so the lanes go there.
  const portable::BlockProgram cols = portable::build_program(column_sum(100, 64));
  EXPECT_TRUE(cols.lanes_outer);
  EXPECT_EQ(cols.lane_var, 0);
  // Summing rows of a row-major matrix: lanes along the reduction.
  KernelBuilder b({64, 100}, 1);
  const int x = b.arg(DType::F32, 6400), out = b.arg(DType::F32, 64, true);
  const int s = b.reduce(ReduceKind::Sum, b.load(x, Affine({{0, 100}, {1, 1}})));
  b.post();
  b.store(out, V(0), s);
  const portable::BlockProgram rows = portable::build_program(b.build());
  EXPECT_FALSE(rows.lanes_outer);
  EXPECT_EQ(rows.lane_var, 1);
}

// buf[1, i] = buf[0, i] * 2: the kernel reads one row of the buffer it writes another of,
// so no load can see a store: full blocks. Reading the row it writes forces one lane at a
// time (a read-modify-write keeps the reference's point order).
TEST(BlockProgram, DisjointReadOfTheWrittenArgKeepsBlocks) {
  for (int64_t read_row : {0, 1}) {
    KernelBuilder b({64});
    const int buf = b.arg(DType::F32, 128, true);
    const int x = b.load(buf, Affine({{0, 1}}, read_row * 64));
    b.store(buf, Affine({{0, 1}}, 64), b.binary(Op::Mul, x, b.constant(ScalarType::F32, 2)));
    EXPECT_EQ(portable::build_program(b.build()).block, read_row == 0 ? portable::kBlock : 1)
        << "reading row " << read_row;
  }
}

// A two-loop kernel over x[2, 3, 5, 7] reduced over the last two dims (mean-centred sum of
// squares): the outer dims merge, the reduction dims merge, the two sides never do (x is
// contiguous across them), and loop_ends and the code keep their numbering.
TEST(BlockProgram, CollapseKeepsInnerLoopsAndTheOuterReduceSplit) {
  KernelBuilder b({2, 3, 5, 7}, 2);
  const int x = b.arg(DType::F32, 210), out = b.arg(DType::F32, 6, true);
  const Index flat = Affine({{0, 105}, {1, 35}, {2, 7}, {3, 1}});
  const int s = b.reduce(ReduceKind::Sum, b.load(x, flat));
  b.end_loop();
  const int d = b.binary(Op::Sub, b.load(x, flat), s);
  const int q = b.reduce(ReduceKind::Sum, b.binary(Op::Mul, d, d));
  b.post();
  b.store(out, Affine({{0, 3}, {1, 1}}), q);
  const Kernel k = b.build();
  const portable::BlockProgram p = portable::build_program(k);
  EXPECT_EQ(p.k.ranges, (std::vector<int64_t>{6, 35}));
  EXPECT_EQ(p.k.num_reduce, 1);
  EXPECT_EQ(p.k.loop_ends, k.loop_ends);
  EXPECT_NO_THROW(validate_kernel(p.k));
  ASSERT_EQ(p.loops.size(), 2u);
  EXPECT_EQ(p.loops[0].reduces, std::vector<int>{s});
  EXPECT_EQ(p.loops[1].reduces, std::vector<int>{q});
  EXPECT_FALSE(p.lanes_outer);
  // Loop 1 reads loop 0's sum in its lanes: the sum is broadcast into a slot of its own.
  EXPECT_TRUE(p.info[s].broadcast);
  EXPECT_GE(p.info[s].slot, 0);
}

// out[i, j] = x[i, j] * w[j] + j over [rows, cols]: rows of fewer than 64 points run with the
// long dim innermost (block_program.cc, widen_rows), strided, when the points commute; the
// values are the formula's either way. A store every row writes (out[j]) keeps the order.
Kernel scaled_rows(int64_t rows, int64_t cols, bool every_row_writes) {
  KernelBuilder b({rows, cols});
  const int x = b.arg(DType::F32, rows * cols), w = b.arg(DType::F32, cols),
            out = b.arg(DType::F32, every_row_writes ? cols : rows * cols, true);
  const Index at = Affine({{0, cols}, {1, 1}});
  const int j = b.cast(ScalarType::F32, b.loop_var(1));
  const int v = b.binary(Op::Add, b.binary(Op::Mul, b.load(x, at), b.load(w, V(1))), j);
  b.store(out, every_row_writes ? V(1) : at, v);
  return b.build();
}

TEST(BlockProgram, NarrowRowsRunWithTheLongDimInnermost) {
  struct Case {
    int64_t rows, cols;
    bool every_row_writes;
    std::vector<int64_t> ranges;
  };
  for (const Case& c : {Case{1000, 3, false, {3, 1000}}, Case{1000, 63, false, {63, 1000}},
                        Case{1000, 64, false, {1000, 64}}, Case{200, 3, false, {200, 3}},
                        Case{1000, 3, true, {1000, 3}}}) {
    SCOPED_TRACE(::testing::Message() << c.rows << " x " << c.cols);
    const Kernel k = scaled_rows(c.rows, c.cols, c.every_row_writes);
    EXPECT_EQ(portable::build_program(k).k.ranges, c.ranges);
    std::vector<float> xs(static_cast<size_t>(c.rows * c.cols)), ws(static_cast<size_t>(c.cols));
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 97) * 0.25f - 3;
    for (size_t i = 0; i < ws.size(); ++i) ws[i] = 1.5f - static_cast<float>(i);
    const int64_t n = c.every_row_writes ? c.cols : c.rows * c.cols;
    const std::vector<Tensor> got = run_kernel(
        "portable", k,
        tensors(make_tensor(DType::F32, xs), make_tensor(DType::F32, ws), zeros(DType::F32, n)));
    for (int64_t e = 0; e < n; ++e) {
      const int64_t i = c.every_row_writes ? c.rows - 1 : e / c.cols, jj = e % c.cols;
      const float want = xs[static_cast<size_t>(i * c.cols + jj)] * ws[static_cast<size_t>(jj)] +
                         static_cast<float>(jj);
      ASSERT_EQ(f32_at(got[2], e), want) << "element " << e;
    }
  }
}

}  // namespace
}  // namespace testing
}  // namespace ferrite
