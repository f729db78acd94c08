// The MatMul extern: the reference against a naive loop written here (double accumulation),
// the portable GEMM against the reference, over tails, transposed strides, broadcast batch
// (stride 0), alpha, K = 0, and the operand checks.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "compiler/plan/error.h"
#include "runtime/kernels/portable/portable_backend.h"
#include "runtime/kernels/reference/reference_backend.h"
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
  call.op = "MatMul";
  call.inputs = {a.ref, b.ref};
  call.outputs = {out_ref.ref};
  if (c.alpha != 1) call.floats["alpha"] = c.alpha;
  ExternBuffer in[2] = {a.buffer(), b.buffer()};
  ExternBuffer o1 = out_ref.buffer(), o2 = out_port.buffer();
  reference_extern("MatMul")(call, in, &o1);
  portable_extern("MatMul")(call, in, &o2);
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

TEST(MatMul, RejectsBadOperands) {
  Operand a = make_operand({}, 2, 3, false, false, 1), b = make_operand({}, 4, 5, false, false, 2);
  Operand c = make_operand({}, 2, 5, false, false, 3);
  ExternCall call;
  call.op = "MatMul";
  call.inputs = {a.ref, b.ref};
  call.outputs = {c.ref};
  ExternBuffer in[2] = {a.buffer(), b.buffer()};
  ExternBuffer out = c.buffer();
  for (ExternFn fn : {reference_extern("MatMul"), portable_extern("MatMul")}) {
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
