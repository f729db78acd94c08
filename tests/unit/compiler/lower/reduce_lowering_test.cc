// Reduce* lowerings on every backend: axes as an attribute (opset 13) and as an input
// (ReduceSum from 13, the others from 18), constant or a model input the plan specializes
// on; noop_with_empty_axes; keepdims; reductions over an empty set (the identity in the
// output dtype); bool ReduceMax/ReduceMin; and the errors of bad axes. Expected values are
// computed here in double from the inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "compiler/compile.h"
#include "compiler/plan/error.h"
#include "runtime/backend.h"
#include "tests/unit/compiler/lower/run_graph.h"

namespace ferrite {
namespace {

using namespace lower_test;

// One Reduce* op as the formula the test checks against: fold `step` over the elements of
// a reduced set starting at `init`, then `post`.
struct ReduceFormula {
  std::string op;
  double init;
  std::function<double(double, double)> step;
  std::function<double(double, double)> post;  // (folded value, count)
};

std::vector<ReduceFormula> formulas() {
  auto add = [](double a, double x) { return a + x; };
  auto same = [](double v, double) { return v; };
  return {
      {"ReduceSum", 0, add, same},
      {"ReduceMean", 0, add, [](double v, double n) { return v / n; }},
      {"ReduceMax", -INFINITY, [](double a, double x) { return std::max(a, x); }, same},
      {"ReduceMin", INFINITY, [](double a, double x) { return std::min(a, x); }, same},
      {"ReduceProd", 1, [](double a, double x) { return a * x; }, same},
      {"ReduceL1", 0, [](double a, double x) { return a + std::fabs(x); }, same},
      {"ReduceL2", 0, [](double a, double x) { return a + x * x; },
       [](double v, double) { return std::sqrt(v); }},
      {"ReduceSumSquare", 0, [](double a, double x) { return a + x * x; }, same},
      {"ReduceLogSum", 0, add, [](double v, double) { return std::log(v); }},
      {"ReduceLogSumExp", 0, [](double a, double x) { return a + std::exp(x); },
       [](double v, double) { return std::log(v); }},
  };
}

// x [2, 3, 4] reduced over axis 1 (keepdims 0) and over axes {0, 2} (keepdims 1).
std::vector<float> expected(const ReduceFormula& f, const std::vector<float>& x, bool axis1) {
  std::vector<float> out;
  if (axis1) {
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 4; ++k) {
        double a = f.init;
        for (int j = 0; j < 3; ++j) a = f.step(a, x[i * 12 + j * 4 + k]);
        out.push_back(static_cast<float>(f.post(a, 3)));
      }
    return out;
  }
  for (int j = 0; j < 3; ++j) {
    double a = f.init;
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 4; ++k) a = f.step(a, x[i * 12 + j * 4 + k]);
    out.push_back(static_cast<float>(f.post(a, 8)));
  }
  return out;
}

std::vector<float> positive_floats(size_t n, uint32_t seed) {
  std::vector<float> v = random_floats(n, seed);
  for (float& x : v) x = 0.5f + std::fabs(x) / 2;  // in [0.5, 1.5]: logs and products stay tame
  return v;
}

// Every Reduce* at opset 18 with constant axes: the reduction is over those axes only.
TEST(ReduceLowering, Opset18AxesInputOnEveryBackend) {
  const std::vector<float> xs = positive_floats(24, 3);
  for (const ReduceFormula& f : formulas()) {
    for (bool axis1 : {true, false}) {
      GraphBuilder b;
      Value* x = b.input("x", DType::F32, {2, 3, 4});
      Value* axes = axis1 ? b.constant_i64({1}, {-2}) : b.constant_i64({2}, {2, 0});
      b.output(b.op(f.op, {x, axes}, {{"keepdims", attr_i(axis1 ? 0 : 1)}}));
      auto g = b.finish();
      g->opsets[""] = 18;
      const std::vector<int64_t> shape =
          axis1 ? std::vector<int64_t>{2, 4} : std::vector<int64_t>{1, 3, 1};
      for (const std::string& backend : backend_names()) {
        SCOPED_TRACE(f.op + (axis1 ? " axis 1 on " : " axes 0,2 on ") + backend);
        Compiled r = run_graph(*g, tensors(Tensor(DType::F32, {2, 3, 4}, xs.data())), backend);
        ASSERT_EQ(r.outputs[0].shape(), shape);
        expect_near(r.outputs[0], expected(f, xs, axis1));
      }
    }
  }
}

// The same node at opset 13 reads its axes from the attribute (ReduceSum excepted).
TEST(ReduceLowering, Opset13AxesAttribute) {
  const std::vector<float> xs = positive_floats(24, 4);
  for (const ReduceFormula& f : formulas()) {
    if (f.op == "ReduceSum") continue;
    GraphBuilder b;
    Value* x = b.input("x", DType::F32, {2, 3, 4});
    b.output(b.op(f.op, {x}, {{"axes", attr_is({1})}, {"keepdims", attr_i(0)}}));
    auto g = b.finish();
    g->opsets[""] = 13;
    SCOPED_TRACE(f.op);
    Compiled r = run_graph(*g, tensors(Tensor(DType::F32, {2, 3, 4}, xs.data())), "reference");
    ASSERT_EQ(r.outputs[0].shape(), (std::vector<int64_t>{2, 4}));
    expect_near(r.outputs[0], expected(f, xs, true));
  }
}

// Axes fed as a model input: the plan specializes on its value, and without one the
// compiler asks for it (NeedsInputValueError, as for a Reshape's shape).
TEST(ReduceLowering, AxesAsModelInputSpecializes) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {2, 3, 4});
  Value* axes = b.input("axes", DType::I64, {1});
  b.output(b.op("ReduceMean", {x, axes}, {{"keepdims", attr_i(0)}}));
  auto g = b.finish();
  g->opsets[""] = 18;
  const std::vector<float> xs = positive_floats(24, 5);
  const std::vector<int64_t> ax{1};
  auto value = std::make_shared<TensorData>();
  value->dtype = DType::I64;
  value->shape = {1};
  value->bytes.assign(reinterpret_cast<const uint8_t*>(ax.data()),
                      reinterpret_cast<const uint8_t*>(ax.data()) + 8);
  Compiled r = run_graph(
      *g, tensors(Tensor(DType::F32, {2, 3, 4}, xs.data()), Tensor(DType::I64, {1}, ax.data())),
      "reference", {nullptr, value});
  ASSERT_EQ(r.outputs[0].shape(), (std::vector<int64_t>{2, 4}));
  expect_near(r.outputs[0], expected(formulas()[1], xs, true));
  std::vector<TensorType> types;
  for (const Value* v : g->inputs) types.push_back(v->type);
  EXPECT_THROW(compile_graph(*g, types, {}), NeedsInputValueError);
}

// noop_with_empty_axes with no axes reduces over no axis: each element alone, so
// ReduceSumSquare gives x^2 (the ONNX reference's np.sum(np.square(x), axis=())).
TEST(ReduceLowering, NoopWithEmptyAxes) {
  const std::vector<float> xs = random_floats(6, 6);
  for (const std::string op : {"ReduceSum", "ReduceSumSquare", "ReduceL1", "ReduceMax"}) {
    GraphBuilder b;
    Value* x = b.input("x", DType::F32, {2, 3});
    b.output(b.op(op, {x, b.constant_i64({0}, {})}, {{"noop_with_empty_axes", attr_i(1)}}));
    auto g = b.finish();
    g->opsets[""] = 18;
    std::vector<float> want = xs;
    for (float& v : want) {
      if (op == std::string("ReduceSumSquare")) v = v * v;
      if (op == std::string("ReduceL1")) v = std::fabs(v);
    }
    SCOPED_TRACE(op);
    Compiled r = run_graph(*g, tensors(Tensor(DType::F32, {2, 3}, xs.data())), "reference");
    ASSERT_EQ(r.outputs[0].shape(), (std::vector<int64_t>{2, 3}));
    expect_near(r.outputs[0], want);
  }
}

// A reduction over an empty set is the operation's identity in the output dtype.
TEST(ReduceLowering, EmptySetGivesIdentity) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<std::pair<std::string, float>> cases = {
      {"ReduceSum", 0.f},        {"ReduceProd", 1.f},     {"ReduceMax", -inf},
      {"ReduceMin", inf},        {"ReduceL2", 0.f},       {"ReduceLogSum", -inf},
      {"ReduceLogSumExp", -inf}, {"ReduceSumSquare", 0.f}};
  for (const auto& [op, want] : cases) {
    GraphBuilder b;
    Value* x = b.input("x", DType::F32, {2, 0, 3});
    b.output(b.op(op, {x, b.constant_i64({1}, {1})}, {{"keepdims", attr_i(1)}}));
    auto g = b.finish();
    g->opsets[""] = 18;
    for (const std::string& backend : backend_names()) {
      SCOPED_TRACE(op + " on " + backend);
      Compiled r = run_graph(*g, tensors(Tensor(DType::F32, {2, 0, 3})), backend);
      ASSERT_EQ(r.outputs[0].shape(), (std::vector<int64_t>{2, 1, 3}));
      for (float v : values_of<float>(r.outputs[0])) EXPECT_EQ(v, want);
    }
  }
  // ReduceMean: 0/0.
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {0, 2});
  b.output(b.op("ReduceMean", {x, b.constant_i64({1}, {0})}, {{"keepdims", attr_i(0)}}));
  auto g = b.finish();
  g->opsets[""] = 18;
  Compiled r = run_graph(*g, tensors(Tensor(DType::F32, {0, 2})), "reference");
  for (float v : values_of<float>(r.outputs[0])) EXPECT_TRUE(std::isnan(v));
}

// Integers take the dtype's extremes where a float would be infinite.
TEST(ReduceLowering, EmptySetIntegerExtremes) {
  for (const auto& [op, want] : std::vector<std::pair<std::string, int32_t>>{
           {"ReduceMin", INT32_MAX}, {"ReduceMax", INT32_MIN}, {"ReduceProd", 1}}) {
    GraphBuilder b;
    Value* x = b.input("x", DType::I32, {3, 0});
    b.output(b.op(op, {x, b.constant_i64({1}, {-1})}, {{"keepdims", attr_i(0)}}));
    auto g = b.finish();
    g->opsets[""] = 18;
    SCOPED_TRACE(op);
    Compiled r = run_graph(*g, tensors(Tensor(DType::I32, {3, 0})), "reference");
    EXPECT_EQ(values_of<int32_t>(r.outputs[0]), std::vector<int32_t>(3, want));
  }
}

// ReduceMax/ReduceMin on bool (opset 20): any / all; over an empty set false / true.
TEST(ReduceLowering, BoolMaxMinOnEveryBackend) {
  const std::vector<uint8_t> xs = {1, 1, 1, 0, 0, 1, 0, 0};  // [4, 2]
  for (const std::string op : {"ReduceMax", "ReduceMin"}) {
    const bool max = op == "ReduceMax";
    for (int64_t n : {2, 0}) {
      GraphBuilder b;
      Value* x = b.input("x", DType::Bool, {4, n});
      b.output(b.op(op, {x, b.constant_i64({1}, {1})}, {{"keepdims", attr_i(1)}}));
      auto g = b.finish();
      g->opsets[""] = 20;
      std::vector<uint8_t> want(4);
      for (int i = 0; i < 4; ++i) {
        want[i] = n == 0 ? !max : max ? xs[2 * i] | xs[2 * i + 1] : xs[2 * i] & xs[2 * i + 1];
      }
      for (const std::string& backend : backend_names()) {
        SCOPED_TRACE(op + " n=" + std::to_string(n) + " on " + backend);
        Compiled r = run_graph(*g, tensors(Tensor(DType::Bool, {4, n}, xs.data())), backend);
        ASSERT_EQ(r.outputs[0].shape(), (std::vector<int64_t>{4, 1}));
        EXPECT_EQ(values_of<uint8_t>(r.outputs[0]), want);
      }
    }
  }
}

// log-sum-exp of a row of -inf is -inf and of a row holding +inf is +inf (not NaN from
// inf - inf), and large values do not overflow.
TEST(ReduceLowering, LogSumExpInfiniteRows) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> xs = {-inf, -inf, 1.f, inf, 1000.f, 1000.f};
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {3, 2});
  b.output(b.op("ReduceLogSumExp", {x, b.constant_i64({1}, {1})}, {{"keepdims", attr_i(0)}}));
  auto g = b.finish();
  g->opsets[""] = 18;
  for (const std::string& backend : backend_names()) {
    SCOPED_TRACE(backend);
    Compiled r = run_graph(*g, tensors(Tensor(DType::F32, {3, 2}, xs.data())), backend);
    const std::vector<float> got = values_of<float>(r.outputs[0]);
    EXPECT_EQ(got[0], -inf);
    EXPECT_EQ(got[1], inf);
    EXPECT_NEAR(got[2], 1000 + std::log(2.0), 1e-3);
  }
}

// Compiling `g` fails with a ferrite::Error whose message holds `what`.
void expect_compile_error(const Graph& g, const std::string& what) {
  std::vector<TensorType> types;
  for (const Value* v : g.inputs) types.push_back(v->type);
  try {
    compile_graph(g, types, {});
    ADD_FAILURE() << "compiled; expected an error holding '" << what << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(ReduceLowering, BadAxesAreErrors) {
  for (const std::vector<int64_t>& axes : {std::vector<int64_t>{1, -1}, {2}, {-3}}) {
    GraphBuilder b;
    Value* x = b.input("x", DType::F32, {2, 3});
    b.output(b.op("ReduceMax", {x, b.constant_i64({static_cast<int64_t>(axes.size())}, axes)}));
    auto g = b.finish();
    g->opsets[""] = 18;
    expect_compile_error(*g, axes.size() == 2 ? "axes repeat an axis" : "out of range");
  }
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {2, 0});
  b.output(b.op("ArgMax", {x}, {{"axis", attr_i(1)}}));
  auto g = b.finish();
  expect_compile_error(*g, "axis 1 is empty");
}

}  // namespace
}  // namespace ferrite
