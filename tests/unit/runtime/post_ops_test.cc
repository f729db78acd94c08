// Fused epilogues of MatMul / Conv (ExternCall::epilogue): each post-op kind against its formula
// written here in double, chains with broadcast and residual operands, a body that is no chain
// of post-ops, every backend against
// the reference, and the operand checks; every kind fused into the portable GEMM's tiles
// with every operand layout on every SIMD target (two threads bitwise equal to one), and
// special values (NaN, inf, exp out of range) exactly as the reference gives them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "compiler/plan/epilogue.h"
#include "compiler/plan/error.h"
#include "compiler/plan/plan.h"
#include "compiler/plan/post_ops.h"
#include "runtime/backend.h"
#include "tests/unit/runtime/extern_runs.h"
#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace {

// The formula of each unary kind, in double.
double formula(const PostOp& p, double y) {
  const double sig = 1 / (1 + std::exp(-y));
  switch (p.kind) {
    case PostOpKind::Relu:
      return std::max(y, 0.0);
    case PostOpKind::Clip:
      return std::min(std::max(y, double{p.alpha}), double{p.beta});
    case PostOpKind::LeakyRelu:
      return y >= 0 ? y : p.alpha * y;
    case PostOpKind::Elu:
      return y > 0 ? y : p.alpha * (std::exp(y) - 1);
    case PostOpKind::HardSigmoid:
      return std::min(std::max(p.alpha * y + p.beta, 0.0), 1.0);
    case PostOpKind::HardSwish:
      return y * std::min(std::max(y / 6 + 0.5, 0.0), 1.0);
    case PostOpKind::Sigmoid:
      return sig;
    case PostOpKind::Tanh:
      return std::tanh(y);
    case PostOpKind::Silu:
      return y * sig;
    case PostOpKind::GeluErf:
      return 0.5 * y * (1 + std::erf(y / std::sqrt(2.0)));
    case PostOpKind::GeluTanh:
      return 0.5 * y * (1 + std::tanh(std::sqrt(2 / M_PI) * (y + 0.044715 * y * y * y)));
    case PostOpKind::Linear:
      return p.alpha * y + p.beta;
    default:
      ADD_FAILURE() << "not unary";
      return 0;
  }
}

TEST(PostOps, UnaryKindsFollowTheirFormulas) {
  const std::vector<PostOp> ops = unary_post_ops();
  ASSERT_EQ(ops.size(), static_cast<size_t>(PostOpKind::Add));  // every unary kind
  for (const PostOp& p : ops) {
    SCOPED_TRACE(post_op_text(p));
    EXPECT_FALSE(post_op_is_binary(p.kind));
    for (float y = -6.0f; y <= 6.0f; y += 0.0625f) {
      const double want = formula(p, y);
      EXPECT_NEAR(apply_unary_post_op(p, y), want, 2e-6 * std::max(1.0, std::fabs(want))) << y;
    }
  }
}

TEST(PostOps, BinaryKinds) {
  EXPECT_EQ(apply_binary_post_op(PostOpKind::Add, 3, 2), 5);
  EXPECT_EQ(apply_binary_post_op(PostOpKind::Sub, 3, 2), 1);
  EXPECT_EQ(apply_binary_post_op(PostOpKind::Mul, 3, 2), 6);
  EXPECT_EQ(apply_binary_post_op(PostOpKind::Div, 3, 2), 1.5f);
  EXPECT_EQ(apply_binary_post_op(PostOpKind::Max, 3, 2), 3);
  EXPECT_EQ(apply_binary_post_op(PostOpKind::Min, 3, 2), 2);
  EXPECT_TRUE(post_op_is_binary(PostOpKind::Min));
  EXPECT_THROW(apply_binary_post_op(PostOpKind::Relu, 1, 1), Error);
  EXPECT_THROW(apply_unary_post_op(PostOp{PostOpKind::Add}, 1), Error);
}

// C[3, 5] = A[3, 4] @ B[4, 5], then: + bias[5] (broadcast over rows), gelu, * residual
// [3, 5] read transposed from a [5, 3] buffer, clip(-1, 1).
struct MatMulCase {
  std::vector<float> a, b, bias, res, c;
  ExternCall call;
  std::vector<ExternBuffer> ins, outs;

  explicit MatMulCase(uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-1.5f, 1.5f);
    for (auto* v : {&a, &b, &bias, &res})
      v->resize(v == &a ? 12 : v == &b ? 20 : v == &bias ? 5 : 15);
    for (auto* v : {&a, &b, &bias, &res})
      for (float& x : *v) x = d(rng);
    c.assign(15, -7.0f);
    call.op = ExternOp::MatMul;
    call.inputs = {TensorRef{0, {3, 4}, {4, 1}, 0}, TensorRef{1, {4, 5}, {5, 1}, 0},
                   TensorRef{2, {3, 5}, {0, 1}, 0}, TensorRef{3, {3, 5}, {1, 3}, 0}};
    call.outputs = {TensorRef{4, {3, 5}, {5, 1}, 0}};
    set_post_ops(&call, std::vector<PostOp>{
                            PostOp{PostOpKind::Add, 0, 0, 2}, PostOp{PostOpKind::GeluErf},
                            PostOp{PostOpKind::Mul, 0, 0, 3}, PostOp{PostOpKind::Clip, -1, 1}});
    ins = {buf(a), buf(b), buf(bias), buf(res)};
    outs = {buf(c)};
  }
  static ExternBuffer buf(std::vector<float>& v) {
    return ExternBuffer{v.data(), DType::F32, static_cast<int64_t>(v.size())};
  }
  double want(int i, int j) const {
    double y = 0;
    for (int p = 0; p < 4; ++p) y += double{a[i * 4 + p]} * b[p * 5 + j];
    y += bias[j];
    y = 0.5 * y * (1 + std::erf(y / std::sqrt(2.0)));
    y *= res[j * 3 + i];
    return std::min(std::max(y, -1.0), 1.0);
  }
};

TEST(PostOps, MatMulChainOnEveryBackend) {
  for (const std::string& name : backend_names()) {
    SCOPED_TRACE(name);
    MatMulCase t(7);
    make_backend(name)->prepare_extern(t.call)->run(t.ins.data(), t.outs.data());
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 5; ++j) EXPECT_NEAR(t.c[i * 5 + j], t.want(i, j), 1e-5) << i << "," << j;
  }
}

// An epilogue that is no chain of post-ops (the pattern table finds none): every backend runs
// it after the op, as the reference does (the portable and JIT backends as a following
// kernel, runtime/following_epilogue.h). y -> y * y + t, then exp where y < t, else the sum.
TEST(PostOps, ABodyThatIsNoChainRunsOnEveryBackend) {
  for (const std::string& name : backend_names()) {
    SCOPED_TRACE(name);
    MatMulCase t(11);
    EpilogueBody e;
    auto step = [&](Op op, int32_t a, int32_t b = -1, int32_t c = -1) {
      e.steps.push_back(EpilogueStep{op, a, b, c});
      return static_cast<int32_t>(e.steps.size() - 1);
    };
    EpilogueStep load_y{Op::Load}, load_t{Op::Load};
    load_t.input = 2;
    e.steps = {load_y, load_t};
    const int32_t sum = step(Op::Add, step(Op::Mul, 0, 0), 1);
    step(Op::Where, step(Op::Lt, 0, 1), step(Op::Exp, 0), sum);
    set_epilogue(&t.call, e);
    ASSERT_TRUE(t.call.post_ops.empty());
    validate_epilogue(e, t.call.inputs.size(), "test");
    std::unique_ptr<PreparedExtern> p = make_backend(name)->prepare_extern(t.call);
    // The JIT backend runs the op on oneDNN (where it takes matmuls: with AVX-512; the
    // portable op names no implementation) and the body as a following kernel.
    if (name == "jit" && !p->implementation().empty()) {
      EXPECT_NE(p->implementation().find("+ epilogue kernel"), std::string::npos);
    }
    p->run(t.ins.data(), t.outs.data());
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 5; ++j) {
        double y = 0;
        for (int p = 0; p < 4; ++p) y += double{t.a[i * 4 + p]} * t.b[p * 5 + j];
        const double r = t.bias[j];
        EXPECT_NEAR(t.c[i * 5 + j], y < r ? std::exp(y) : y * y + r, 1e-5) << i << "," << j;
      }
    }
  }
}

TEST(PostOps, ConvWithBiasThenPostOps) {
  // X [1, 2, 3, 3], W [2, 2, 1, 1] (a 1x1 conv), B [2]; then - per-channel t[2], relu6.
  std::vector<float> x(18), w = {1, -1, 0.5f, 2}, b = {0.25f, -0.5f}, t = {1, -3}, y(18, 9);
  for (int i = 0; i < 18; ++i) x[i] = static_cast<float>(i % 7) - 3;
  ExternCall call;
  call.op = ExternOp::Conv;
  call.inputs = {TensorRef{0, {1, 2, 3, 3}, {18, 9, 3, 1}, 0},
                 TensorRef{1, {2, 2, 1, 1}, {2, 1, 1, 1}, 0}, TensorRef{2, {2}, {1}, 0},
                 TensorRef{3, {1, 2, 3, 3}, {0, 1, 0, 0}, 0}};
  call.outputs = {TensorRef{4, {1, 2, 3, 3}, {18, 9, 3, 1}, 0}};
  set_post_ops(
      &call, std::vector<PostOp>{PostOp{PostOpKind::Sub, 0, 0, 3}, PostOp{PostOpKind::Clip, 0, 6}});
  auto buf = [](std::vector<float>& v) {
    return ExternBuffer{v.data(), DType::F32, static_cast<int64_t>(v.size())};
  };
  for (const std::string& name : backend_names()) {
    SCOPED_TRACE(name);
    std::fill(y.begin(), y.end(), 9.0f);
    std::vector<ExternBuffer> ins = {buf(x), buf(w), buf(b), buf(t)}, outs = {buf(y)};
    make_backend(name)->prepare_extern(call)->run(ins.data(), outs.data());
    for (int m = 0; m < 2; ++m)
      for (int p = 0; p < 9; ++p) {
        double v = b[m] + double{w[m * 2]} * x[p] + double{w[m * 2 + 1]} * x[9 + p] - t[m];
        v = std::min(std::max(v, 0.0), 6.0);
        EXPECT_NEAR(y[m * 9 + p], v, 1e-5) << m << "," << p;
      }
  }
}

// A MatMul C [m, n] = A [m, k] @ B [k, n] whose post-ops read operands appended with `add`.
struct FusedMatMul {
  int64_t m, k, n;
  std::vector<std::vector<float>> data;  // inputs, then the output
  ExternCall call;

  FusedMatMul(int64_t m_, int64_t k_, int64_t n_, const std::vector<float>& a,
              const std::vector<float>& b)
      : m(m_), k(k_), n(n_) {
    call.op = ExternOp::MatMul;
    data = {a, b};
    call.inputs = {TensorRef{0, {m, k}, {k, 1}, 0}, TensorRef{1, {k, n}, {n, 1}, 0}};
  }
  // An operand of `count` values viewed as [m, n] with strides `strides`; its input index.
  int32_t add(std::vector<float> values, std::vector<int64_t> strides) {
    const int32_t id = static_cast<int32_t>(data.size());
    data.push_back(std::move(values));
    call.inputs.push_back(TensorRef{id, {m, n}, std::move(strides), 0});
    return id;
  }
  // The output after running on `backend` (prepared; the weight B constant when asked).
  std::vector<float> run(const std::string& backend, int threads, bool constant_b) {
    std::vector<float> c(static_cast<size_t>(m * n), NAN);
    call.outputs = {TensorRef{static_cast<int32_t>(data.size()), {m, n}, {n, 1}, 0}};
    std::vector<ExternBuffer> in;
    for (auto& v : data) in.push_back({v.data(), DType::F32, static_cast<int64_t>(v.size())});
    ExternBuffer out{c.data(), DType::F32, m * n};
    std::vector<ExternBuffer> constants(in.size());
    if (constant_b) constants[1] = in[1];
    BackendOptions options;
    options.threads = threads;
    make_backend(backend, options)->prepare_extern(call, constants)->run(in.data(), &out);
    return c;
  }
};

std::vector<float> uniform(size_t count, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(count);
  for (float& x : v) x = d(rng);
  return v;
}

// Both NaN, or within `tol` relative to max(1, |want|).
::testing::AssertionResult close(float got, float want, double tol) {
  if (std::isnan(got) && std::isnan(want)) return ::testing::AssertionSuccess();
  if (got == want) return ::testing::AssertionSuccess();  // infinities
  if (std::fabs(static_cast<double>(got) - want) <= tol * std::max(1.0, std::fabs(double{want})))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", want " << want;
}

// Against the reference on every SIMD target (one thread, the weight constant or not), and
// two threads bitwise equal to one.
void check_fused(FusedMatMul& f, double tol) {
  const std::vector<float> want = f.run("reference", 1, false);
  testing::for_each_simd_target([&] {
    for (bool constant_b : {false, true}) {
      const std::vector<float> got = f.run("portable", 1, constant_b);
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_TRUE(close(got[i], want[i], tol)) << "at " << i << (constant_b ? " (packed B)" : "");
      if (!constant_b) continue;
      const std::vector<float> two = f.run("portable", 2, constant_b);
      ASSERT_EQ(std::memcmp(two.data(), got.data(), got.size() * sizeof(float)), 0)
          << "two threads differ from one";
    }
  });
}

TEST(PostOps, EveryKindFusedPerTileOnEveryTarget) {
  // 13 x 70: remainders of the 5- or 6-row tile and of the 32- or 64-column one; K = 300:
  // two K blocks, the epilogue must run once, after the last. A bias per column first, then
  // the kind; binary kinds read their operand per row, per column, full, full transposed and
  // as one scalar.
  const int64_t m = 13, k = 300, n = 70;
  const std::vector<float> a = uniform(m * k, -0.3f, 0.3f, 1), b = uniform(k * n, -1, 1, 2);
  const std::vector<float> bias = uniform(n, -1, 1, 3);
  for (const PostOp& p : unary_post_ops()) {
    SCOPED_TRACE(post_op_text(p));
    FusedMatMul f(m, k, n, a, b);
    set_post_ops(&f.call,
                 std::vector<PostOp>{PostOp{PostOpKind::Add, 0, 0, f.add(bias, {0, 1})}, p});
    check_fused(f, 1e-5);
    if (HasFatalFailure()) return;
  }
  const std::pair<const char*, std::vector<int64_t>> layouts[] = {{"per row", {1, 0}},
                                                                  {"per column", {0, 1}},
                                                                  {"full", {n, 1}},
                                                                  {"transposed", {1, m}},
                                                                  {"scalar", {0, 0}}};
  for (PostOpKind kind : {PostOpKind::Add, PostOpKind::Sub, PostOpKind::Mul, PostOpKind::Div,
                          PostOpKind::Max, PostOpKind::Min}) {
    for (const auto& layout : layouts) {
      SCOPED_TRACE(std::string(post_op_name(kind)) + " " + layout.first);
      FusedMatMul f(m, k, n, a, b);
      // Divisors away from zero; the rest around the products' range.
      std::vector<float> t =
          kind == PostOpKind::Div ? uniform(m * n, 0.5f, 1.5f, 4) : uniform(m * n, -1, 1, 4);
      set_post_ops(&f.call, std::vector<PostOp>{PostOp{PostOpKind::Add, 0, 0, f.add(bias, {0, 1})},
                                                PostOp{kind, 0, 0, f.add(t, layout.second)}});
      check_fused(f, 1e-5);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(PostOps, FusedIntoOneRowOnEveryTarget) {
  // One row of A (a GEMV) is finished four B panels at a time: 300 columns leave whole
  // groups, lone whole panels and a partial one on every target; K = 300 spans two K blocks.
  const int64_t m = 1, k = 300, n = 300;
  const std::vector<float> a = uniform(m * k, -0.3f, 0.3f, 1), b = uniform(k * n, -1, 1, 2);
  const std::vector<float> bias = uniform(n, -1, 1, 3), t = uniform(n, -1, 1, 4);
  for (const PostOp& p : unary_post_ops()) {
    SCOPED_TRACE(post_op_text(p));
    FusedMatMul f(m, k, n, a, b);
    set_post_ops(&f.call, std::vector<PostOp>{PostOp{PostOpKind::Add, 0, 0, f.add(bias, {0, 1})}, p,
                                              PostOp{PostOpKind::Mul, 0, 0, f.add(t, {n, 1})}});
    check_fused(f, 1e-5);
    if (HasFatalFailure()) return;
  }
}

TEST(PostOps, SpecialValuesAsTheReferenceGivesThem) {
  // K = 1 and B = [1, -1, 0.5, 1, ...]: C holds the special values themselves, then each kind
  // on its own — the vector formulas must hand NaN, inf and out-of-range lanes to the scalar
  // path. 70 columns: whole tiles (finished in registers where the kind allows) and a partial
  // one (finished in memory) on every target.
  const std::vector<float> specials = {NAN,  INFINITY, -INFINITY, 0.0f,   -0.0f, 1e-30f,
                                       -100, 100,      87.5f,     -87.5f, 88.9f, -90,
                                       1e5f, -1e5f,    3,         -3,     2e4f,  -2e4f};
  const int64_t m = static_cast<int64_t>(specials.size()), n = 70;
  std::vector<float> b(static_cast<size_t>(n));
  for (size_t j = 0; j < b.size(); ++j) b[j] = j % 3 == 0 ? 1.0f : j % 3 == 1 ? -1.0f : 0.5f;
  std::vector<PostOp> ops = unary_post_ops();
  ops.push_back({PostOpKind::Clip, NAN, 1.0f});  // parameters no vector formula takes
  for (const PostOp& p : ops) {
    SCOPED_TRACE(post_op_text(p));
    FusedMatMul f(m, 1, n, specials, b);
    set_post_ops(&f.call, std::vector<PostOp>{p});
    check_fused(f, 2e-6);
    if (HasFatalFailure()) return;
  }
  for (PostOpKind kind : {PostOpKind::Add, PostOpKind::Sub, PostOpKind::Mul, PostOpKind::Max,
                          PostOpKind::Min, PostOpKind::Div}) {
    SCOPED_TRACE(post_op_name(kind));
    FusedMatMul f(m, 1, n, specials, b);
    std::vector<float> t(static_cast<size_t>(m * n));
    for (size_t i = 0; i < t.size(); ++i) t[i] = specials[(i * 7) % specials.size()];
    set_post_ops(&f.call, std::vector<PostOp>{PostOp{kind, 0, 0, f.add(t, {n, 1})}});
    check_fused(f, 0);
    if (HasFatalFailure()) return;
  }
}

TEST(PostOps, BadOperandsAreErrors) {
  for (const std::string& name : backend_names()) {
    SCOPED_TRACE(name);
    MatMulCase t(1);
    t.call.inputs[3].shape = {5, 3};
    try {
      make_backend(name)->prepare_extern(t.call)->run(t.ins.data(), t.outs.data());
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(
                    "MatMul: epilogue operand 3 has shape [5,3], the output [3,5]"),
                std::string::npos)
          << e.what();
    }
    MatMulCase u(1);
    u.call.inputs[3].strides = {1, 4};  // reaches element 18 of 15
    EXPECT_THROW(make_backend(name)->prepare_extern(u.call)->run(u.ins.data(), u.outs.data()),
                 Error);
  }
}

}  // namespace
}  // namespace ferrite
