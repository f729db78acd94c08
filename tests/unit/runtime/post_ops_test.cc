// Fused epilogues of MatMul / Conv (ExternCall::post_ops): each kind against its formula
// written here in double, chains with broadcast and residual operands, every backend against
// the reference, and the operand checks.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "compiler/plan/error.h"
#include "compiler/plan/post_ops.h"
#include "runtime/backend.h"

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
  const std::vector<PostOp> ops = {{PostOpKind::Relu},
                                   {PostOpKind::Clip, -0.5f, 1.5f},
                                   {PostOpKind::LeakyRelu, 0.1f},
                                   {PostOpKind::Elu, 0.7f},
                                   {PostOpKind::HardSigmoid, 0.2f, 0.5f},
                                   {PostOpKind::HardSwish},
                                   {PostOpKind::Sigmoid},
                                   {PostOpKind::Tanh},
                                   {PostOpKind::Silu},
                                   {PostOpKind::GeluErf},
                                   {PostOpKind::GeluTanh},
                                   {PostOpKind::Linear, -2.0f, 0.25f}};
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
    call.op = "MatMul";
    call.inputs = {TensorRef{0, {3, 4}, {4, 1}, 0}, TensorRef{1, {4, 5}, {5, 1}, 0},
                   TensorRef{2, {3, 5}, {0, 1}, 0}, TensorRef{3, {3, 5}, {1, 3}, 0}};
    call.outputs = {TensorRef{4, {3, 5}, {5, 1}, 0}};
    call.post_ops = {PostOp{PostOpKind::Add, 0, 0, 2}, PostOp{PostOpKind::GeluErf},
                     PostOp{PostOpKind::Mul, 0, 0, 3}, PostOp{PostOpKind::Clip, -1, 1}};
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

TEST(PostOps, ConvWithBiasThenPostOps) {
  // X [1, 2, 3, 3], W [2, 2, 1, 1] (a 1x1 conv), B [2]; then - per-channel t[2], relu6.
  std::vector<float> x(18), w = {1, -1, 0.5f, 2}, b = {0.25f, -0.5f}, t = {1, -3}, y(18, 9);
  for (int i = 0; i < 18; ++i) x[i] = static_cast<float>(i % 7) - 3;
  ExternCall call;
  call.op = "Conv";
  call.inputs = {TensorRef{0, {1, 2, 3, 3}, {18, 9, 3, 1}, 0},
                 TensorRef{1, {2, 2, 1, 1}, {2, 1, 1, 1}, 0}, TensorRef{2, {2}, {1}, 0},
                 TensorRef{3, {1, 2, 3, 3}, {0, 1, 0, 0}, 0}};
  call.outputs = {TensorRef{4, {1, 2, 3, 3}, {18, 9, 3, 1}, 0}};
  call.post_ops = {PostOp{PostOpKind::Sub, 0, 0, 3}, PostOp{PostOpKind::Clip, 0, 6}};
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

TEST(PostOps, BadOperandsAreErrors) {
  for (const std::string& name : backend_names()) {
    SCOPED_TRACE(name);
    MatMulCase t(1);
    t.call.inputs[3].shape = {5, 3};
    try {
      make_backend(name)->prepare_extern(t.call)->run(t.ins.data(), t.outs.data());
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("MatMul: post-op 2 (mul) operand has shape [5,3], the "
                                           "output [3,5]"),
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
