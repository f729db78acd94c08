// The Engine on the tiny fixture models of tests/cli/fixtures: one valid run checked
// against values computed here, and every input error with its exact message.
#include "bindings/engine/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <iterator>

#include "compiler/plan/error.h"
#include "tests/unit/support/source_dir.h"

namespace ferrite {
namespace {

const std::string kFixtures = test::source_dir() + "/tests/cli/fixtures/";

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

Tensor f32(std::vector<int64_t> shape, const std::vector<float>& v) {
  return Tensor(DType::F32, std::move(shape), v.data());
}

// The message of the ferrite::Error `f` throws ("(no error)" if none).
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.session.backend = "reference";
    add_relu_ = Engine::from_file(kFixtures + "add_relu.onnx", options_);
  }
  std::vector<Tensor> run_x(const Tensor& x) { return add_relu_->run({{"x", &x}}); }

  EngineOptions options_;
  std::unique_ptr<Engine> add_relu_;
  const std::vector<float> x_ = {-1.0f, 0.25f, -0.75f, 2.0f, 0.5f, 0.1f};
};

TEST_F(EngineTest, DeclaresInputsAndOutputs) {
  ASSERT_EQ(add_relu_->inputs().size(), 1u);
  EXPECT_EQ(add_relu_->inputs()[0].name, "x");
  EXPECT_EQ(add_relu_->inputs()[0].dtype, DType::F32);
  EXPECT_EQ(add_relu_->inputs()[0].shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(add_relu_->outputs().size(), 1u);
  EXPECT_EQ(add_relu_->outputs()[0].name, "y");
}

TEST_F(EngineTest, RunComputesReluOfXPlusC) {
  const float c[3] = {-0.5f, 0.0f, 0.5f};
  for (const char* backend : {"reference", "portable"}) {
    options_.session.backend = backend;
    const std::vector<uint8_t> bytes = file_bytes(kFixtures + "add_relu.onnx");
    std::unique_ptr<Engine> engine = Engine::from_bytes(bytes.data(), bytes.size(), options_);
    const Tensor x = f32({2, 3}, x_);
    const std::vector<Tensor> out = engine->run({{"x", &x}});
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].dtype(), DType::F32);
    ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{2, 3}));
    for (int i = 0; i < 6; ++i) {
      EXPECT_FLOAT_EQ(out[0].as<float>()[i], std::max(x_[i] + c[i % 3], 0.0f))
          << backend << " " << i;
    }
  }
}

TEST_F(EngineTest, InputErrorsNameTheInput) {
  const Tensor x = f32({2, 3}, x_);
  const Tensor transposed = f32({3, 2}, x_);
  const Tensor flat = f32({6}, x_);
  const int64_t ints[6] = {1, 2, 3, 4, 5, 6};
  const Tensor x_i64(DType::I64, {2, 3}, ints);
  EXPECT_EQ(error_of([&] { add_relu_->run({}); }), "missing input 'x' (expected float32[2,3])");
  EXPECT_EQ(error_of([&] { add_relu_->run({{"y", &x}}); }), "unknown input 'y' (model inputs: x)");
  EXPECT_EQ(error_of([&] { add_relu_->run({{"x", &x}, {"x", &x}}); }), "input 'x' given twice");
  EXPECT_EQ(error_of([&] { run_x(x_i64); }), "input 'x': expected float32, got int64");
  EXPECT_EQ(error_of([&] { run_x(transposed); }), "input 'x': expected shape [2,3], got [3,2]");
  EXPECT_EQ(error_of([&] { run_x(flat); }), "input 'x': expected shape [2,3], got [6]");
  EXPECT_EQ(run_x(x).size(), 1u);  // still usable after the errors
}

TEST_F(EngineTest, SymbolicDimsTakeTheFedSize) {
  std::unique_ptr<Engine> e = Engine::from_file(kFixtures + "sym_add.onnx", options_);
  ASSERT_EQ(e->inputs().size(), 2u);
  EXPECT_EQ(e->inputs()[0].shape, (std::vector<int64_t>{-1, 3}));
  for (int64_t n : {1, 4}) {
    std::vector<float> a(n * 3), b(n * 3);
    for (int64_t i = 0; i < n * 3; ++i) {
      a[i] = 0.5f * i;
      b[i] = 10.0f - i;
    }
    const Tensor ta = f32({n, 3}, a), tb = f32({n, 3}, b);
    const std::vector<Tensor> out = e->run({{"b", &tb}, {"a", &ta}});  // any feed order
    ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{n, 3}));
    for (int64_t i = 0; i < n * 3; ++i) EXPECT_FLOAT_EQ(out[0].as<float>()[i], a[i] + b[i]);
  }
  const Tensor a4 = f32({4, 3}, std::vector<float>(12, 1.0f));
  const Tensor b2 = f32({2, 3}, std::vector<float>(6, 1.0f));
  EXPECT_EQ(error_of([&] {
              e->run({{"a", &a4}, {"b", &b2}});
            }),
            "input 'b': dimension 'N' is 2 here but 4 in input 'a'");
  EXPECT_EQ(error_of([&] {
              e->run({{"a", &a4}, {"c", &b2}});
            }),
            "unknown input 'c' (model inputs: a, b)");
  EXPECT_EQ(error_of([&] { e->run({{"a", &a4}}); }), "missing input 'b' (expected float32[N,3])");
}

TEST_F(EngineTest, SessionsAreCachedPerShapeSet) {
  std::unique_ptr<Engine> e = Engine::from_file(kFixtures + "sym_add.onnx", options_);
  Session& s1 = e->session_for({{2, 3}, {2, 3}});
  EXPECT_EQ(&s1, &e->session_for({{2, 3}, {2, 3}}));
  EXPECT_NE(&s1, &e->session_for({{5, 3}, {5, 3}}));
  EXPECT_THROW(e->session_for({{2, 3}}), Error);
}

TEST_F(EngineTest, SessionCacheKeepsTheMostRecentlyUsed) {
  // A model fed ever-changing shapes holds at most kMaxShapeSessions sessions (each with its
  // own weights); the least recently used one goes first, and every run stays right.
  std::unique_ptr<Engine> e = Engine::from_file(kFixtures + "sym_add.onnx", options_);
  auto shapes = [](int64_t n) { return std::vector<std::vector<int64_t>>{{n, 3}, {n, 3}}; };
  const size_t cap = Engine::kMaxShapeSessions;
  std::vector<Session*> first;
  for (size_t n = 1; n <= cap; ++n) first.push_back(&e->session_for(shapes(n)));
  EXPECT_EQ(e->cached_sessions(), cap);
  EXPECT_EQ(&e->session_for(shapes(1)), first[0]);  // now the most recent; 2 the least
  e->session_for(shapes(cap + 1));
  EXPECT_EQ(e->cached_sessions(), cap);
  EXPECT_EQ(&e->session_for(shapes(1)), first[0]);  // kept
  for (size_t n = 3; n <= cap; ++n) EXPECT_EQ(&e->session_for(shapes(n)), first[n - 1]);
  for (int64_t n = 1; n <= 20; ++n) {
    std::vector<float> a(n * 3), b(n * 3);
    for (int64_t i = 0; i < n * 3; ++i) {
      a[i] = 0.25f * i - 1;
      b[i] = 3.0f - 0.5f * i;
    }
    const Tensor ta = f32({n, 3}, a), tb = f32({n, 3}, b);
    const std::vector<Tensor> out = e->run({{"a", &ta}, {"b", &tb}});
    ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{n, 3}));
    for (int64_t i = 0; i < n * 3; ++i) ASSERT_FLOAT_EQ(out[0].as<float>()[i], a[i] + b[i]);
    EXPECT_LE(e->cached_sessions(), cap);
    EXPECT_EQ(e->last_session(), &e->session_for(shapes(n)));
  }
}

TEST_F(EngineTest, StaticInputsReleaseTheGraphOnceTheirPlanExists) {
  // add_relu's input is static: its one plan is all it will ever run, and the graph (with
  // every weight) is dropped once that plan is compiled. sym_add's N keeps its graph
  // (SessionsAreCachedPerShapeSet compiles a second shape set).
  const Tensor x = f32({2, 3}, x_);
  Session& s = add_relu_->session_for_feeds({{"x", &x}});
  EXPECT_EQ(error_of([&] {
              add_relu_->session_for({{3, 2}});
            }),
            "the model's graph was released after its only plan was compiled");
  EXPECT_EQ(&s, &add_relu_->session_for({{2, 3}}));
  const std::vector<Tensor> out = run_x(x);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FLOAT_EQ(out[0].as<float>()[3], 2.0f + (-0.5f));
}

TEST_F(EngineTest, PlansNeedingInputValuesAreCompiledPerValue) {
  // Reshape's target shape is a model input: the plan is specialized on its value.
  std::unique_ptr<Engine> e = Engine::from_file(kFixtures + "reshape.onnx", options_);
  const Tensor x = f32({2, 3}, x_);
  for (const std::vector<int64_t>& target :
       {std::vector<int64_t>{3, 2}, std::vector<int64_t>{6, 1}, std::vector<int64_t>{3, 2}}) {
    const Tensor shape(DType::I64, {2}, target.data());
    const std::vector<Tensor> out = e->run({{"x", &x}, {"shape", &shape}});
    ASSERT_EQ(out[0].shape(), target);
    for (int i = 0; i < 6; ++i) EXPECT_EQ(out[0].as<float>()[i], x_[i]);
  }
}

TEST_F(EngineTest, SessionForFeedsIsTheOneRunUses) {
  // Shapes only: the same session as session_for; values: specialized on them, nothing run.
  std::unique_ptr<Engine> e = Engine::from_file(kFixtures + "sym_add.onnx", options_);
  const Tensor a = f32({2, 3}, x_);
  Session& s = e->session_for_feeds({{"a", &a}, {"b", &a}});
  EXPECT_EQ(&s, &e->session_for({{2, 3}, {2, 3}}));
  EXPECT_EQ(error_of([&] {
              e->session_for_feeds({{"a", &a}});
            }),
            "missing input 'b' (expected float32[N,3])");
  std::unique_ptr<Engine> r = Engine::from_file(kFixtures + "reshape.onnx", options_);
  const std::vector<int64_t> target = {3, 2};
  const Tensor shape(DType::I64, {2}, target.data());
  const Plan& plan = r->session_for_feeds({{"x", &a}, {"shape", &shape}}).plan();
  ASSERT_EQ(plan.outputs.size(), 1u);
  EXPECT_EQ(plan.buffers[plan.outputs[0]].shape, target);
}

TEST_F(EngineTest, UnknownOpIsUnsupportedAndNamed) {
  const std::string msg = error_of([&] {
    std::unique_ptr<Engine> e = Engine::from_file(kFixtures + "unknown_op.onnx", options_);
    const Tensor x = f32({2, 3}, x_);
    e->run({{"x", &x}});
  });
  EXPECT_NE(msg.find("FancyOp"), std::string::npos) << msg;
  EXPECT_THROW(
      {
        std::unique_ptr<Engine> e = Engine::from_file(kFixtures + "unknown_op.onnx", options_);
        const Tensor x = f32({2, 3}, x_);
        e->run({{"x", &x}});
      },
      UnsupportedError);
}

TEST_F(EngineTest, BadModelBytesAndFilesThrow) {
  const std::vector<uint8_t> bytes = file_bytes(kFixtures + "add_relu.onnx");
  ASSERT_GT(bytes.size(), 40u);
  for (size_t cut : {bytes.size() / 2, bytes.size() - 1, size_t{3}}) {
    EXPECT_THROW(Engine::from_bytes(bytes.data(), cut, options_), Error) << cut;
  }
  EXPECT_THROW(Engine::from_file("/nonexistent/model.onnx", options_), Error);
}

}  // namespace
}  // namespace ferrite
