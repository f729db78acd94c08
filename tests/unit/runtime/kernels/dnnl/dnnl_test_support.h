// Helpers of the oneDNN extern tests: float operands stored as strided views of their own
// buffers (any storage order, broadcast dims, an offset), post-op operands of the usual
// broadcast patterns, runs of one call on the reference and on prepare_dnnl_extern, and the
// comparison of their outputs.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "compiler/plan/plan.h"
#include "runtime/backend.h"
#include "runtime/kernels/dnnl/dnnl_externs.h"
#include "runtime/kernels/portable/thread_budget.h"
#include "runtime/kernels/reference/reference_backend.h"
#include "tests/unit/runtime/extern_runs.h"

// oneDNN takes matmuls on its brgemm kernels, which need AVX-512 (worth_using refuses its
// sgemm, "gemm:jit"): without them a matmul test has nothing of oneDNN's to test.
#define SKIP_WITHOUT_DNNL_MATMUL()   \
  if (!::ferrite::dnnl_has_avx512()) \
  GTEST_SKIP() << "oneDNN matmuls need AVX-512 here (its sgemm is refused)"

namespace ferrite {
namespace dnnl_test {

using Dims = std::vector<int64_t>;

struct Operand {
  std::vector<float> data;
  TensorRef ref;
  ExternBuffer buffer() const {
    return ExternBuffer{const_cast<float*>(data.data()), DType::F32,
                        static_cast<int64_t>(data.size())};
  }
};

inline int64_t product(const Dims& d) {
  int64_t p = 1;
  for (int64_t x : d) p *= x;
  return p;
}

// A view of `shape` stored in `order` (outermost dim first; every dim once), with stride 0
// along the dims where `broadcast` is true, starting at element `offset` of its buffer
// (the elements before it hold junk). Values uniform in [lo, hi].
inline Operand make_operand(const Dims& shape, const std::vector<int>& order,
                            const std::vector<bool>& broadcast, int64_t offset, std::mt19937& rng,
                            float lo = -1, float hi = 1) {
  Operand o;
  o.ref.shape = shape;
  int64_t span = 0;
  o.ref.strides = view_strides(shape, order, broadcast, &span);
  o.ref.offset = offset;
  std::uniform_real_distribution<float> dist(lo, hi);
  o.data.resize(static_cast<size_t>(offset + span));
  for (float& x : o.data) x = dist(rng);
  return o;
}

inline std::vector<int> identity_order(size_t n) {
  std::vector<int> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<int>(i);
  return order;
}

// Dense row-major.
inline Operand dense(const Dims& shape, std::mt19937& rng, float lo = -1, float hi = 1) {
  return make_operand(shape, identity_order(shape.size()), {}, 0, rng, lo, hi);
}

// The view's elements in row-major order of its shape.
inline std::vector<float> gather(const Operand& o) {
  std::vector<float> v;
  const Dims& shape = o.ref.shape;
  if (product(shape) == 0) return v;
  Dims idx(shape.size(), 0);
  while (true) {
    int64_t off = o.ref.offset;
    for (size_t d = 0; d < shape.size(); ++d) off += idx[d] * o.ref.strides[d];
    v.push_back(o.data[static_cast<size_t>(off)]);
    size_t d = shape.size();
    while (d > 0 && ++idx[d - 1] == shape[d - 1]) idx[--d] = 0;
    if (d == 0) return v;
  }
}

// Post-op operands of `shape` (the output's): broadcast along every dim but `keep` (a
// per-channel or per-column bias; keep < 0: a scalar), or full-size in some storage order.
inline Operand broadcast_operand(const Dims& shape, int keep, std::mt19937& rng, float lo = -1,
                                 float hi = 1) {
  std::vector<bool> b(shape.size(), true);
  if (keep >= 0) b[static_cast<size_t>(keep)] = false;
  return make_operand(shape, identity_order(shape.size()), b, 0, rng, lo, hi);
}

inline std::vector<ExternBuffer> buffers(const std::vector<Operand>& ops) {
  std::vector<ExternBuffer> b;
  for (const Operand& o : ops) b.push_back(o.buffer());
  return b;
}

// The call on the reference extern: the output's values in row-major order.
inline std::vector<float> run_reference(const ExternCall& call, const std::vector<Operand>& ins,
                                        Operand out) {
  std::fill(out.data.begin(), out.data.end(), NAN);
  const std::vector<ExternBuffer> in = buffers(ins);
  const ExternBuffer o = out.buffer();
  run_reference_extern(call, in.data(), &o);
  return gather(out);
}

// The call prepared by prepare_dnnl_extern (plan constants: the inputs listed in
// `constant_inputs`), run twice (the second run must give the same values): its output in
// row-major order. Fails the test when oneDNN refuses the call or picks its reference loops.
inline std::vector<float> run_dnnl(const ExternCall& call, const std::vector<Operand>& ins,
                                   Operand out, const std::vector<size_t>& constant_inputs,
                                   int threads = 1, std::string* impl = nullptr) {
  const std::vector<ExternBuffer> in = buffers(ins);
  std::vector<ExternBuffer> constants(ins.size());
  for (size_t i : constant_inputs) constants[i] = in[i];
  std::unique_ptr<PreparedExtern> p = prepare_dnnl_extern(call, constants, threads);
  auto* d = dynamic_cast<DnnlExtern*>(p.get());
  if (!d) {
    ADD_FAILURE() << "oneDNN refused the call";
    return {};
  }
  EXPECT_EQ(d->implementation().find("ref"), std::string::npos) << d->implementation();
  if (impl) *impl = d->implementation();
  const ExternBuffer o = out.buffer();
  std::fill(out.data.begin(), out.data.end(), NAN);
  p->run(in.data(), &o);
  const std::vector<float> first = gather(out);
  std::fill(out.data.begin(), out.data.end(), NAN);
  p->run(in.data(), &o);
  const std::vector<float> second = gather(out);
  for (size_t i = 0; i < first.size(); ++i)
    if (!(first[i] == second[i]) && !(std::isnan(first[i]) && std::isnan(second[i]))) {
      ADD_FAILURE() << "a second run differs at " << i << ": " << first[i] << " vs " << second[i];
      break;
    }
  // Elements of the output's buffer outside the view keep their NaN.
  return first;
}

// run_dnnl on `threads` threads while the process's thread budget is one thread
// (thread_budget.h), as on a busy machine: the runs take copies of the primitives made for
// one thread; *copies receives how many steps have one.
inline std::vector<float> run_dnnl_one_thread(const ExternCall& call,
                                              const std::vector<Operand>& ins, Operand out,
                                              const std::vector<size_t>& constant_inputs,
                                              int threads, size_t* copies) {
  const std::vector<ExternBuffer> in = buffers(ins);
  std::vector<ExternBuffer> constants(ins.size());
  for (size_t i : constant_inputs) constants[i] = in[i];
  std::unique_ptr<PreparedExtern> p = prepare_dnnl_extern(call, constants, threads);
  auto* d = dynamic_cast<DnnlExtern*>(p.get());
  if (!d) {
    ADD_FAILURE() << "oneDNN refused the call";
    return {};
  }
  EXPECT_EQ(d->one_thread_steps(), 0u);  // made on the first run that needs them
  process_budget().set_mode(BudgetMode::OneThread);
  const ExternBuffer o = out.buffer();
  std::vector<float> result;
  for (int run = 0; run < 2; ++run) {
    std::fill(out.data.begin(), out.data.end(), NAN);
    p->run(in.data(), &o);
    if (run == 0) result = gather(out);
  }
  process_budget().set_mode(BudgetMode::Adaptive);
  EXPECT_EQ(gather(out), result);
  *copies = d->one_thread_steps();
  return result;
}

// |got - want| <= tol * max(1, |want|) everywhere; the largest such ratio seen goes to
// *worst (to report the measured error).
inline void expect_close(const std::vector<float>& got, const std::vector<float>& want, double tol,
                         const std::string& what, double* worst = nullptr) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err =
        std::fabs(double{got[i]} - want[i]) / std::max(1.0, std::fabs(double{want[i]}));
    if (worst) *worst = std::max(*worst, err);
    ASSERT_TRUE(err <= tol) << what << " at " << i << ": got " << got[i] << ", want " << want[i];
  }
}

// got == want where want is NaN or infinite (NaN for NaN, the same infinity); elsewhere
// within tol * max(1, |want|). Returns how many of want are finite.
inline size_t expect_same_classes(const std::vector<float>& got, const std::vector<float>& want,
                                  double tol) {
  EXPECT_EQ(got.size(), want.size());
  size_t finite = 0;
  for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
    if (std::isfinite(want[i])) {
      ++finite;
      EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::fabs(double{want[i]}))) << "at " << i;
    } else if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "at " << i << ": " << got[i];
    } else {
      EXPECT_EQ(got[i], want[i]) << "at " << i;
    }
    if (::testing::Test::HasFailure()) break;
  }
  return finite;
}

// Each of `bad` (the call's input buffers, made wrong) makes `prepared` fail with exactly
// the error the reference implementation of `op` gives.
inline void expect_reference_errors(const ExternCall& call, PreparedExtern* prepared, ExternOp op,
                                    const Operand& out,
                                    const std::vector<std::vector<ExternBuffer>>& bad) {
  auto error_of = [&](const std::vector<ExternBuffer>& in, ExternFn fn) {
    const ExternBuffer o = out.buffer();
    try {
      if (fn) {
        fn(call, in.data(), &o);
      } else {
        prepared->run(in.data(), &o);
      }
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  for (const std::vector<ExternBuffer>& in : bad) {
    const std::string want = error_of(in, reference_extern(op));
    EXPECT_NE(want, "no error");
    EXPECT_EQ(error_of(in, nullptr), want);
  }
}

}  // namespace dnnl_test
}  // namespace ferrite
