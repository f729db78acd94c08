// The MatMul extern: the reference against a naive loop written here (double accumulation),
// the portable GEMM against the reference, over tails, transposed strides, broadcast batch
// (stride 0), alpha, K = 0, and the operand checks; then every way the portable backend runs
// a call (one-shot, prepared, with B a constant packed at prepare time, on two threads) over
// GEMV-like shapes, every tile remainder, K blocks, batches and strided operands, on every
// SIMD target, with two threads bitwise equal to one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "compiler/plan/error.h"
#include "runtime/kernels/portable/portable_backend.h"
#include "runtime/kernels/reference/reference_backend.h"
#include "tests/unit/runtime/extern_runs.h"
#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace {

struct Operand {
  std::vector<float> data;
  TensorRef ref;
  ExternBuffer buffer() {
    return ExternBuffer{data.data(), DType::F32, static_cast<int64_t>(data.size())};
  }
};

// A [batch..., rows, cols] operand; `transposed` stores it column-major in its last two dims;
// `broadcast` gives the batch dims stride 0 (one matrix shared by every batch item).
Operand make_operand(std::vector<int64_t> batch, int64_t rows, int64_t cols, bool transposed,
                     bool broadcast, unsigned seed) {
  Operand o;
  int64_t count = 1;
  for (int64_t d : batch) count *= d;
  const int64_t matrices = broadcast ? 1 : count;
  o.data.resize(static_cast<size_t>(matrices * rows * cols));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& x : o.data) x = dist(rng);
  o.ref.shape = batch;
  o.ref.shape.push_back(rows);
  o.ref.shape.push_back(cols);
  int64_t stride = rows * cols;
  for (size_t d = batch.size(); d-- > 0;) {
    o.ref.strides.insert(o.ref.strides.begin(), broadcast ? 0 : stride);
    stride *= batch[d];
  }
  o.ref.strides.push_back(transposed ? 1 : cols);
  o.ref.strides.push_back(transposed ? rows : 1);
  return o;
}

float at(const Operand& o, int64_t b, int64_t i, int64_t j, int64_t batch_dim) {
  // Single batch dim (or none) in these tests.
  const size_t r = o.ref.shape.size();
  int64_t off = i * o.ref.strides[r - 2] + j * o.ref.strides[r - 1];
  if (batch_dim) off += b * o.ref.strides[0];
  return o.data[static_cast<size_t>(off)];
}

struct Case {
  int64_t batch, m, k, n;
  bool ta, tb, bcast_b;
  double alpha;
};

void run_case(const Case& c) {
  const std::vector<int64_t> batch =
      c.batch ? std::vector<int64_t>{c.batch} : std::vector<int64_t>{};
  Operand a = make_operand(batch, c.m, c.k, c.ta, false, 1);
  Operand b = make_operand(batch, c.k, c.n, c.tb, c.bcast_b, 2);
  Operand out_ref = make_operand(batch, c.m, c.n, false, false, 3);
  Operand out_port = out_ref;
  ExternCall call;
  call.op = ExternOp::MatMul;
  call.inputs = {a.ref, b.ref};
  call.outputs = {out_ref.ref};
  if (c.alpha != 1) call.floats["alpha"] = c.alpha;
  ExternBuffer in[2] = {a.buffer(), b.buffer()};
  ExternBuffer o1 = out_ref.buffer(), o2 = out_port.buffer();
  run_reference_extern(call, in, &o1);
  run_backend_extern("portable", call, in, &o2);
  const std::string what = "batch " + std::to_string(c.batch) + " m " + std::to_string(c.m) +
                           " k " + std::to_string(c.k) + " n " + std::to_string(c.n);
  const int64_t nb = std::max<int64_t>(c.batch, 1);
  for (int64_t bi = 0; bi < nb; ++bi) {
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        double want = 0;
        for (int64_t p = 0; p < c.k; ++p)
          want += static_cast<double>(at(a, bi, i, p, c.batch)) * at(b, bi, p, j, c.batch);
        want *= c.alpha;
        const double tol = 1e-5 * std::sqrt(static_cast<double>(c.k) + 1) * 4;
        const float r = at(out_ref, bi, i, j, c.batch), p = at(out_port, bi, i, j, c.batch);
        ASSERT_NEAR(r, want, tol) << "reference " << what << " at " << i << "," << j;
        ASSERT_NEAR(p, r, tol) << "portable " << what << " at " << i << "," << j;
      }
    }
  }
}

TEST(MatMul, ReferenceAndPortableMatchNaive) {
  testing::for_each_simd_target([&] {
    const Case cases[] = {
        {0, 1, 1, 1, false, false, false, 1},       {0, 7, 13, 33, false, false, false, 1},
        {0, 6, 256, 32, false, false, false, 1},    {0, 97, 300, 70, false, false, false, 0.5},
        {0, 23, 17, 19, true, false, false, 1},     {0, 23, 17, 19, false, true, false, 1},
        {0, 31, 40, 50, true, true, false, 2},      {3, 5, 9, 18, false, false, false, 1},
        {4, 13, 20, 7, false, false, true, 1},      {2, 9, 600, 1100, false, true, true, 1},
        {0, 128, 128, 128, false, false, false, 1},
    };
    for (const Case& c : cases) run_case(c);
  });
}

TEST(MatMul, EmptyInnerDimGivesZeros) {
  Case c{2, 3, 0, 5, false, false, false, 1};
  run_case(c);  // the naive loop gives 0 too
}

// One call with its operands: the ways the backends can run it.
struct Call {
  ExternCall call;
  std::vector<Operand> ins;
  Operand out;
};

Call make_call(const Case& c, bool tc = false, bool bcast_a = false,
               std::vector<int64_t> batch = {}) {
  if (batch.empty() && c.batch) batch = {c.batch};
  Call k;
  k.ins.push_back(make_operand(batch, c.m, c.k, c.ta, bcast_a, 11));
  k.ins.push_back(make_operand(batch, c.k, c.n, c.tb, c.bcast_b, 12));
  k.out = make_operand(batch, c.m, c.n, tc, false, 13);
  k.call.op = ExternOp::MatMul;
  k.call.inputs = {k.ins[0].ref, k.ins[1].ref};
  k.call.outputs = {k.out.ref};
  if (c.alpha != 1) k.call.floats["alpha"] = c.alpha;
  return k;
}

enum class Way { Reference, Prepared, ConstantB, TwoThreads };

// The output buffer after running `k` the way `way` says (prepared forms run twice: the
// second run reuses packed weights and scratch).
std::vector<float> run_way(Call& k, Way way) {
  Operand out = k.out;
  std::fill(out.data.begin(), out.data.end(), NAN);
  std::vector<ExternBuffer> in;
  for (Operand& o : k.ins) in.push_back(o.buffer());
  ExternBuffer ob = out.buffer();
  std::vector<ExternBuffer> constants(in.size());
  constants[1] = in[1];
  BackendOptions two;
  two.threads = 2;
  switch (way) {
    case Way::Reference:
      run_reference_extern(k.call, in.data(), &ob);
      break;
    case Way::Prepared:
    case Way::ConstantB:
    case Way::TwoThreads: {
      auto backend = make_backend("portable", way == Way::TwoThreads ? two : BackendOptions());
      auto prepared = backend->prepare_extern(
          k.call, way == Way::Prepared ? std::vector<ExternBuffer>() : constants);
      for (int run = 0; run < 2; ++run) prepared->run(in.data(), &ob);
      break;
    }
  }
  return out.data;
}

// Every portable way against the reference (tolerance for K-term sums of values in [-1, 1]
// times alpha), and two threads bitwise equal to one.
void check_ways(Call& k, int64_t depth, const std::string& what) {
  SCOPED_TRACE(what);
  const std::vector<float> want = run_way(k, Way::Reference);
  const double tol =
      2e-5 * std::sqrt(static_cast<double>(depth) + 1) * 4 *
      std::max(1.0, std::fabs(k.call.floats.count("alpha") ? k.call.floats.at("alpha") : 1.0));
  testing::for_each_simd_target([&] {
    std::vector<float> one;
    for (Way way : {Way::Prepared, Way::ConstantB, Way::TwoThreads}) {
      const std::vector<float> got = run_way(k, way);
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], tol) << "way " << static_cast<int>(way) << " at " << i;
      if (way == Way::ConstantB) one = got;
      if (way == Way::TwoThreads) {
        ASSERT_EQ(std::memcmp(got.data(), one.data(), got.size() * sizeof(float)), 0)
            << "two threads differ from one";
      }
    }
  });
}

std::string case_text(const Case& c) {
  return "batch " + std::to_string(c.batch) + " m " + std::to_string(c.m) + " k " +
         std::to_string(c.k) + " n " + std::to_string(c.n) + (c.ta ? " At" : "") +
         (c.tb ? " Bt" : "") + (c.bcast_b ? " B shared" : "");
}

TEST(MatMul, GemvLikeShapesEveryWay) {
  // Few rows read B in place (unless it is transposed or packed), with a packed tail panel.
  // One row takes four whole panels at a time (520 columns: two groups on AVX-512, 16 and a
  // remainder on 8-wide targets, with a partial panel last).
  for (int64_t m : {1, 2, 5, 7})
    for (int64_t n : {1, 31, 64, 65, 200, 520})
      for (bool tb : {false, true}) {
        const Case c{0, m, n == 65 || n == 520 ? 300 : 37, n, false, tb, false, 1};
        Call k = make_call(c);
        check_ways(k, c.k, case_text(c));
        if (HasFatalFailure()) return;
      }
}

TEST(MatMul, OneRowIsBitwiseItsRowOfATallerProduct) {
  // A single row of A runs four B panels at a time (MicroRow), two rows the plain tiles:
  // each element must be summed in the same order either way. A constant B is packed in row
  // groups for the single row only, so its way compares the two layouts too; with 1100
  // columns two threads split C inside a row group (AVX-512: 18 panels, 9 each).
  for (int64_t n : {520, 1100})
    for (bool tb : {false, true}) {
      const Case two{0, 2, 300, n, false, tb, false, 1}, one{0, 1, 300, n, false, tb, false, 1};
      Call k2 = make_call(two), k1 = make_call(one);
      std::copy_n(k2.ins[0].data.begin(), one.k, k1.ins[0].data.begin());
      k1.ins[1].data = k2.ins[1].data;
      testing::for_each_simd_target([&] {
        for (Way way : {Way::Prepared, Way::ConstantB, Way::TwoThreads}) {
          const std::vector<float> rows = run_way(k2, way), row = run_way(k1, way);
          ASSERT_EQ(std::memcmp(row.data(), rows.data(), row.size() * sizeof(float)), 0)
              << "n " << n << (tb ? " Bt" : "") << " way " << static_cast<int>(way);
        }
      });
      if (HasFatalFailure()) return;
    }
}

TEST(MatMul, TileRemaindersAndKBlocksEveryWay) {
  // M, N and K around the tile (5 or 6 rows; 32 or 64 columns), the A block (80 or 96
  // rows), the K block (256) and the B block (about 1024 columns). Two threads split C by
  // columns, except 200 x 70 x 20 on AVX-512: one 64-column panel, so by rows.
  const Case cases[] = {
      {0, 6, 256, 64, false, false, false, 1},    {0, 13, 257, 47, false, false, false, 1},
      {0, 97, 513, 129, false, false, false, 1},  {0, 17, 1, 17, false, false, false, 1},
      {0, 23, 255, 1030, false, false, false, 1}, {0, 200, 70, 20, false, false, false, 1},
      {0, 12, 300, 100, true, true, false, -0.5}, {0, 9, 270, 70, true, false, false, 2},
  };
  for (const Case& c : cases) {
    Call k = make_call(c);
    check_ways(k, c.k, case_text(c));
    if (HasFatalFailure()) return;
  }
}

TEST(MatMul, BatchedAndStridedEveryWay) {
  // Batch items split over threads; B shared by the batch (packed once per run, or once at
  // prepare as a constant); A shared; several batch dims; C written transposed.
  struct Variant {
    Case c;
    bool tc, bcast_a;
    std::vector<int64_t> batch;
  } variants[] = {
      {{3, 13, 40, 70, false, false, true, 1}, false, false, {}},
      {{4, 64, 300, 96, false, true, true, 1}, false, false, {}},
      {{5, 2, 50, 80, false, false, true, 1}, false, false, {}},
      {{0, 9, 33, 41, true, true, false, 1}, true, false, {2, 3}},
      {{0, 31, 20, 66, false, false, false, 1}, true, true, {3}},
  };
  for (Variant& v : variants) {
    Call k = make_call(v.c, v.tc, v.bcast_a, v.batch);
    check_ways(k, v.c.k,
               case_text(v.c) + (v.tc ? " Ct" : "") + (v.bcast_a ? " A shared" : "") +
                   " batch dims " + std::to_string(v.batch.size()));
    if (HasFatalFailure()) return;
  }
}

TEST(MatMul, WeightPackedForOneTargetRunsOnEvery) {
  // Packed at prepare under the best target, run under each: a packing for another geometry
  // is never used as it is.
  const Case c{0, 20, 300, 90, false, false, false, 1};
  Call k = make_call(c);
  const std::vector<float> want = run_way(k, Way::Reference);
  std::vector<ExternBuffer> in = {k.ins[0].buffer(), k.ins[1].buffer()};
  std::vector<ExternBuffer> constants = {ExternBuffer{}, in[1]};
  auto prepared = make_backend("portable")->prepare_extern(k.call, constants);
  testing::for_each_simd_target([&] {
    Operand out = k.out;
    ExternBuffer ob = out.buffer();
    prepared->run(in.data(), &ob);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(out.data[i], want[i], 1e-4) << i;
  });
}

TEST(MatMul, PackedWeightRunsWithoutItsBuffer) {
  // A constant B packed at prepare is never read again (constants_copied): the call runs
  // with B's buffer freed, as a Session runs it; batched, with a shared B.
  const Case c{3, 20, 300, 90, false, false, true, 1};
  Call k = make_call(c);
  const std::vector<float> want = run_way(k, Way::Reference);
  std::vector<ExternBuffer> in = {k.ins[0].buffer(), k.ins[1].buffer()};
  auto prepared = make_backend("portable")->prepare_extern(k.call, {ExternBuffer{}, in[1]});
  EXPECT_EQ(prepared->constants_copied(), std::vector<size_t>{1});
  in[1].data = nullptr;
  Operand out = k.out;
  ExternBuffer ob = out.buffer();
  prepared->run(in.data(), &ob);
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(out.data[i], want[i], 1e-4) << i;
}

TEST(MatMul, RejectsBadOperands) {
  Operand a = make_operand({}, 2, 3, false, false, 1), b = make_operand({}, 4, 5, false, false, 2);
  Operand c = make_operand({}, 2, 5, false, false, 3);
  ExternCall call;
  call.op = ExternOp::MatMul;
  call.inputs = {a.ref, b.ref};
  call.outputs = {c.ref};
  ExternBuffer in[2] = {a.buffer(), b.buffer()};
  ExternBuffer out = c.buffer();
  using Run = void (*)(const ExternCall&, const ExternBuffer*, const ExternBuffer*);
  const Run portable = [](const ExternCall& x, const ExternBuffer* i, const ExternBuffer* o) {
    run_backend_extern("portable", x, i, o);
  };
  for (Run fn : {run_reference_extern, portable}) {
    EXPECT_THROW(fn(call, in, &out), Error);  // K mismatch: 3 vs 4
    ExternBuffer bad_type[2] = {a.buffer(), b.buffer()};
    bad_type[0].dtype = DType::F64;
    ExternCall ok = call;
    ok.inputs[1] = make_operand({}, 3, 5, false, false, 2).ref;
    try {
      fn(ok, bad_type, &out);
      ADD_FAILURE() << "no error for f64";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), "MatMul: dtype float64 unsupported");
    }
    ExternBuffer small[2] = {a.buffer(), b.buffer()};
    small[0].elements = 5;  // A needs 6 elements
    EXPECT_THROW(fn(ok, small, &out), Error);
  }
}

}  // namespace
}  // namespace ferrite
