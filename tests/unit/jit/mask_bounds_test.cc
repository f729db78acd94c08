// Masked Loads whose index leaves the arg where the mask is false (issue 25, C1): the JIT
// proves the compiler's masks keep every read inside (so their code has no checks), checks
// the lanes of any other masked read at run time, failing as the reference does, and
// refuses indices too large to compare as addresses.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "compiler/plan/error.h"
#include "jit/cpu_isa.h"
#include "jit/jit_backend.h"
#include "jit/kernel_analysis.h"
#include "jit/mask_bounds.h"
#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace {

using testing::Affine;
using testing::KernelBuilder;
using testing::V;

const ScalarType kI = ScalarType::I64;

std::vector<std::string> isas() {
  std::vector<std::string> out;
  if (jit::host_supports(jit::Isa::Avx2)) out.push_back("avx2");
  if (jit::host_supports(jit::Isa::Avx512)) out.push_back("avx512");
  return out;
}

Tensor iota(int64_t n) {
  Tensor t(DType::F32, {n});
  float* p = reinterpret_cast<float*>(t.data());
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(i % 97);
  return t;
}

// lo <= value < hi, as the compiler's masks are built.
int inside(KernelBuilder& b, int value, int64_t lo, int64_t hi) {
  return b.binary(Op::And, b.binary(Op::Ge, value, b.constant(kI, static_cast<double>(lo))),
                  b.binary(Op::Lt, value, b.constant(kI, static_cast<double>(hi))));
}

// Max pooling of a [3, h, w] image, window 3x3, stride `s`, padding 1 on each side: every
// window position read under the mask "its row and column lie inside the image". `shift`
// moves the read's index (a corrupt plan: the mask no longer matches the index).
Kernel max_pool(int64_t h, int64_t w, int64_t s, int64_t shift) {
  const int64_t oh = (h - 1) / s + 1, ow = (w - 1) / s + 1;
  KernelBuilder b({3, oh, ow});
  const int x = b.arg(DType::F32, 3 * h * w), y = b.arg(DType::F32, 3 * oh * ow, true);
  int best = b.constant(ScalarType::F32, -INFINITY);
  for (int64_t kh = 0; kh < 3; ++kh) {
    for (int64_t kw = 0; kw < 3; ++kw) {
      const int row = b.binary(Op::Add, b.binary(Op::Mul, b.loop_var(1), b.constant(kI, s)),
                               b.constant(kI, static_cast<double>(kh - 1)));
      const int col = b.binary(Op::Add, b.binary(Op::Mul, b.loop_var(2), b.constant(kI, s)),
                               b.constant(kI, static_cast<double>(kw - 1)));
      const int m = b.binary(Op::And, inside(b, row, 0, h), inside(b, col, 0, w));
      const int v =
          b.load(x, Affine({{0, h * w}, {1, s * w}, {2, s}}, (kh - 1) * w + kw - 1 + shift), m);
      best = b.binary(Op::Max, best, b.where(m, v, b.constant(ScalarType::F32, -INFINITY)));
    }
  }
  b.store(y, Affine({{0, oh * ow}, {1, ow}, {2, 1}}), best);
  return b.build();
}

// Concat of a [4, 5] and a [4, 7] tensor along dim 1, each read under "its columns".
Kernel concat(int64_t shift) {
  KernelBuilder b({4, 12});
  const int a = b.arg(DType::F32, 20), c = b.arg(DType::F32, 28), y = b.arg(DType::F32, 48, true);
  const int col = b.loop_var(1);
  const int in_a = inside(b, col, 0, 5), in_c = inside(b, col, 5, 12);
  const int va = b.load(a, Affine({{0, 5}, {1, 1}}), in_a);
  const int vc = b.load(c, Affine({{0, 7}, {1, 1}}, -5 + shift), in_c);
  b.store(y, Affine({{0, 12}, {1, 1}}), b.where(in_a, va, vc));
  return b.build();
}

// A row-wise masked read (uniform: lanes run along dim 1): y[i, j] = x[i - 1 + shift] where
// i >= 1.
Kernel row_read(int64_t shift) {
  KernelBuilder b({6, 20});
  const int x = b.arg(DType::F32, 5), y = b.arg(DType::F32, 120, true);
  const int m = b.binary(Op::Ge, b.loop_var(0), b.constant(kI, 1));
  const int v = b.load(x, Affine({{0, 1}}, -1 + shift), m);
  b.store(y, Affine({{0, 20}, {1, 1}}), v);
  return b.build();
}

// Accesses of k the JIT checks at run time (Access::checked), or -1 when it refuses k.
int checked_accesses(const Kernel& k, const std::string& isa) {
  jit::Layout layout;
  if (!jit::analyze_kernel(k, jit::choose_isa(isa), &layout).empty()) return -1;
  int n = 0;
  for (const jit::Access& a : layout.accesses) n += a.checked;
  return n;
}

std::string run_error(const std::string& backend, const Kernel& k, const std::string& isa,
                      int threads) {
  BackendOptions options;
  options.isa = isa;
  options.threads = threads;
  std::vector<Tensor> bufs;
  for (const KernelArg& a : k.args)
    bufs.push_back(a.output ? testing::zeros(a.dtype, a.elements) : iota(a.elements));
  std::vector<void*> args;
  for (Tensor& t : bufs) args.push_back(t.data());
  try {
    make_backend(backend, options)->prepare(k)->run(args.data());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::vector<Kernel> compiler_shaped() {
  return {max_pool(9, 13, 1, 0), max_pool(9, 13, 2, 0), max_pool(1, 40, 2, 0), concat(0),
          row_read(0)};
}

TEST(MaskBounds, CompilerMasksProveTheirReads) {
  for (const std::string& isa : isas()) {
    for (const Kernel& k : compiler_shaped()) {
      SCOPED_TRACE(isa + "\n" + kernel_to_string(k));
      EXPECT_EQ(checked_accesses(k, isa), 0);
      EXPECT_EQ(run_error("jit", k, isa, 1), "");
    }
  }
}

TEST(MaskBounds, CompilerMasksMatchTheReference) {
  for (const std::string& isa : isas()) {
    for (const Kernel& k : compiler_shaped()) {
      SCOPED_TRACE(isa + "\n" + kernel_to_string(k));
      std::vector<Tensor> bufs;
      for (const KernelArg& a : k.args)
        bufs.push_back(a.output ? testing::zeros(a.dtype, a.elements) : iota(a.elements));
      const std::vector<Tensor> want = testing::run_kernel("reference", k, bufs);
      BackendOptions options;
      options.isa = isa;
      std::vector<Tensor> got;
      std::vector<void*> args;
      for (const Tensor& t : bufs) got.push_back(testing::copy_of(t));
      for (Tensor& t : got) args.push_back(t.data());
      jit::make_jit_backend(options)->prepare(k)->run(args.data());
      for (size_t a = 0; a < want.size(); ++a)
        EXPECT_EQ(0, std::memcmp(want[a].data(), got[a].data(), want[a].nbytes())) << a;
    }
  }
}

// Shifted indices: the mask no longer keeps the reads inside. The JIT compiles the kernel
// with run-time checks and fails with the portable backend's message (the first read outside
// in its order), whatever the lanes, threads and ISA.
TEST(MaskBounds, UnprovenReadsAreCheckedAndFailAsTheReference) {
  const std::vector<Kernel> bad = {max_pool(9, 13, 1, 3),
                                   max_pool(9, 13, 2, -40),
                                   max_pool(9, 13, 2, 200),
                                   concat(8),
                                   concat(-9),
                                   row_read(1)};
  for (const Kernel& k : bad) {
    ASSERT_NE(run_error("reference", k, "", 1).find("is outside its"), std::string::npos);
    const std::string want = run_error("portable", k, "", 1);
    ASSERT_NE(want.find("is outside its"), std::string::npos) << want;
    for (const std::string& isa : isas()) {
      SCOPED_TRACE(isa + "\n" + kernel_to_string(k));
      EXPECT_GE(checked_accesses(k, isa), 1);
      for (int threads : {1, 2}) EXPECT_EQ(run_error("jit", k, isa, threads), want);
    }
  }
}

// A mask the proof cannot use (a disjunction) over reads that stay inside: checked, and the
// check passes.
TEST(MaskBounds, CheckedReadsInsideRunNormally) {
  KernelBuilder b({4, 12});
  const int a = b.arg(DType::F32, 20), y = b.arg(DType::F32, 48, true);
  const int col = b.loop_var(1);
  const int in_a = inside(b, col, 0, 5);
  const int m = b.binary(Op::Or, in_a, in_a);
  const int v = b.load(a, Affine({{0, 5}, {1, 1}}), m);
  b.store(y, Affine({{0, 12}, {1, 1}}), v);
  const Kernel k = b.build();
  std::vector<Tensor> bufs = testing::tensors(iota(20), testing::zeros(DType::F32, 48));
  const std::vector<Tensor> want = testing::run_kernel("reference", k, bufs);
  for (const std::string& isa : isas()) {
    SCOPED_TRACE(isa);
    EXPECT_EQ(checked_accesses(k, isa), 1);
    BackendOptions options;
    options.isa = isa;
    std::vector<Tensor> got = testing::tensors(iota(20), testing::zeros(DType::F32, 48));
    std::vector<void*> args = {got[0].data(), got[1].data()};
    jit::make_jit_backend(options)->prepare(k)->run(args.data());
    EXPECT_EQ(0, std::memcmp(want[1].data(), got[1].data(), want[1].nbytes()));
  }
}

// An index whose range reaches near int64 overflow cannot be compared as an address: the JIT
// leaves the kernel to the portable backend, which fails cleanly.
TEST(MaskBounds, HugeMaskedIndicesAreRefused) {
  const Kernel k = max_pool(9, 13, 1, int64_t{1} << 60);
  const std::string want = run_error("reference", k, "", 1);
  ASSERT_NE(want.find("is outside its"), std::string::npos) << want;
  for (const std::string& isa : isas()) {
    EXPECT_EQ(checked_accesses(k, isa), -1);
    EXPECT_NE(jit::jit_refusal(k, isa).find("not provably inside arg 0"), std::string::npos);
    EXPECT_EQ(run_error("jit", k, isa, 1), want);
  }
}

TEST(MaskBounds, RangeWhereTheMaskHolds) {
  // i0 in [0, 10), i1 in [0, 4): 2*i0 + i1 - 3 in [0, 8) and i1 >= 2 hold only for some points.
  KernelBuilder b({10, 4});
  const int x = b.arg(DType::F32, 100);
  const int p = b.binary(
      Op::Add,
      b.binary(Op::Add, b.binary(Op::Mul, b.loop_var(0), b.constant(kI, 2)), b.loop_var(1)),
      b.constant(kI, -3));
  const int m =
      b.binary(Op::And, inside(b, p, 0, 8), b.binary(Op::Ge, b.loop_var(1), b.constant(kI, 2)));
  b.load(x, Affine({{0, 10}, {1, 5}}, -15), m);
  const Kernel k = b.build();
  std::vector<jit::Range> values(k.code.size());
  for (size_t i = 0; i < k.code.size(); ++i)
    if (k.code[i].op == Op::Const && k.code[i].type == kI) {
      values[i].known = true;
      values[i].lo = values[i].hi = k.code[i].iimm;
    }
  const LinearForm f = linearize(*k.code.back().index, 2);
  // 10*i0 + 5*i1 - 15 = 5*(2*i0 + i1 - 3): in [0, 35] where 0 <= 2*i0 + i1 - 3 < 8.
  const jit::Range r = jit::masked_index_range(k, values, m, f);
  ASSERT_TRUE(r.known);
  EXPECT_EQ(r.lo, 0);
  EXPECT_EQ(r.hi, 35);
  // A mask that can never hold (i1 >= 2 and i1 < 1) gives an empty range.
  KernelBuilder e({10, 4});
  e.arg(DType::F32, 1);
  const int never = inside(e, e.loop_var(1), 2, 1);
  e.load(0, Affine({{0, 10}}, 1000), never);
  const Kernel ek = e.build();
  std::vector<jit::Range> ev(ek.code.size());
  for (size_t i = 0; i < ek.code.size(); ++i)
    if (ek.code[i].op == Op::Const) ev[i] = {true, ek.code[i].iimm, ek.code[i].iimm};
  const jit::Range er = jit::masked_index_range(ek, ev, never, linearize(*ek.code.back().index, 2));
  EXPECT_TRUE(er.known && er.lo > er.hi);
}

}  // namespace
}  // namespace ferrite
