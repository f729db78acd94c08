// The JIT's pairwise sums (emitter_reduce.cc) in each of its loop nests, for every ISA this
// CPU runs, 1 and 2 threads: LanesOuter with the reference's leaves and tree gives its bits;
// LanesInner over long rows (a leaf per block of a row) and over short rows (a leaf per
// group of rows) stays within a few ulps of it; several Sums and a Max in one inner loop,
// and a Sum in the second inner loop of a fused kernel, each keep their own accumulator;
// an index with a floor-div or modulo term keeps the leaf counters intact.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "compiler/plan/pairwise_sum.h"
#include "jit/cpu_isa.h"
#include "jit/jit_backend.h"
#include "jit/kernel_analysis.h"
#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace {

using testing::Affine;
using testing::C;
using testing::KernelBuilder;
using testing::V;

std::vector<jit::Isa> isas() {
  std::vector<jit::Isa> out;
  for (jit::Isa isa : {jit::Isa::Avx2, jit::Isa::Avx512})
    if (jit::host_supports(isa)) out.push_back(isa);
  return out;
}

Tensor uniform(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0, 1);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = u(rng);
  return testing::make_tensor(DType::F32, v);
}

// Checks the loop nest the JIT picks, then every arg against the reference: bit for bit
// when ulps is 0, else floats within `ulps`.
void expect_matches(const Kernel& k, const std::vector<Tensor>& buffers, jit::Mode mode,
                    double ulps) {
  const std::vector<Tensor> want = testing::run_kernel("reference", k, buffers);
  for (jit::Isa isa : isas()) {
    const std::string name = isa == jit::Isa::Avx2 ? "avx2" : "avx512";
    SCOPED_TRACE("isa " + name);
    jit::Layout layout;
    ASSERT_EQ(jit::analyze_kernel(k, isa, &layout), "");
    EXPECT_EQ(layout.mode, mode);
    for (int threads : {1, 2}) {
      BackendOptions options;
      options.isa = name;
      options.threads = threads;
      std::vector<Tensor> got;
      std::vector<void*> args;
      for (const Tensor& t : buffers) got.push_back(testing::copy_of(t));
      for (Tensor& t : got) args.push_back(t.data());
      jit::make_jit_backend(options)->prepare(k)->run(args.data());
      for (size_t a = 0; a < want.size(); ++a) {
        if (ulps > 0) {
          testing::expect_close(want[a], got[a], ulps, 0, "arg " + std::to_string(a));
        } else {
          EXPECT_EQ(0, std::memcmp(want[a].data(), got[a].data(), want[a].nbytes())) << "arg " << a;
        }
      }
    }
  }
}

TEST(JitPairwise, LanesOuterIsTheReferenceBitForBit) {
  // 24 columns (a full vector and a tail) summed over 5000 steps: leaves of kPairwiseLeaf
  // steps and a partial last one; and exactly 128 steps, one leaf.
  for (int64_t n : {int64_t{5000}, kPairwiseLeaf}) {
    const int64_t cols = 24;
    KernelBuilder b({cols, n}, 1);
    const int x = b.arg(DType::F32, cols * n), y = b.arg(DType::F32, cols, true);
    const int s = b.reduce(ReduceKind::Sum, b.load(x, Affine({{1, cols}, {0, 1}})));
    b.post();
    b.store(y, V(0), s);
    SCOPED_TRACE(n);
    expect_matches(b.build(),
                   testing::tensors(uniform(cols * n, 1), testing::zeros(DType::F32, cols)),
                   jit::Mode::LanesOuter, 0);
  }
}

TEST(JitPairwise, LanesInnerLongAndShortRows) {
  // Long rows: 3 rows of 5000 (AVX-512: 313 vectors, leaves of 128, 128 and 57 vectors).
  {
    const int64_t rows = 3, n = 5000;
    KernelBuilder b({rows, n}, 1);
    const int x = b.arg(DType::F32, rows * n), y = b.arg(DType::F32, rows, true);
    const int s = b.reduce(ReduceKind::Sum, b.load(x, Affine({{0, n}, {1, 1}})));
    b.post();
    b.store(y, V(0), s);
    expect_matches(b.build(),
                   testing::tensors(uniform(rows * n, 2), testing::zeros(DType::F32, rows)),
                   jit::Mode::LanesInner, 8);
  }
  // Short rows: 2 outputs, each 700 padded rows of 20 (2 or 3 vectors a row, a leaf per
  // 64 or 42 rows and a partial last one).
  {
    const int64_t outs = 2, h = 700, w = 20;
    KernelBuilder b({outs, h, w}, 2);
    const int x = b.arg(DType::F32, outs * h * (w + 1)), y = b.arg(DType::F32, outs, true);
    const int s =
        b.reduce(ReduceKind::Sum, b.load(x, Affine({{0, h * (w + 1)}, {1, w + 1}, {2, 1}})));
    b.post();
    b.store(y, V(0), s);
    expect_matches(
        b.build(),
        testing::tensors(uniform(outs * h * (w + 1), 3), testing::zeros(DType::F32, outs)),
        jit::Mode::LanesInner, 8);
  }
}

TEST(JitPairwise, SeveralReducesAndInnerLoops) {
  // One loop: sum, sum of squares and max of each long row; a second loop: sum(exp(x - max)).
  const int64_t rows = 2, n = 9000;
  KernelBuilder b({rows, n}, 1);
  const int x = b.arg(DType::F32, rows * n);
  const int out = b.arg(DType::F32, rows * 4, true);
  const int v = b.load(x, Affine({{0, n}, {1, 1}}));
  const int s = b.reduce(ReduceKind::Sum, v);
  const int q = b.reduce(ReduceKind::Sum, b.binary(Op::Mul, v, v));
  const int m = b.reduce(ReduceKind::Max, v);
  b.end_loop();
  const int e = b.reduce(
      ReduceKind::Sum, b.unary(Op::Exp, b.binary(Op::Sub, b.load(x, Affine({{0, n}, {1, 1}})), m)));
  b.post();
  b.store(out, Affine({{0, 4}}, 0), s);
  b.store(out, Affine({{0, 4}}, 1), q);
  b.store(out, Affine({{0, 4}}, 2), m);
  b.store(out, Affine({{0, 4}}, 3), e);
  expect_matches(b.build(),
                 testing::tensors(uniform(rows * n, 4), testing::zeros(DType::F32, rows * 4)),
                 jit::Mode::LanesInner, 16);
}

TEST(JitPairwise, ShortRowsReadThroughAModuloIndex) {
  // Every step reads x[(i0 % 5) * 6 + i1] over 1080 rows of 6 (a leaf per 512 rows). The
  // index's modulo is evaluated in stack slots that once overlapped the leaf counters, so
  // the sum read levels never written (a fuzz_onnx_run finding: NegativeLogLikelihoodLoss
  // over a reshaped log-probability tensor).
  for (int64_t rows : {int64_t{513}, int64_t{1080}}) {
    SCOPED_TRACE(rows);
    const int64_t w = 6;
    KernelBuilder b({rows, w}, 2);
    const int x = b.arg(DType::F32, 5 * w), y = b.arg(DType::F32, 1, true);
    const Index at = testing::Add(testing::Mul(testing::Mod(V(0), C(5)), C(w)), V(1));
    const int s = b.reduce(ReduceKind::Sum, b.load(x, at));
    b.post();
    b.store(y, C(0), s);
    expect_matches(b.build(), testing::tensors(uniform(5 * w, 5), testing::zeros(DType::F32, 1)),
                   jit::Mode::LanesInner, 8);
  }
}

}  // namespace
}  // namespace ferrite
