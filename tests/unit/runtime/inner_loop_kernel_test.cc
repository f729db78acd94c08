// Kernels with several inner loops (Kernel::loop_ends), shaped as the scheduler fuses a
// softmax or a layer norm: the reference interpreter against double-precision loops written
// here, and the portable backend against the reference with lanes along the reduction and
// with lanes on an outer dim.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "compiler/plan/interpret.h"
#include "runtime/kernels/portable/block_program.h"
#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace testing {
namespace {

// Where row r's reduction point c lives. Rows: x[r, c]. Padded: the reduction is two dims
// [n / w, w] of rows padded to w + 1 (merge_loop_dims cannot merge them). Columns: x[b, c, j]
// with rows r = b * w + j, reduced along the strided c (lanes go on j).
struct Layout {
  enum Kind { Rows, Padded, Columns } kind = Rows;
  int64_t outer = 1, n = 1, w = 1;

  int64_t h() const { return n / w; }
  int64_t rows() const { return kind == Columns ? outer * w : outer; }
  int64_t elements() const {
    return kind == Rows ? outer * n : kind == Padded ? outer * h() * (w + 1) : outer * w * n;
  }
  std::vector<int64_t> ranges() const {
    if (kind == Rows) return {outer, n};
    if (kind == Padded) return {outer, h(), w};
    return {outer, w, n};
  }
  int num_reduce() const { return kind == Padded ? 2 : 1; }
  Index x() const {
    if (kind == Rows) return Affine({{0, n}, {1, 1}});
    if (kind == Padded) return Affine({{0, h() * (w + 1)}, {1, w + 1}, {2, 1}});
    return Affine({{0, n * w}, {1, 1}, {2, w}});
  }
  Index row() const { return kind == Columns ? Affine({{0, w}, {1, 1}}) : V(0); }
  int64_t at(int64_t r, int64_t c) const {
    if (kind == Rows) return r * n + c;
    if (kind == Padded) return r * h() * (w + 1) + c / w * (w + 1) + c % w;
    return r / w * n * w + c * w + r % w;
  }
  std::string name() const {
    const char* k = kind == Rows ? "rows" : kind == Padded ? "padded" : "columns";
    return std::string(k) + " outer=" + std::to_string(outer) + " n=" + std::to_string(n) +
           " w=" + std::to_string(w);
  }
};

std::vector<float> values(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-3, 3);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

// y = softmax(x) along the reduction: loop 0 m = max(x); loop 1 s = sum(exp(x - m));
// loop 2 y = exp(x - m) / s (a loop without a Reduce).
Kernel softmax(const Layout& l) {
  KernelBuilder b(l.ranges(), l.num_reduce());
  const int x = b.arg(DType::F32, l.elements()), y = b.arg(DType::F32, l.elements(), true);
  const int m = b.reduce(ReduceKind::Max, b.load(x, l.x()));
  b.end_loop();
  const int s = b.reduce(ReduceKind::Sum, b.unary(Op::Exp, b.binary(Op::Sub, b.load(x, l.x()), m)));
  b.end_loop();
  const int e = b.unary(Op::Exp, b.binary(Op::Sub, b.load(x, l.x()), m));
  b.store(y, l.x(), b.binary(Op::Div, e, s));
  b.post();
  return b.build();
}

// Layer norm with a residual: loop 0 t = x + res, stored, sum(t); loop 1 reloads t,
// sum((t - mean)^2); loop 2 reloads t, y = (t - mean) * rstd. The post phase stores mean
// and rstd per row. The Consts (1/n, eps, 1) are defined in loop 0 and used everywhere.
Kernel layer_norm(const Layout& l) {
  KernelBuilder b(l.ranges(), l.num_reduce());
  const int64_t e = l.elements();
  const int x = b.arg(DType::F32, e), res = b.arg(DType::F32, e);
  const int t = b.arg(DType::F32, e, true), y = b.arg(DType::F32, e, true);
  const int mean_out = b.arg(DType::F32, l.rows(), true),
            rstd_out = b.arg(DType::F32, l.rows(), true);
  const int inv_n = b.constant(ScalarType::F32, 1.0 / static_cast<double>(l.n));
  const int eps = b.constant(ScalarType::F32, 1e-5), one = b.constant(ScalarType::F32, 1);
  const int tv = b.binary(Op::Add, b.load(x, l.x()), b.load(res, l.x()));
  b.store(t, l.x(), tv);
  const int sum = b.reduce(ReduceKind::Sum, tv);
  b.end_loop();
  const int d1 = b.binary(Op::Sub, b.load(t, l.x()), b.binary(Op::Mul, sum, inv_n));
  const int sq = b.reduce(ReduceKind::Sum, b.binary(Op::Mul, d1, d1));
  b.end_loop();
  auto rstd_of = [&] {
    const int var = b.binary(Op::Mul, sq, inv_n);
    return b.binary(Op::Div, one, b.unary(Op::Sqrt, b.binary(Op::Add, var, eps)));
  };
  const int d2 = b.binary(Op::Sub, b.load(t, l.x()), b.binary(Op::Mul, sum, inv_n));
  b.store(y, l.x(), b.binary(Op::Mul, d2, rstd_of()));
  b.post();
  b.store(mean_out, l.row(), b.binary(Op::Mul, sum, inv_n));
  b.store(rstd_out, l.row(), rstd_of());
  return b.build();
}

// The position of the second largest value: loop 0 m = max(x); loop 1 argmax of
// (x < m ? x : -inf), an ArgMax that depends on loop 0's Max. The post phase stores both.
Kernel second_largest(const Layout& l) {
  KernelBuilder b(l.ranges(), l.num_reduce());
  const int x = b.arg(DType::F32, l.elements());
  const int idx = b.arg(DType::I64, l.rows(), true), mx = b.arg(DType::F32, l.rows(), true);
  const int m = b.reduce(ReduceKind::Max, b.load(x, l.x()));
  b.end_loop();
  const int v = b.load(x, l.x());
  const int ninf = b.constant(ScalarType::F32, -std::numeric_limits<double>::infinity());
  const int am = b.reduce(ReduceKind::ArgMax, b.where(b.binary(Op::Lt, v, m), v, ninf));
  b.post();
  b.store(idx, l.row(), am);
  b.store(mx, l.row(), m);
  return b.build();
}

// Loop 0 only stores t = x * x (no Reduce); loop 1 reloads t and sums it.
Kernel square_then_sum(const Layout& l) {
  KernelBuilder b(l.ranges(), l.num_reduce());
  const int x = b.arg(DType::F32, l.elements()), t = b.arg(DType::F32, l.elements(), true);
  const int out = b.arg(DType::F32, l.rows(), true);
  const int xv = b.load(x, l.x());
  b.store(t, l.x(), b.binary(Op::Mul, xv, xv));
  b.end_loop();
  const int s = b.reduce(ReduceKind::Sum, b.load(t, l.x()));
  b.post();
  b.store(out, l.row(), s);
  return b.build();
}

// One kernel of the four on one layout: its input buffers and the check of its outputs
// against double precision.
struct Case {
  std::string name;
  Kernel kernel;
  std::vector<Tensor> buffers;
  std::vector<int> float_outputs, int_outputs;  // buffer numbers
  bool has_exp = false;                         // f32 exp is 1-4 ulp off the reference
  std::function<void(const std::vector<Tensor>&)> check_double;
};

void expect_rel(double want, float got, const std::string& what) {
  EXPECT_NEAR(got, want, 1e-5 * std::max(1.0, std::fabs(want))) << what;
}

Case softmax_case(const Layout& l) {
  Case c{"softmax " + l.name(), softmax(l), {}, {1}, {}, true, nullptr};
  const std::vector<float> xs = values(l.elements(), 1);
  c.buffers = tensors(make_tensor(DType::F32, xs), zeros(DType::F32, l.elements()));
  c.check_double = [l, xs, name = c.name](const std::vector<Tensor>& got) {
    for (int64_t r = 0; r < l.rows(); ++r) {
      double m = -INFINITY, s = 0;
      for (int64_t i = 0; i < l.n; ++i) m = std::max<double>(m, xs[l.at(r, i)]);
      for (int64_t i = 0; i < l.n; ++i) s += std::exp(xs[l.at(r, i)] - m);
      for (int64_t i = 0; i < l.n; ++i)
        expect_rel(std::exp(xs[l.at(r, i)] - m) / s, f32_at(got[1], l.at(r, i)), name);
    }
  };
  return c;
}

Case layer_norm_case(const Layout& l) {
  Case c{"layer norm " + l.name(), layer_norm(l), {}, {2, 3, 4, 5}, {}, false, nullptr};
  const std::vector<float> xs = values(l.elements(), 2), rs = values(l.elements(), 3);
  c.buffers = tensors(make_tensor(DType::F32, xs), make_tensor(DType::F32, rs),
                      zeros(DType::F32, l.elements()), zeros(DType::F32, l.elements()),
                      zeros(DType::F32, l.rows()), zeros(DType::F32, l.rows()));
  c.check_double = [l, xs, rs, name = c.name](const std::vector<Tensor>& got) {
    for (int64_t r = 0; r < l.rows(); ++r) {
      double mean = 0, var = 0;
      for (int64_t i = 0; i < l.n; ++i) mean += xs[l.at(r, i)] + rs[l.at(r, i)];
      mean /= static_cast<double>(l.n);
      for (int64_t i = 0; i < l.n; ++i) {
        const double d = xs[l.at(r, i)] + rs[l.at(r, i)] - mean;
        var += d * d;
      }
      const double rstd = 1 / std::sqrt(var / static_cast<double>(l.n) + 1e-5);
      expect_rel(mean, f32_at(got[4], r), name + " mean");
      expect_rel(rstd, f32_at(got[5], r), name + " rstd");
      for (int64_t i = 0; i < l.n; ++i) {
        const int64_t at = l.at(r, i);
        expect_rel(xs[at] + rs[at], f32_at(got[2], at), name + " t");
        // (t - mean) cancels: its error is relative to |t| + |mean|, not to the result.
        EXPECT_NEAR(f32_at(got[3], at), (xs[at] + rs[at] - mean) * rstd, 1e-5 * (1 + rstd))
            << name << " y";
      }
    }
  };
  return c;
}

Case second_largest_case(const Layout& l) {
  Case c{"second largest " + l.name(), second_largest(l), {}, {2}, {1}, false, nullptr};
  std::vector<float> xs = values(l.elements(), 4);
  for (int64_t r = 0; r < l.rows() && l.n >= 7; ++r) {  // ties: the first one wins
    xs[l.at(r, 5)] = xs[l.at(r, 1)];
    xs[l.at(r, 6)] = xs[l.at(r, 2)];
  }
  c.buffers = tensors(make_tensor(DType::F32, xs), zeros(DType::I64, l.rows()),
                      zeros(DType::F32, l.rows()));
  c.check_double = [l, xs, name = c.name](const std::vector<Tensor>& got) {
    for (int64_t r = 0; r < l.rows(); ++r) {
      double m = -INFINITY, best = -INFINITY;
      int64_t at = 0;
      for (int64_t i = 0; i < l.n; ++i) m = std::max<double>(m, xs[l.at(r, i)]);
      for (int64_t i = 0; i < l.n; ++i) {
        const double v = xs[l.at(r, i)] < m ? xs[l.at(r, i)] : -INFINITY;
        if (v > best) best = v, at = i;
      }
      EXPECT_EQ(load_element(DType::I64, got[1].data(), r).i64, at) << name;
      EXPECT_EQ(f32_at(got[2], r), m) << name;
    }
  };
  return c;
}

Case square_then_sum_case(const Layout& l) {
  Case c{"square then sum " + l.name(), square_then_sum(l), {}, {1, 2}, {}, false, nullptr};
  const std::vector<float> xs = values(l.elements(), 5);
  c.buffers = tensors(make_tensor(DType::F32, xs), zeros(DType::F32, l.elements()),
                      zeros(DType::F32, l.rows()));
  c.check_double = [l, xs, name = c.name](const std::vector<Tensor>& got) {
    for (int64_t r = 0; r < l.rows(); ++r) {
      double s = 0;
      for (int64_t i = 0; i < l.n; ++i) {
        const float sq = xs[l.at(r, i)] * xs[l.at(r, i)];
        EXPECT_EQ(f32_at(got[1], l.at(r, i)), sq) << name;
        s += sq;
      }
      expect_rel(s, f32_at(got[2], r), name);
    }
  };
  return c;
}

std::vector<Case> cases(const Layout& l) {
  std::vector<Case> v;
  v.push_back(softmax_case(l));
  v.push_back(layer_norm_case(l));
  v.push_back(second_largest_case(l));
  v.push_back(square_then_sum_case(l));
  return v;
}

// Inner sizes 1, 7, 300, 1000 and outer sizes 1, 3, 5 along rows (lanes on the reduction)
// and along columns 20 wide (lanes on the columns); reductions over two dims; columns wider
// than a block.
std::vector<Layout> layouts() {
  std::vector<Layout> v;
  for (int64_t n : {1, 7, 300, 1000})
    for (int64_t outer : {1, 3, 5}) {
      v.push_back({Layout::Rows, outer, n, 1});
      v.push_back({Layout::Columns, outer, n, 20});
    }
  v.push_back({Layout::Padded, 3, 300, 10});
  v.push_back({Layout::Padded, 2, 1000, 100});
  v.push_back({Layout::Padded, 2, 7, 7});
  v.push_back({Layout::Columns, 1, 7, 300});
  v.push_back({Layout::Columns, 2, 40, 300});
  return v;
}

TEST(InnerLoopKernel, ReferenceMatchesDoublePrecision) {
  for (const Layout& l : layouts()) {
    if (l.n == 1000 && l.outer > 1) continue;  // the larger sizes add nothing here
    for (Case& c : cases(l)) c.check_double(run_kernel("reference", c.kernel, c.buffers));
  }
}

// The interpreter entry point itself, on the softmax: loops run in order per outer point.
TEST(InnerLoopKernel, InterpretKernelRunsLoopsInOrder) {
  const Layout l{Layout::Rows, 2, 3, 1};
  const Kernel k = softmax(l);
  std::vector<float> x = {0, 1, 2, -1, -1, -1}, y(6, 0);
  void* args[] = {x.data(), y.data()};
  interpret_kernel(k, args);
  const double s = 1 + std::exp(-1.0) + std::exp(-2.0);
  EXPECT_NEAR(y[0], std::exp(-2.0) / s, 1e-7);
  EXPECT_NEAR(y[2], 1 / s, 1e-7);
  for (int i = 3; i < 6; ++i) EXPECT_NEAR(y[i], 1.0 / 3, 1e-7);
}

TEST(InnerLoopKernel, PortableMatchesReference) {
  for (const Layout& l : layouts()) {
    for (Case& c : cases(l)) {
      SCOPED_TRACE(c.name);
      const portable::BlockProgram p = portable::build_program(c.kernel);
      // Columns put the lanes on the outer dim whenever it is 20 or more wide.
      ASSERT_EQ(p.lanes_outer, l.kind == Layout::Columns);
      ASSERT_EQ(p.block, portable::kBlock);  // reloading what an earlier loop stored is safe
      const std::vector<Tensor> want = run_kernel("reference", c.kernel, c.buffers);
      for_each_simd_target([&] {
        const std::vector<Tensor> got = run_kernel("portable", c.kernel, c.buffers);
        for (int i : c.int_outputs) expect_same_bytes(want[i], got[i], c.name);
        for (int i : c.float_outputs) {
          if (p.lanes_outer && !c.has_exp) {
            expect_same_bytes(want[i], got[i], c.name);  // same order, same ops
          } else {
            expect_close(want[i], got[i], 256, 1e-5, c.name);  // reassociated sums, vector exp
          }
        }
      });
    }
  }
}

// Loop 0 stores w[j] = x[k, j] at every reduction point k of column j; loop 1 sums the
// neighbour column's w[j + 1] over k. The reference runs column j + 1 after column j, so
// column j sees w[j + 1] still at its initial 100. Lanes on the columns would run loop 0
// for all of them first, so the lanes go on the reduction.
TEST(InnerLoopKernel, NeighbourReadAcrossLoopsKeepsLanesInner) {
  const int64_t cols = 40, rows = 9;
  KernelBuilder b({cols, rows}, 1);
  const int x = b.arg(DType::F32, rows * cols), w = b.arg(DType::F32, cols + 1, true);
  const int out = b.arg(DType::F32, cols, true);
  const int v = b.load(x, Affine({{1, cols}, {0, 1}}));
  b.store(w, V(0), v);
  const int s0 = b.reduce(ReduceKind::Sum, v);
  b.end_loop();
  const int s1 = b.reduce(ReduceKind::Sum, b.load(w, Affine({{0, 1}}, 1)));
  b.post();
  b.store(out, V(0), b.binary(Op::Add, s0, s1));
  const Kernel k = b.build();
  const portable::BlockProgram p = portable::build_program(k);
  EXPECT_FALSE(p.lanes_outer);
  EXPECT_EQ(p.block, portable::kBlock);
  const std::vector<float> xs = values(rows * cols, 6);
  const auto buffers =
      tensors(make_tensor(DType::F32, xs),
              make_tensor(DType::F32, std::vector<float>(cols + 1, 100)), zeros(DType::F32, cols));
  for (const char* backend : {"reference", "portable"}) {
    const auto got = run_kernel(backend, k, buffers);
    for (int64_t j = 0; j < cols; ++j) {
      double s = 0;
      for (int64_t r = 0; r < rows; ++r) s += xs[r * cols + j];
      EXPECT_NEAR(f32_at(got[2], j), s + 100.0 * rows, 1e-3) << backend << " column " << j;
      EXPECT_EQ(f32_at(got[1], j), xs[(rows - 1) * cols + j]) << backend;
    }
    EXPECT_EQ(f32_at(got[1], cols), 100.0f) << backend;
  }
}

// A scatter-add inside a later loop: loop 0 m = max(x[r, :]); loop 1 acc[ids[r, c]] +=
// x[r, c] - m, with repeated ids. The load of acc may see a store of the same loop (an
// earlier point's), so the portable backend goes one lane at a time and matches the
// reference exactly; whole blocks would lose the repeated updates.
TEST(InnerLoopKernel, ReadModifyWriteWithinALoopGoesLaneByLane) {
  const int64_t rows = 3, cols = 300, bins = 5;
  KernelBuilder b({rows, cols}, 1);
  const int x = b.arg(DType::F32, rows * cols), ids = b.arg(DType::I64, rows * cols);
  const int acc = b.arg(DType::F32, bins, true), mx = b.arg(DType::F32, rows, true);
  const Index at = Affine({{0, cols}, {1, 1}});
  const int m = b.reduce(ReduceKind::Max, b.load(x, at));
  b.end_loop();
  const int bin = b.check_index(b.load(ids, at), bins, "bin out of range");
  const int old = b.load(acc, ix_value(bin));
  b.store(acc, ix_value(bin), b.binary(Op::Add, old, b.binary(Op::Sub, b.load(x, at), m)));
  b.post();
  b.store(mx, V(0), m);
  const Kernel k = b.build();
  EXPECT_EQ(portable::build_program(k).block, 1);
  std::vector<int64_t> id(rows * cols);
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<int64_t>((i * 7) % bins);
  const auto buffers =
      tensors(make_tensor(DType::F32, values(rows * cols, 7)), make_tensor(DType::I64, id),
              zeros(DType::F32, bins), zeros(DType::F32, rows));
  const auto want = run_kernel("reference", k, buffers);
  const auto got = run_kernel("portable", k, buffers);
  expect_same_bytes(want[2], got[2], "acc");
  expect_same_bytes(want[3], got[3], "max");
  EXPECT_LT(f32_at(want[2], 0), -10.0f);  // every update landed: 180 terms of x - max < 0
}

}  // namespace
}  // namespace testing
}  // namespace ferrite
