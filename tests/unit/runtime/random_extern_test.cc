// Differential test of the extern ops: for every op in the manifest (kExternOps) random calls
// (random_extern_cases.h) run on every backend this build has, as a Session runs them
// (prepared, with or without their weights as constants, then run twice), and compared with
// the op's reference implementation, its definition: the portable backend on each SIMD
// target, on one and on two threads; natively the JIT, which hands MatMul and convolutions
// to oneDNN and generates SegmentReduce's row loop. Float outputs agree within the case's
// bound, everything else bit for bit; elements outside an output's view stay untouched; a
// call the reference refuses (an index out of range) fails everywhere with its message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "compiler/plan/error.h"
#include "tests/unit/runtime/kernel_builder.h"
#include "tests/unit/runtime/random_extern_cases.h"
#include "tests/unit/support/slow_build.h"

namespace ferrite {
namespace {

using namespace random_externs;

constexpr int kCasesPerOp = test::cases_for_build(300);
constexpr uint32_t kSeed = 20261126;

// The output buffers after a run, or its error.
struct Result {
  std::vector<Operand> outs;
  std::string error;
};

std::vector<ExternBuffer> buffers(const std::vector<Operand>& ops) {
  std::vector<ExternBuffer> b;
  for (const Operand& o : ops) b.push_back(o.buffer());
  return b;
}

Result run_reference_case(const Case& c) {
  Result r{c.outs, ""};
  const std::vector<ExternBuffer> in = buffers(c.ins), out = buffers(r.outs);
  try {
    run_reference_extern(c.call, in.data(), out.data());
  } catch (const Error& e) {
    r.error = e.what();
  }
  return r;
}

// Prepared once on `b` (the case's constants passed as such when `constants`), run twice.
std::vector<Result> run_prepared(const KernelBackend& b, const Case& c, bool constants) {
  const std::vector<ExternBuffer> in = buffers(c.ins);
  std::vector<ExternBuffer> known;
  if (constants) {
    known.resize(in.size());
    for (size_t i : c.constants) known[i] = in[i];
  }
  std::vector<Result> results;
  std::unique_ptr<PreparedExtern> p;
  try {
    p = b.prepare_extern(c.call, known);
  } catch (const Error& e) {
    return {Result{c.outs, e.what()}};
  }
  for (int run = 0; run < 2; ++run) {
    Result r{c.outs, ""};
    const std::vector<ExternBuffer> out = buffers(r.outs);
    try {
      p->run(in.data(), out.data());
    } catch (const Error& e) {
      r.error = e.what();
    }
    results.push_back(std::move(r));
  }
  return results;
}

// Whether every buffer element of each output agrees: inside the view within the case's
// bound (bit for bit at 0; NaN = NaN), outside it byte for byte (untouched junk).
std::string disagreement(const Case& c, const Result& got, const Result& want) {
  if (got.error != want.error) return str_cat("error '", got.error, "', want '", want.error, "'");
  if (!want.error.empty()) return "";
  for (size_t o = 0; o < want.outs.size(); ++o) {
    const Operand &g = got.outs[o], &w = want.outs[o];
    std::vector<bool> in_view(static_cast<size_t>(w.elements), false);
    const Dims& shape = w.ref.shape;
    int64_t count = 1;
    for (int64_t x : shape) count *= x;
    Dims idx(shape.size(), 0);
    for (int64_t e = 0; e < count; ++e) {
      int64_t off = w.ref.offset;
      for (size_t d = 0; d < shape.size(); ++d) off += idx[d] * w.ref.strides[d];
      in_view[static_cast<size_t>(off)] = true;
      for (size_t d = shape.size(); d-- > 0 && ++idx[d] == shape[d];) idx[d] = 0;
    }
    const size_t esize = dtype_size(w.dtype);
    const bool floats = compute_type(w.dtype) != ScalarType::I64;
    for (int64_t i = 0; i < w.elements; ++i) {
      const Scalar a = load_element(w.dtype, g.storage.data(), i);
      const Scalar b = load_element(w.dtype, w.storage.data(), i);
      bool same =
          std::memcmp(reinterpret_cast<const uint8_t*>(g.storage.data()) + i * esize,
                      reinterpret_cast<const uint8_t*>(w.storage.data()) + i * esize, esize) == 0;
      if (!same && in_view[static_cast<size_t>(i)] && floats && c.tol > 0) {
        const double x = w.dtype == DType::F64 ? a.f64 : a.f32;
        const double y = w.dtype == DType::F64 ? b.f64 : b.f32;
        same = (std::isnan(x) && std::isnan(y)) ||
               std::fabs(x - y) <= c.tol * std::max(1.0, std::fabs(y));
      }
      if (!same)
        return str_cat("output ", o, " element ", i,
                       in_view[static_cast<size_t>(i)] ? "" : " (outside the view)", ": got ",
                       floats ? (w.dtype == DType::F64 ? a.f64 : a.f32) : a.i64, ", want ",
                       floats ? (w.dtype == DType::F64 ? b.f64 : b.f32) : b.i64);
    }
  }
  return "";
}

void expect_agree(const Case& c, const std::vector<Result>& got, const Result& want,
                  const std::string& where) {
  for (size_t r = 0; r < got.size(); ++r) {
    const std::string why = disagreement(c, got[r], want);
    EXPECT_EQ(why, "") << where << ", run " << r;
  }
}

class RandomExterns : public ::testing::TestWithParam<size_t> {};

TEST_P(RandomExterns, EveryBackendAgreesWithTheReference) {
  const ExternOp op = kExternOps[GetParam()].op;
  int errors = 0, with_post_ops = 0, no_chain = 0;
  for (int i = 0; i < kCasesPerOp; ++i) {
    Draw d(kSeed + 1000 * static_cast<uint32_t>(GetParam()) + static_cast<uint32_t>(i));
    const Case c = random_case(op, d);
    ASSERT_EQ(c.call.op, op);
    SCOPED_TRACE(str_cat("case ", i, ": ", c.text, ", ", c.call.post_ops.size(), " post-ops"));
    const Result want = run_reference_case(c);
    errors += !want.error.empty();
    with_post_ops += !c.call.post_ops.empty();
    no_chain += !c.call.epilogue.empty() && c.call.post_ops.empty();
    for (const std::string& name : backend_names()) {
      if (name == "reference") continue;
      BackendOptions two;
      two.threads = 2;
      if (name == "portable") {
        testing::for_each_simd_target(
            [&] { expect_agree(c, run_prepared(*make_backend(name), c, i % 2 == 0), want, name); });
      } else {
        expect_agree(c, run_prepared(*make_backend(name), c, i % 2 == 0), want, name);
      }
      expect_agree(c, run_prepared(*make_backend(name, two), c, i % 2 == 1), want,
                   name + ", two threads");
    }
    if (::testing::Test::HasFailure()) return;
  }
  // The generator reaches what it should: post-op chains where the op takes them, and
  // bodies that are none, and failing calls for the ops that index.
  if (extern_op_info(op).takes_post_ops) {
    EXPECT_GT(with_post_ops, kCasesPerOp / 3);
    EXPECT_GT(no_chain, 0);
  }
  if (op == ExternOp::ScatterElements || op == ExternOp::ScatterND ||
      op == ExternOp::SegmentReduce) {
    EXPECT_GT(errors, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Manifest, RandomExterns, ::testing::Range<size_t>(0, kExternOpCount),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return std::string(kExternOps[info.param].name);
                         });

}  // namespace
}  // namespace ferrite
