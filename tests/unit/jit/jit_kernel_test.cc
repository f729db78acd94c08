// The JIT backend against the reference interpreter on hand-built kernels, one per shape
// of loop nest and kind of access the code generator has, for every ISA this CPU runs.
// Each kernel must be compiled (not left to the portable backend).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "compiler/plan/error.h"
#include "jit/code_cache.h"
#include "jit/cpu_isa.h"
#include "jit/disasm.h"
#include "jit/jit_backend.h"
#include "jit/kernel_analysis.h"
#include "tests/unit/jit/jit_test_util.h"
#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace {

using jit_test::expect_jit_matches;
using jit_test::isas;
using jit_test::random_tensor;
using testing::Affine;
using testing::C;
using testing::KernelBuilder;
using testing::V;

TEST(JitKernel, PointwiseWithTailsAndBroadcast) {
  for (int64_t n : {1, 7, 16, 17, 33, 100}) {
    KernelBuilder b({3, n});
    const int x = b.arg(DType::F32, 3 * n), bias = b.arg(DType::F32, n), s = b.arg(DType::F32, 3),
              y = b.arg(DType::F32, 3 * n, true);
    const int v = b.load(x, Affine({{0, n}, {1, 1}}));
    const int w = b.load(bias, V(1));
    const int r = b.load(s, V(0));
    const int t = b.binary(Op::Mul, b.binary(Op::Add, v, w), r);
    b.store(y, Affine({{0, n}, {1, 1}}), b.unary(Op::Relu, t));
    expect_jit_matches(
        b.build(),
        testing::tensors(random_tensor(DType::F32, 3 * n, 1), random_tensor(DType::F32, n, 2),
                         random_tensor(DType::F32, 3, 3), testing::zeros(DType::F32, 3 * n)));
  }
}

TEST(JitKernel, ArgMaxRowsThenCompare) {
  // Hardmax: argmax over each row, then one-hot in a second inner loop.
  KernelBuilder b({4, 4}, 1);
  const int x = b.arg(DType::F32, 16), y = b.arg(DType::F32, 16, true);
  const int am = b.reduce(ReduceKind::ArgMax, b.load(x, Affine({{0, 4}, {1, 1}})));
  b.end_loop();
  const int eq = b.binary(Op::Eq, am, b.loop_var(1));
  b.store(y, Affine({{0, 4}, {1, 1}}), b.cast(ScalarType::F32, eq));
  b.post();
  expect_jit_matches(b.build(), testing::tensors(random_tensor(DType::F32, 16, 4),
                                                 testing::zeros(DType::F32, 16)));
}

TEST(JitKernel, ReductionsBothLaneArrangements) {
  // Sum/max/min/prod/argmin over the last dim: [r, n] rows (lanes on the reduction for long
  // rows, on the rows for short ones), with a prologue and an epilogue.
  for (auto [r, n] : std::vector<std::pair<int64_t, int64_t>>{{3, 100}, {40, 5}, {17, 33}}) {
    for (ReduceKind kind : {ReduceKind::Sum, ReduceKind::Max, ReduceKind::Min, ReduceKind::Prod,
                            ReduceKind::ArgMin}) {
      KernelBuilder b({r, n}, 1);
      const int x = b.arg(DType::F32, r * n);
      const bool arg = kind == ReduceKind::ArgMin;
      const int y = b.arg(arg ? DType::I64 : DType::F32, r, true);
      const int v = b.load(x, Affine({{0, n}, {1, 1}}));
      const int sc = b.constant(ScalarType::F32, kind == ReduceKind::Prod ? 0.25 : 1.5);
      const int red = b.reduce(kind, b.binary(Op::Mul, v, sc));
      b.post();
      b.store(y, V(0), arg ? red : b.unary(Op::Neg, red));
      const double lo = kind == ReduceKind::Prod ? 1 : -4, hi = kind == ReduceKind::Prod ? 6 : 4;
      expect_jit_matches(
          b.build(),
          testing::tensors(random_tensor(DType::F32, r * n, 7, lo, hi),
                           testing::zeros(y == 1 && arg ? DType::I64 : DType::F32, r)),
          64);
    }
  }
}

TEST(JitKernel, ReductionOverTwoDimsAndOuterDim) {
  // Sum over dims 0 and 2 of [5, 6, 7] (a scalar loop inside the reduction), and a column sum
  // of [9, 37] (a reduction over an outer-looking dim: lanes on the columns).
  {
    KernelBuilder b({6, 5, 7}, 2);
    const int x = b.arg(DType::F32, 210), y = b.arg(DType::F32, 6, true);
    const int red = b.reduce(ReduceKind::Sum, b.load(x, Affine({{1, 42}, {0, 7}, {2, 1}})));
    b.post();
    b.store(y, V(0), red);
    expect_jit_matches(
        b.build(),
        testing::tensors(random_tensor(DType::F32, 210, 8), testing::zeros(DType::F32, 6)), 64);
  }
  {
    KernelBuilder b({37, 9}, 1);
    const int x = b.arg(DType::F32, 333), y = b.arg(DType::F32, 37, true);
    const int red = b.reduce(ReduceKind::Max, b.load(x, Affine({{1, 37}, {0, 1}})));
    b.post();
    b.store(y, V(0), red);
    expect_jit_matches(b.build(), testing::tensors(random_tensor(DType::F32, 333, 9),
                                                   testing::zeros(DType::F32, 37)));
  }
}

TEST(JitKernel, TransposedAndStridedAccesses) {
  // y[j, i] = x[i, j] * 2 over [13, 19]: strided loads (gather) or strided stores.
  KernelBuilder b({13, 19});
  const int x = b.arg(DType::F32, 247), y = b.arg(DType::F32, 247, true);
  const int v = b.load(x, Affine({{0, 19}, {1, 1}}));
  b.store(y, Affine({{1, 13}, {0, 1}}), b.binary(Op::Mul, v, b.constant(ScalarType::F32, 2)));
  expect_jit_matches(b.build(), testing::tensors(random_tensor(DType::F32, 247, 10),
                                                 testing::zeros(DType::F32, 247)));
  KernelBuilder c({13, 19});
  const int x2 = c.arg(DType::F32, 247), y2 = c.arg(DType::F32, 247, true);
  const int v2 = c.load(x2, Affine({{1, 13}, {0, 1}}));
  c.store(y2, Affine({{0, 19}, {1, 1}}), c.unary(Op::Abs, v2));
  expect_jit_matches(c.build(), testing::tensors(random_tensor(DType::F32, 247, 11),
                                                 testing::zeros(DType::F32, 247)));
}

TEST(JitKernel, RowGatherWithCheckedIndex) {
  // Embedding lookup: out[t, h] = table[ids[t], h]; ids may be negative (from the end).
  KernelBuilder b({5, 21});
  const int ids = b.arg(DType::I64, 5), table = b.arg(DType::F32, 7 * 21),
            out = b.arg(DType::F32, 5 * 21, true);
  const int id = b.check_index(b.load(ids, V(0)), 7, "Gather 'g' indices");
  const int v = b.load(table, testing::Add(testing::Mul(ix_value(id), C(21)), V(1)));
  b.store(out, Affine({{0, 21}, {1, 1}}), v);
  const Kernel k = b.build();
  expect_jit_matches(
      k, testing::tensors(testing::make_tensor<int64_t>(DType::I64, {0, 6, -1, 3, -7}),
                          random_tensor(DType::F32, 147, 12), testing::zeros(DType::F32, 105)));
  // An index out of range fails with the reference's message.
  for (const std::string& isa : isas()) {
    BackendOptions options;
    options.isa = isa;
    auto bufs =
        testing::tensors(testing::make_tensor<int64_t>(DType::I64, {0, 1, 7, 0, 0}),
                         random_tensor(DType::F32, 147, 12), testing::zeros(DType::F32, 105));
    std::vector<void*> args = {bufs[0].data(), bufs[1].data(), bufs[2].data()};
    try {
      jit::make_jit_backend(options)->prepare(k)->run(args.data());
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "Gather 'g' indices: index 7 out of range [-7, 7)");
    }
  }
}

// The error of a failing kernel, or "" (buffers are copied first).
std::string run_error(const std::string& backend, const std::string& isa, const Kernel& k,
                      const std::vector<Tensor>& buffers) {
  std::vector<Tensor> got;
  std::vector<void*> args;
  for (const Tensor& t : buffers) got.push_back(testing::copy_of(t));
  for (Tensor& t : got) args.push_back(t.data());
  try {
    if (backend == "jit") {
      BackendOptions options;
      options.isa = isa;
      jit::make_jit_backend(options)->prepare(k)->run(args.data());
    } else {
      testing::run_kernel(backend, k, buffers);
    }
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(JitKernel, LaneGatherThroughCheckedInt64Indices) {
  // GatherElements on the last axis: out[r, j] = x[r, ids[r, j]], the index per lane, read
  // from int64 storage (saturated to int32 lanes for the check), negative from the end.
  const int64_t rows = 3, n = 37, w = 11;
  KernelBuilder b({rows, n});
  const int ids = b.arg(DType::I64, rows * n), x = b.arg(DType::F32, rows * w),
            out = b.arg(DType::F32, rows * n, true);
  const int id = b.check_index(b.load(ids, Affine({{0, n}, {1, 1}})), w, "GatherElements 'g'");
  b.store(out, Affine({{0, n}, {1, 1}}), b.load(x, testing::Add(Affine({{0, w}}), ix_value(id))));
  const Kernel k = b.build();
  std::vector<int64_t> good(rows * n);
  for (int64_t i = 0; i < rows * n; ++i) good[i] = (i * 7) % (2 * w) - w;  // [-w, w)
  const Tensor x_data = random_tensor(DType::F32, rows * w, 21);
  expect_jit_matches(
      k, testing::tensors(testing::make_tensor<int64_t>(DType::I64, good), testing::copy_of(x_data),
                          testing::zeros(DType::F32, rows * n)));
  // Out of range (past int32 too) in lanes of the body and of the tail: the reference's
  // first failing point and message.
  for (int64_t bad_at : {int64_t{5}, int64_t{2 * n + 36}}) {
    for (int64_t bad : {int64_t{w}, int64_t{-w - 1}, int64_t{5000000000}}) {
      std::vector<int64_t> v = good;
      v[bad_at] = bad;
      v[rows * n - 1] = w + 3;  // a later failure too
      const auto bufs =
          testing::tensors(testing::make_tensor<int64_t>(DType::I64, v), testing::copy_of(x_data),
                           testing::zeros(DType::F32, rows * n));
      const std::string want = run_error("reference", "", k, bufs);
      ASSERT_NE(want, "");
      for (const std::string& isa : isas()) EXPECT_EQ(run_error("jit", isa, k, bufs), want) << isa;
    }
  }
}

TEST(JitKernel, LaneGatherThroughClampedInt32Table) {
  // Resize's form: out[r, j] = x[r, min(max(table[j], 0), w - 1)], the index per lane read
  // from an int32 table and clamped, which proves it inside x (a clamp's range is not the
  // hull of its operands'). Table values past either end, past int32's halves too, read the
  // edge.
  const int64_t rows = 3, n = 37, w = 11;
  KernelBuilder b({rows, n});
  const int table = b.arg(DType::I32, n), x = b.arg(DType::F32, rows * w),
            out = b.arg(DType::F32, rows * n, true);
  const int raw = b.load(table, V(1));
  const int lo = b.constant(ScalarType::I64, 0), hi = b.constant(ScalarType::I64, w - 1);
  const int id = b.binary(Op::Min, b.binary(Op::Max, raw, lo), hi);
  b.store(out, Affine({{0, n}, {1, 1}}), b.load(x, testing::Add(Affine({{0, w}}), ix_value(id))));
  const Kernel k = b.build();
  std::vector<int32_t> t(n);
  for (int64_t i = 0; i < n; ++i) t[i] = static_cast<int32_t>((i * 7) % (3 * w) - w);
  t[3] = std::numeric_limits<int32_t>::min();
  t[n - 1] = std::numeric_limits<int32_t>::max();
  expect_jit_matches(k,
                     testing::tensors(testing::make_tensor<int32_t>(DType::I32, t),
                                      random_tensor(DType::F32, rows * w, 22),
                                      testing::zeros(DType::F32, rows * n)),
                     0);
}

TEST(JitKernel, Int64CopiesAndCastsAlongLanes) {
  // Position ids as floats and a copy of int64 data (BERT's and GCN's first kernels).
  const int64_t n = 45;
  KernelBuilder b({n});
  const int p = b.arg(DType::I64, n), q = b.arg(DType::I64, 1), f = b.arg(DType::F32, n, true),
            c = b.arg(DType::I64, n, true), d = b.arg(DType::I64, n, true);
  b.store(f, V(0),
          b.binary(Op::Mul, b.cast(ScalarType::F32, b.load(p, V(0))),
                   b.constant(ScalarType::F32, 0.5)));
  b.store(c, V(0), b.load(p, V(0)));
  b.store(d, V(0), b.load(q, C(0)));
  std::vector<int64_t> vals(n);
  for (int64_t i = 0; i < n; ++i) vals[i] = (i % 2 ? -1 : 1) * ((int64_t{1} << (i % 62)) + i);
  expect_jit_matches(b.build(),
                     testing::tensors(testing::make_tensor<int64_t>(DType::I64, vals),
                                      testing::make_tensor<int64_t>(DType::I64, {int64_t{1} << 40}),
                                      testing::zeros(DType::F32, n), testing::zeros(DType::I64, n),
                                      testing::zeros(DType::I64, n)));
}

TEST(JitKernel, MaskedReadsOutsideTheArg) {
  // Max pooling with padding: reads at -1 and past the end happen only under the mask.
  const int64_t n = 50;
  KernelBuilder b({n, 3}, 1);
  const int x = b.arg(DType::F32, n), y = b.arg(DType::F32, n, true);
  const int pos = b.binary(Op::Add, b.binary(Op::Add, b.loop_var(0), b.loop_var(1)),
                           b.constant(ScalarType::I64, -1));
  const int inside = b.binary(Op::And, b.binary(Op::Ge, pos, b.constant(ScalarType::I64, 0)),
                              b.binary(Op::Lt, pos, b.constant(ScalarType::I64, n)));
  const int v = b.load(x, Affine({{0, 1}, {1, 1}}, -1), inside);
  const int r =
      b.reduce(ReduceKind::Max, b.where(inside, v, b.constant(ScalarType::F32, -INFINITY)));
  b.post();
  b.store(y, V(0), r);
  expect_jit_matches(
      b.build(), testing::tensors(random_tensor(DType::F32, n, 31), testing::zeros(DType::F32, n)));
}

// How many accesses of k the JIT computes as a gather through a product, quotient or
// remainder varying along the lanes (Access::vector_terms), under `isa`; `mode` gets the
// kernel's lane arrangement.
int lane_index_gathers(const Kernel& k, const std::string& isa, jit::Mode* mode = nullptr) {
  jit::Layout layout;
  EXPECT_EQ(jit::analyze_kernel(k, jit::choose_isa(isa), &layout), "") << kernel_to_string(k);
  if (mode) *mode = layout.mode;
  int n = 0;
  for (const jit::Access& a : layout.accesses) {
    bool compound = false;
    for (const LinearTerm& t : a.form.terms)
      compound = compound || (t.kind != IndexKind::Value && jit::lane_varying(layout, t));
    n += a.vector_terms && compound;
  }
  return n;
}

TEST(JitKernel, NearestUpsampleDividesTheVectorDim) {
  // out[n, c, h, w] = x[n, c, h / s, w / s] (Resize nearest, scale s), lanes along w with
  // a tail (37 is 2 * 16 + 5 and 4 * 8 + 5): the lane offsets divide the vector variable.
  for (int64_t s : {2, 3}) {
    SCOPED_TRACE("scale " + std::to_string(s));
    const int64_t n = 2, c = 3, h = 10, w = 37, ih = (h + s - 1) / s, iw = (w + s - 1) / s;
    KernelBuilder b({n, c, h, w});
    const int x = b.arg(DType::F32, n * c * ih * iw), y = b.arg(DType::F32, n * c * h * w, true);
    using testing::Add;
    using testing::Div;
    using testing::Mul;
    const Index at = Add(Affine({{0, c * ih * iw}, {1, ih * iw}}),
                         Add(Mul(Div(V(2), C(s)), C(iw)), Div(V(3), C(s))));
    b.store(y, Affine({{0, c * h * w}, {1, h * w}, {2, w}, {3, 1}}), b.load(x, at));
    const Kernel k = b.build();
    for (const std::string& isa : isas()) EXPECT_EQ(lane_index_gathers(k, isa), 1) << isa;
    expect_jit_matches(k,
                       testing::tensors(random_tensor(DType::F32, n * c * ih * iw, 40 + s),
                                        testing::zeros(DType::F32, n * c * h * w)),
                       0);
  }
}

TEST(JitKernel, TransposedReshapeDivAndModOfTheVectorDim) {
  // Lanes along w in [0, 37): a transposed 8 x 5 view read flat (w % 5 * 8 + w / 5), floor
  // division and remainder with numerators negative in some lanes ((w - 7) / 3 + 3 and
  // (w - 7) % 3), and numerators near the ends of int32 (|w * 5e7 - 2e9| up to 2e9) divided
  // by a divisor that is not a power of two; f32 and int32 elements.
  const int64_t rows = 3, w = 37, stride = 80;
  using testing::Add;
  using testing::Div;
  using testing::Mod;
  using testing::Mul;
  KernelBuilder b({rows, w});
  const int x = b.arg(DType::F32, rows * stride), q = b.arg(DType::I32, rows * stride),
            y1 = b.arg(DType::F32, rows * w, true), y2 = b.arg(DType::I32, rows * w, true),
            y3 = b.arg(DType::F32, rows * w, true);
  const Index row = Affine({{0, stride}});
  const Index out = Affine({{0, w}, {1, 1}});
  const Index shifted = Affine({{1, 1}}, -7);  // w - 7
  const Index big = Affine({{1, 50000000}}, -2000000000);
  // Transposed view: [0, 40).
  b.store(y1, out, b.load(x, Add(row, Add(Mul(Mod(V(1), C(5)), C(8)), Div(V(1), C(5))))));
  // 40 + ((w - 7) / 3 + 3) * 3 + (w - 7) % 3: [40, 79).
  b.store(y2, out,
          b.load(q, Add(row, Add(C(40), Add(Mul(Add(Div(shifted, C(3)), C(3)), C(3)),
                                            Mod(shifted, C(3)))))));
  // (w * 5e7 - 2e9) / 49999999 + 41 in [0, 37), plus (w * 5e7 - 2e9) % 7 * 6: [0, 73).
  b.store(y3, out,
          b.load(x, Add(row, Add(Add(Div(big, C(49999999)), C(41)), Mul(Mod(big, C(7)), C(6))))));
  const Kernel k = b.build();
  for (const std::string& isa : isas()) EXPECT_EQ(lane_index_gathers(k, isa), 3) << isa;
  expect_jit_matches(
      k,
      testing::tensors(random_tensor(DType::F32, rows * stride, 50),
                       random_tensor(DType::I32, rows * stride, 51, -1e6, 1e6),
                       testing::zeros(DType::F32, rows * w), testing::zeros(DType::I32, rows * w),
                       testing::zeros(DType::F32, rows * w)),
      0);
}

TEST(JitKernel, NestedDivModAndProductsOfTheVectorDim) {
  // DepthToSpace-like (w / 3) % 4 * 9 + w / 12 * 3 + w % 3, a division of a remainder with
  // negative numerators (((w - 5) % 12 - 6) / 5 + 2), and a product of two per-lane terms
  // ((w % 4) * (w / 9)); lanes along w in [0, 37); terms mixing a per-lane index value
  // with the vector variable; then lanes along the rows of a reduction whose lanes are on
  // the outer dim (i / 3 over 40 rows, 7 reduced points each).
  using testing::Add;
  using testing::Div;
  using testing::Mod;
  using testing::Mul;
  {
    const int64_t rows = 2, w = 37, stride = 40;
    KernelBuilder b({rows, w});
    const int x = b.arg(DType::F32, rows * stride), y1 = b.arg(DType::F32, rows * w, true),
              y2 = b.arg(DType::F32, rows * w, true), y3 = b.arg(DType::F32, rows * w, true);
    const Index row = Affine({{0, stride}}), out = Affine({{0, w}, {1, 1}});
    b.store(y1, out,
            b.load(x, Add(row, Add(Mul(Mod(Div(V(1), C(3)), C(4)), C(9)),
                                   Add(Mul(Div(V(1), C(12)), C(3)), Mod(V(1), C(3)))))));
    const Index inner = Add(Mod(Affine({{1, 1}}, -5), C(12)), C(-6));
    b.store(y2, out, b.load(x, Add(row, Add(Div(inner, C(5)), C(2)))));
    b.store(y3, out, b.load(x, Add(row, Mul(Mod(V(1), C(4)), Div(V(1), C(9))))));
    const Kernel k = b.build();
    for (const std::string& isa : isas()) EXPECT_EQ(lane_index_gathers(k, isa), 3) << isa;
    expect_jit_matches(
        k,
        testing::tensors(random_tensor(DType::F32, rows * stride, 60),
                         testing::zeros(DType::F32, rows * w), testing::zeros(DType::F32, rows * w),
                         testing::zeros(DType::F32, rows * w)),
        0);
  }
  {
    // GatherElements-like: a quotient of a checked per-lane index value, and a remainder of
    // that value plus the vector variable.
    const int64_t rows = 3, n = 37, w = 30, stride = 20;
    KernelBuilder b({rows, n});
    const int ids = b.arg(DType::I64, rows * n), x = b.arg(DType::F32, rows * stride),
              y = b.arg(DType::F32, rows * n, true);
    const int id = b.check_index(b.load(ids, Affine({{0, n}, {1, 1}})), w, "GatherElements 'g'");
    b.store(y, Affine({{0, n}, {1, 1}}),
            b.load(x, Add(Affine({{0, stride}}), Add(Mul(Div(ix_value(id), C(3)), C(2)),
                                                     Mod(Add(ix_value(id), V(1)), C(2))))));
    const Kernel k = b.build();
    for (const std::string& isa : isas()) EXPECT_EQ(lane_index_gathers(k, isa), 1) << isa;
    std::vector<int64_t> vals(rows * n);
    for (int64_t i = 0; i < rows * n; ++i) vals[i] = (i * 7) % (2 * w) - w;  // [-w, w)
    expect_jit_matches(k,
                       testing::tensors(testing::make_tensor<int64_t>(DType::I64, vals),
                                        random_tensor(DType::F32, rows * stride, 62),
                                        testing::zeros(DType::F32, rows * n)),
                       0);
  }
  {
    const int64_t n = 40, r = 7;
    KernelBuilder b({n, r}, 1);
    const int x = b.arg(DType::F32, (n / 3 + 1) * r), y = b.arg(DType::F32, n, true);
    const int red = b.reduce(
        ReduceKind::Max, b.load(x, Add(Mul(Mod(Div(V(0), C(3)), C(5)), C(r)), Affine({{1, 1}}))));
    b.post();
    b.store(y, V(0), red);
    const Kernel k = b.build();
    for (const std::string& isa : isas()) {
      jit::Mode mode = jit::Mode::Pointwise;
      EXPECT_EQ(lane_index_gathers(k, isa, &mode), 1) << isa;
      EXPECT_EQ(mode, jit::Mode::LanesOuter) << isa;
    }
    expect_jit_matches(k,
                       testing::tensors(random_tensor(DType::F32, (n / 3 + 1) * r, 61),
                                        testing::zeros(DType::F32, n)),
                       0);
  }
}

TEST(JitKernel, RefusesWhatAPerLaneDivisionCannotDo) {
  // Stores through a per-lane quotient (a scatter whose lanes collide), bool elements, a
  // divisor not proven constant, and a masked load whose index is not proven inside: left to
  // the portable backend, each with its reason.
  using testing::Div;
  using testing::Mod;
  const int64_t w = 37;
  auto refusal = [&](DType load_type, bool store_divides, bool value_divisor, bool masked) {
    KernelBuilder b({w});
    const int x = b.arg(load_type, w + 8), p = b.arg(DType::I64, 1), y = b.arg(DType::F32, w, true);
    Index at = Div(V(0), C(3));
    if (value_divisor) {
      const int d = b.check_index(b.load(p, C(0)), 4, "d");
      at = Div(V(0), testing::Add(ix_value(d), C(1)));
    }
    int mask = -1;
    if (masked) {
      at = testing::Add(Mod(V(0), C(5)), C(w + 4));  // [41, 45]: past the end when 4
      mask = b.binary(Op::Lt, b.loop_var(0), b.constant(ScalarType::I64, 3));
    }
    int v = b.load(x, at, mask);
    if (load_type != DType::F32) v = b.cast(ScalarType::F32, v);
    b.store(y, store_divides ? Div(V(0), C(3)) : V(0), v);
    const Kernel k = b.build();
    std::string out;
    for (const std::string& isa : isas()) {
      const std::string why = jit::jit_refusal(k, isa);
      EXPECT_TRUE(out.empty() || why == out) << why << " / " << out;
      out = why;
    }
    return out;
  };
  if (isas().empty()) GTEST_SKIP() << "the CPU has neither AVX2 nor AVX-512";
  EXPECT_EQ(refusal(DType::F32, false, false, false), "");
  EXPECT_NE(refusal(DType::F32, true, false, false)
                .find("a store through a per-lane product, quotient or remainder (scatter)"),
            std::string::npos);
  EXPECT_NE(refusal(DType::Bool, false, false, false)
                .find("a per-lane product, quotient or remainder indexing a non-32-bit type"),
            std::string::npos);
  EXPECT_NE(refusal(DType::F32, false, true, false)
                .find("a per-lane division by a divisor not proven a positive int32 constant"),
            std::string::npos);
  EXPECT_NE(refusal(DType::F32, false, false, true).find("an index not provably inside arg 0"),
            std::string::npos);
}

TEST(JitKernel, MixedStorageTypes) {
  // Bool, f16, i32 and u8 loads; bool, f16, i32 and i64 stores; a LoopVar iota.
  const int64_t n = 45;
  KernelBuilder b({n});
  const int m = b.arg(DType::Bool, n), h = b.arg(DType::F16, n), q = b.arg(DType::I32, n),
            u = b.arg(DType::U8, n), ob = b.arg(DType::Bool, n, true),
            oh = b.arg(DType::F16, n, true), oq = b.arg(DType::I32, n, true),
            ol = b.arg(DType::I64, n, true);
  const int mv = b.load(m, V(0)), hv = b.load(h, V(0)), qv = b.load(q, V(0)), uv = b.load(u, V(0));
  const int iota = b.loop_var(0);
  const int sum = b.binary(Op::Add, b.binary(Op::Mul, uv, iota), uv);  // fits in int32
  b.store(ob, V(0), b.binary(Op::And, mv, b.binary(Op::Gt, hv, b.constant(ScalarType::F32, 0))));
  b.store(oh, V(0), b.where(mv, hv, b.cast(ScalarType::F32, sum)));
  b.store(oq, V(0), b.binary(Op::Max, qv, sum));
  b.store(ol, V(0), b.binary(Op::Sub, iota, uv));
  expect_jit_matches(
      b.build(),
      testing::tensors(random_tensor(DType::Bool, n, 13), random_tensor(DType::F16, n, 14),
                       random_tensor(DType::I32, n, 15, -100, 100),
                       random_tensor(DType::U8, n, 16, 0, 255), testing::zeros(DType::Bool, n),
                       testing::zeros(DType::F16, n), testing::zeros(DType::I32, n),
                       testing::zeros(DType::I64, n)));
}

TEST(JitKernel, SoftmaxThreeInnerLoops) {
  for (int64_t n : {10, 128}) {
    const int64_t r = 6;
    KernelBuilder b({r, n}, 1);
    const int x = b.arg(DType::F32, r * n), y = b.arg(DType::F32, r * n, true);
    const Index at = Affine({{0, n}, {1, 1}});
    const int mx = b.reduce(ReduceKind::Max, b.load(x, at));
    b.end_loop();
    const int d = b.binary(Op::Sub, b.load(x, at), mx);
    const int sq = b.binary(Op::Mul, d, d);
    const int s = b.reduce(ReduceKind::Sum, sq);
    b.end_loop();
    b.store(y, at,
            b.binary(Op::Div,
                     b.binary(Op::Mul, b.binary(Op::Sub, b.load(x, at), mx),
                              b.binary(Op::Sub, b.load(x, at), mx)),
                     s));
    b.post();
    expect_jit_matches(
        b.build(),
        testing::tensors(random_tensor(DType::F32, r * n, 17), testing::zeros(DType::F32, r * n)),
        64);
  }
}

TEST(JitKernel, LargeKernelsSplitAcrossThreads) {
  // Big enough for two threads: a 1-D pointwise kernel (split along the vector dim) and a
  // row reduction (split by rows); expect_jit_matches runs 1 and 2 threads.
  const int64_t n = 100003;
  KernelBuilder b({n});
  const int x = b.arg(DType::F32, n), y = b.arg(DType::F32, n, true);
  b.store(y, V(0), b.binary(Op::Mul, b.load(x, V(0)), b.load(x, V(0))));
  expect_jit_matches(
      b.build(), testing::tensors(random_tensor(DType::F32, n, 18), testing::zeros(DType::F32, n)));
  KernelBuilder c({64, 1031}, 1);
  const int x2 = c.arg(DType::F32, 64 * 1031), y2 = c.arg(DType::F32, 64, true);
  const int s = c.reduce(ReduceKind::Sum, c.load(x2, Affine({{0, 1031}, {1, 1}})));
  c.post();
  c.store(y2, V(0), s);
  expect_jit_matches(c.build(),
                     testing::tensors(random_tensor(DType::F32, 64 * 1031, 19, 0, 1),
                                      testing::zeros(DType::F32, 64)),
                     256);
}

TEST(JitKernel, TheCodeCacheForgetsCodeNoKernelHolds) {
  // A process that compiles ever new kernels (a server loading models, a fuzzer) must not
  // keep every kernel's key: 1000 distinct kernels, each freed at once, leave a bounded
  // number of keys; code still held stays cached.
  if (isas().empty()) GTEST_SKIP() << "the CPU has neither AVX2 nor AVX-512";
  auto kernel = [](int64_t c) {
    KernelBuilder b({64});
    const int x = b.arg(DType::F32, 64), y = b.arg(DType::F32, 64, true);
    b.store(y, V(0), b.binary(Op::Add, b.load(x, V(0)), b.constant(ScalarType::F32, c)));
    return b.build();
  };
  auto backend = jit::make_jit_backend(BackendOptions{isas()[0], 1, "", false, nullptr});
  const std::unique_ptr<PreparedKernel> held = backend->prepare(kernel(-1));
  const size_t before = jit::cached_code_keys();
  for (int64_t c = 0; c < 1000; ++c) backend->prepare(kernel(c));
  EXPECT_LE(jit::cached_code_keys(), before + 130);  // pruned at 64, 128, ...: not 1000
  std::vector<float> x(64, 1.0f), y(64, 0.0f);
  void* args[] = {x.data(), y.data()};
  backend->prepare(kernel(-1))->run(args);  // the held kernel's code, reused
  EXPECT_EQ(y[5], 0.0f);
  held->run(args);
  EXPECT_EQ(y[5], 0.0f);
}

TEST(JitKernel, DumpListsTheMachineCode) {
  // With a dump dir each compiled kernel writes 80_jit_<n>_<name>.txt (plan, kernel, then
  // "code:" and the listing of its machine code, "constants:" and its constant pool) and
  // 80_jit_<n>.bin (the code itself).
  namespace fs = std::filesystem;
  if (isas().empty()) GTEST_SKIP() << "the CPU has neither AVX2 nor AVX-512";
  for (const std::string& isa : isas()) {
    SCOPED_TRACE("isa " + isa);
    const fs::path dir =
        fs::temp_directory_path() / ("ferrite_jit_dump_" + isa + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    KernelBuilder b({64});
    const int x = b.arg(DType::F32, 64), y = b.arg(DType::F32, 64, true);
    const int x0 = b.load(x, V(0));
    b.store(y, V(0), b.binary(Op::Mul, b.binary(Op::Add, x0, x0), b.unary(Op::Abs, x0)));
    jit::make_jit_backend(BackendOptions{isa, 1, dir.string(), false, nullptr})->prepare(b.build());
    std::ifstream txt(dir / "80_jit_0_test.txt");
    ASSERT_TRUE(txt) << "no 80_jit_0_test.txt in " << dir;
    std::stringstream ss;
    ss << txt.rdbuf();
    const std::string text = ss.str();
    const size_t code = text.find("\ncode:\n");
    ASSERT_NE(code, std::string::npos) << text;
    const std::string listing = text.substr(code + 7);
    const uintmax_t bytes = fs::file_size(dir / "80_jit_0.bin");
    EXPECT_NE(text.find(", " + std::to_string(bytes) + " bytes of code\n"), std::string::npos)
        << text;
    if (jit::disassembler_available()) {
      EXPECT_EQ(listing.rfind("     0:  ", 0), 0u) << listing;  // offsets from the start
      EXPECT_NE(listing.find("vaddps"), std::string::npos) << listing;
      EXPECT_NE(listing.find("vmovups"), std::string::npos) << listing;
      // The instructions end with the return (and nops up to the pool's 64-byte alignment);
      // the constant pool after them is listed as data (Abs's mask 0x7fffffff in every
      // lane), not decoded as instructions.
      const size_t pool = listing.find("\nconstants:\n");
      ASSERT_NE(pool, std::string::npos) << listing;
      const size_t ret = listing.rfind("ret\n", pool);
      ASSERT_NE(ret, std::string::npos) << listing;
      std::istringstream padding(listing.substr(ret + 4, pool + 1 - (ret + 4)));
      for (std::string line; std::getline(padding, line);)  // up to the pool's alignment
        EXPECT_NE(line.find(" nop"), std::string::npos) << line;
      EXPECT_NE(listing.find("7fffffff 7fffffff 7fffffff 7fffffff  ; nan nan nan nan\n", pool),
                std::string::npos)
          << listing;
    } else {
      EXPECT_NE(listing.find("hex dump only"), std::string::npos) << listing;
    }
    fs::remove_all(dir);
  }
}

}  // namespace
}  // namespace ferrite
