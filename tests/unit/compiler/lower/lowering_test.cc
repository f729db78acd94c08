// End-to-end lowering checks: small graphs compiled to a Plan and run on both backends,
// against values computed directly in the test.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "compiler/compile.h"
#include "compiler/plan/error.h"
#include "tests/unit/compiler/lower/run_graph.h"

namespace ferrite {
namespace {

using namespace lower_test;

class Lowering : public ::testing::TestWithParam<std::string> {};

TEST_P(Lowering, BroadcastAddReluIsOneKernel) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {2, 3});
  Value* y = b.input("y", DType::F32, {3});
  b.output(b.op("Relu", {b.op("Add", {x, y})}));
  auto g = b.finish();
  auto xs = random_floats(6, 1), ys = random_floats(3, 2);
  Compiled r = run_graph(
      *g, tensors(Tensor(DType::F32, {2, 3}, xs.data()), Tensor(DType::F32, {3}, ys.data())),
      GetParam());
  std::vector<float> want(6);
  for (int i = 0; i < 6; ++i) want[i] = std::max(0.f, xs[i] + ys[i % 3]);
  expect_near(r.outputs[0], want);
  EXPECT_EQ(r.plan.kernels.size(), 1u);
}

TEST_P(Lowering, ViewsAreIndexRemaps) {
  // transpose [2,3,4] → [4,3,2], reshape to [12,2], slice rows 1..11 step 3, neg.
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {2, 3, 4});
  Value* t = b.op("Transpose", {x}, {{"perm", attr_is({2, 1, 0})}});
  Value* r = b.op("Reshape", {t, b.constant_i64({2}, {12, 2})});
  Value* s = b.op("Slice", {r, b.constant_i64({1}, {1}), b.constant_i64({1}, {11}),
                            b.constant_i64({1}, {0}), b.constant_i64({1}, {3})});
  b.output(b.op("Neg", {s}));
  auto g = b.finish();
  auto xs = random_floats(24, 3);
  Compiled out = run_graph(*g, tensors(Tensor(DType::F32, {2, 3, 4}, xs.data())), GetParam());
  std::vector<float> want;
  for (int row = 1; row < 11; row += 3) {
    for (int col = 0; col < 2; ++col) {
      int flat = row * 2 + col;  // index into the [4,3,2] transposed tensor
      int k = flat / 6, j = (flat / 2) % 3, i = flat % 2;
      want.push_back(-xs[i * 12 + j * 4 + k]);
    }
  }
  ASSERT_EQ(out.outputs[0].shape(), (std::vector<int64_t>{4, 2}));
  expect_near(out.outputs[0], want);
  EXPECT_EQ(out.plan.kernels.size(), 1u);
}

TEST_P(Lowering, SoftmaxMatchesDirectFormula) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {3, 5});
  b.output(b.op("Softmax", {x}, {{"axis", attr_i(1)}}));
  auto g = b.finish();
  g->opsets[""] = 13;
  auto xs = random_floats(15, 4);
  Compiled r = run_graph(*g, tensors(Tensor(DType::F32, {3, 5}, xs.data())), GetParam());
  std::vector<float> want(15);
  for (int i = 0; i < 3; ++i) {
    double sum = 0;
    for (int j = 0; j < 5; ++j) sum += std::exp(static_cast<double>(xs[i * 5 + j]));
    for (int j = 0; j < 5; ++j) want[i * 5 + j] = static_cast<float>(std::exp(xs[i * 5 + j]) / sum);
  }
  expect_near(r.outputs[0], want);
}

TEST_P(Lowering, ReduceMeanKeepdims) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {2, 3, 4});
  b.output(b.op("ReduceMean", {x}, {{"axes", attr_is({0, 2})}, {"keepdims", attr_i(1)}}));
  auto g = b.finish();
  g->opsets[""] = 13;
  auto xs = random_floats(24, 5);
  Compiled r = run_graph(*g, tensors(Tensor(DType::F32, {2, 3, 4}, xs.data())), GetParam());
  std::vector<float> want(3, 0.f);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) want[j] += xs[i * 12 + j * 4 + k] / 8.f;
  ASSERT_EQ(r.outputs[0].shape(), (std::vector<int64_t>{1, 3, 1}));
  expect_near(r.outputs[0], want);
}

TEST_P(Lowering, GatherNegativeIndicesAndOutOfRange) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {4, 2});
  Value* idx = b.input("idx", DType::I64, {3});
  b.output(b.op("Gather", {x, idx}, {{"axis", attr_i(0)}}));
  b.last_node()->name = "the_gather";
  auto g = b.finish();
  auto xs = random_floats(8, 6);
  std::vector<int64_t> good{3, -1, 0}, bad{0, 4, 1};
  Compiled r = run_graph(
      *g, tensors(Tensor(DType::F32, {4, 2}, xs.data()), Tensor(DType::I64, {3}, good.data())),
      GetParam());
  expect_near(r.outputs[0], {xs[6], xs[7], xs[6], xs[7], xs[0], xs[1]});
  try {
    run_graph(*g,
              tensors(Tensor(DType::F32, {4, 2}, xs.data()), Tensor(DType::I64, {3}, bad.data())),
              GetParam());
    FAIL() << "expected an index error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the_gather"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("index 4 out of range"), std::string::npos) << e.what();
  }
}

TEST_P(Lowering, ConcatThreeInputs) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {2, 1});
  Value* y = b.input("y", DType::F32, {2, 2});
  Value* z = b.input("z", DType::F32, {2, 3});
  b.output(b.op("Concat", {x, y, z}, {{"axis", attr_i(-1)}}));
  auto g = b.finish();
  auto xs = random_floats(2, 7), ys = random_floats(4, 8), zs = random_floats(6, 9);
  Compiled r = run_graph(
      *g,
      tensors(Tensor(DType::F32, {2, 1}, xs.data()), Tensor(DType::F32, {2, 2}, ys.data()),
              Tensor(DType::F32, {2, 3}, zs.data())),
      GetParam());
  std::vector<float> want;
  for (int i = 0; i < 2; ++i) {
    want.push_back(xs[i]);
    for (int j = 0; j < 2; ++j) want.push_back(ys[i * 2 + j]);
    for (int j = 0; j < 3; ++j) want.push_back(zs[i * 3 + j]);
  }
  expect_near(r.outputs[0], want);
}

TEST_P(Lowering, BatchedMatMulWithBroadcastAndTransposedOperand) {
  GraphBuilder b;
  Value* a = b.input("a", DType::F32, {2, 3, 4});
  Value* w = b.input("w", DType::F32, {5, 4});
  Value* wt = b.op("Transpose", {w});  // [4,5] as strides, no copy
  b.output(b.op("MatMul", {a, wt}));
  auto g = b.finish();
  auto as = random_floats(24, 10), ws = random_floats(20, 11);
  Compiled r = run_graph(
      *g, tensors(Tensor(DType::F32, {2, 3, 4}, as.data()), Tensor(DType::F32, {5, 4}, ws.data())),
      GetParam());
  std::vector<float> want(30, 0.f);
  for (int bt = 0; bt < 2; ++bt)
    for (int m = 0; m < 3; ++m)
      for (int n = 0; n < 5; ++n)
        for (int k = 0; k < 4; ++k)
          want[bt * 15 + m * 5 + n] += as[bt * 12 + m * 4 + k] * ws[n * 4 + k];
  expect_near(r.outputs[0], want, 1e-4f);
  EXPECT_EQ(r.plan.kernels.size(), 0u);  // the transpose is a stride, the output is the extern's
}

TEST_P(Lowering, ShapeArithmeticFoldsAtCompileTime) {
  // Reshape(x, Concat(Gather(Shape(x), 0), [-1])) — the usual exporter pattern.
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {2, 3, 4});
  Value* shape = b.op("Shape", {x});
  Value* n = b.op("Gather", {shape, b.constant_i64({}, {0})}, {{"axis", attr_i(0)}});
  Value* n1 = b.op("Unsqueeze", {n, b.constant_i64({1}, {0})});
  Value* target = b.op("Concat", {n1, b.constant_i64({1}, {-1})}, {{"axis", attr_i(0)}});
  b.output(b.op("Exp", {b.op("Reshape", {x, target})}));
  auto g = b.finish();
  g->opsets[""] = 13;
  auto xs = random_floats(24, 12);
  Compiled r = run_graph(*g, tensors(Tensor(DType::F32, {2, 3, 4}, xs.data())), GetParam());
  ASSERT_EQ(r.outputs[0].shape(), (std::vector<int64_t>{2, 12}));
  std::vector<float> want(24);
  for (int i = 0; i < 24; ++i) want[i] = std::exp(xs[i]);
  expect_near(r.outputs[0], want);
  EXPECT_EQ(r.plan.kernels.size(), 1u);
}

TEST_P(Lowering, SharedExpensiveValueIsRealizedOnce) {
  // e = exp(x) * sigmoid(x) + tanh(x) feeds two consumers: realized, not recomputed.
  // Without fusion that is its own kernel; fusion then puts all three in one.
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {8});
  Value* e =
      b.op("Add", {b.op("Mul", {b.op("Exp", {x}), b.op("Sigmoid", {x})}), b.op("Tanh", {x})});
  b.output(b.op("Neg", {e}));
  b.output(b.op("Abs", {e}));
  auto g = b.finish();
  auto xs = random_floats(8, 13);
  CompileOptions unfused;
  unfused.fuse = false;
  Compiled u = run_graph(*g, tensors(Tensor(DType::F32, {8}, xs.data())), GetParam(), {}, unfused);
  EXPECT_EQ(u.plan.kernels.size(), 3u);
  Compiled r = run_graph(*g, tensors(Tensor(DType::F32, {8}, xs.data())), GetParam());
  ASSERT_EQ(r.plan.kernels.size(), 1u);
  int exps = 0, tanhs = 0;
  for (const Instr& in : r.plan.kernels[0].code) {
    exps += in.op == Op::Exp;
    tanhs += in.op == Op::Tanh;
  }
  EXPECT_EQ(exps, 1);  // e is computed once for both outputs
  EXPECT_EQ(tanhs, 1);
  std::vector<float> neg(8), abs(8);
  for (int i = 0; i < 8; ++i) {
    float v = std::exp(xs[i]) / (1 + std::exp(-xs[i])) + std::tanh(xs[i]);
    neg[i] = -v;
    abs[i] = std::fabs(v);
  }
  expect_near(r.outputs[0], neg);
  expect_near(r.outputs[1], abs);
  expect_near(u.outputs[0], neg);
  expect_near(u.outputs[1], abs);
}

TEST_P(Lowering, UnknownOpIsUnsupported) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {2});
  b.output(b.op("FancyOp", {x}));
  auto g = b.finish();
  EXPECT_THROW(compile_graph(*g, {x->type}, {}), UnsupportedError);
}

TEST_P(Lowering, BadReshapeNamesTheNode) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {2, 3});
  b.output(b.op("Reshape", {x, b.constant_i64({1}, {4})}));
  b.last_node()->name = "bad_reshape";
  auto g = b.finish();
  g->opsets[""] = 13;
  try {
    compile_graph(*g, {x->type}, {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad_reshape"), std::string::npos) << e.what();
  }
}

// Activations without ONNX test data in libonnx-testdata 1.12 (Gelu is opset 20, Mish 18),
// checked against their formulas in double precision.
TEST_P(Lowering, GeluAndMishMatchTheirFormulas) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {64});
  b.output(b.op("Gelu", {x}));
  b.output(b.op("Gelu", {x}, {{"approximate", attr_s("tanh")}}));
  b.output(b.op("Mish", {x}));
  auto g = b.finish();
  std::vector<float> xs = random_floats(64, 7);
  xs[0] = 30.f;  // softplus must not overflow
  xs[1] = -30.f;
  Compiled r = run_graph(*g, tensors(Tensor(DType::F32, {64}, xs.data())), GetParam());
  std::vector<float> erf_gelu, tanh_gelu, mish;
  for (float f : xs) {
    double v = f;
    erf_gelu.push_back(static_cast<float>(0.5 * v * (1 + std::erf(v / std::sqrt(2.0)))));
    double u = std::sqrt(2 / 3.14159265358979323846) * (v + 0.044715 * v * v * v);
    tanh_gelu.push_back(static_cast<float>(0.5 * v * (1 + std::tanh(u))));
    mish.push_back(static_cast<float>(v * std::tanh(std::log1p(std::exp(v)))));
  }
  expect_near(r.outputs[0], erf_gelu);
  expect_near(r.outputs[1], tanh_gelu);
  expect_near(r.outputs[2], mish);
}

TEST_P(Lowering, ConstantsFoldUpToAWorkLimit) {
  // HardSwish of a constant c, a kernel of 7 instructions: 1000 elements fold at compile
  // time (the output's kernel only copies them); 3M elements (under the element limit, over
  // the work limit) are computed at run time. Both give the formula's values.
  for (const int64_t n : {int64_t{1000}, int64_t{3000000}}) {
    SCOPED_TRACE(n);
    std::vector<float> c(static_cast<size_t>(n));
    for (size_t i = 0; i < c.size(); ++i) c[i] = static_cast<float>(i % 1000) * 8e-3f - 4.0f;
    GraphBuilder b;
    b.output(b.op("HardSwish", {b.constant_f32({n}, c)}));
    auto g = b.finish();
    Compiled r = run_graph(*g, {}, GetParam());
    bool computes = false;
    for (const Kernel& k : r.plan.kernels)
      for (const Instr& in : k.code) computes = computes || in.op == Op::Max;
    EXPECT_EQ(computes, n != 1000);
    std::vector<float> want(c.size());
    for (size_t i = 0; i < c.size(); ++i) {
      const double x = c[i];
      want[i] = static_cast<float>(x * std::min(std::max(x / 6 + 0.5, 0.0), 1.0));
    }
    expect_near(r.outputs[0], want, 1e-5f);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Lowering, ::testing::Values("reference", "portable"));

}  // namespace
}  // namespace ferrite
