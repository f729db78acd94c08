// The Engine on the tiny fixture models of tests/cli/fixtures: one valid run checked
// against values computed here, and every input error with its exact message.
#include "bindings/engine/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>

#include "compiler/plan/error.h"
#include "runtime/kernels/portable/simd_f32.h"
#include "tests/unit/support/error_of.h"
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

using test::error_of;

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

TEST_F(EngineTest, StaticModelsCompileWhileLoading) {
  // add_relu's input is static: loading compiled it (and released the graph), and runs
  // compile nothing more. sym_add's N is symbolic: one compile for every N.
  EXPECT_EQ(add_relu_->compiles(), 1);
  EXPECT_EQ(add_relu_->cached_sessions(), 1u);
  const Tensor x = f32({2, 3}, x_);
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(run_x(x)[0].as<float>()[3], 2.0f + (-0.5f));
  EXPECT_EQ(add_relu_->compiles(), 1);
  std::unique_ptr<Engine> e = Engine::from_file(kFixtures + "sym_add.onnx", options_);
  EXPECT_EQ(e->compiles(), 0);
  for (int64_t n : {2, 5, 2, 5, 1}) {
    const Tensor a = f32({n, 3}, std::vector<float>(static_cast<size_t>(n) * 3, 1.0f));
    EXPECT_FLOAT_EQ(e->run({{"a", &a}, {"b", &a}})[0].as<float>()[0], 2.0f);
  }
  EXPECT_EQ(e->compiles(), 1);
  // Not at load where the load is not for running (`ferrite compile`), nor for a model whose
  // plan needs input values.
  EngineOptions lazy = options_;
  lazy.compile_at_load = false;
  EXPECT_EQ(Engine::from_file(kFixtures + "add_relu.onnx", lazy)->compiles(), 0);
  EXPECT_EQ(Engine::from_file(kFixtures + "reshape.onnx", options_)->compiles(), 0);
}

TEST_F(EngineTest, ShapeSessionsSharePackedWeights) {
  // sym_conv's convolutions and Gemm pack their weights (the portable GEMM's panels; oneDNN's
  // layouts on the jit backend): a session for a new batch size finds them packed by the
  // first and reads them in place, and every batch size matches the reference backend. (At
  // batch 1 oneDNN picks another Winograd blocking, and a one-row Gemm packs for one-row
  // products: other forms.)
  default_backend();  // registers jit where the build has it
  for (const std::string& backend : available_backends()) {
    if (backend == "reference") continue;  // packs nothing
    EngineOptions packing;
    packing.session.backend = backend;
    std::unique_ptr<Engine> e = Engine::from_file(kFixtures + "sym_conv.onnx", packing);
    std::unique_ptr<Engine> ref = Engine::from_file(kFixtures + "sym_conv.onnx", options_);
    ASSERT_NE(e->packed_store(), nullptr);
    size_t packed_bytes = 0, packed_weights = 0;
    for (int64_t n : {2, 3, 4}) {
      std::vector<float> v(static_cast<size_t>(n) * 32 * 28 * 28);
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7919) % 201) / 100 - 1;
      const Tensor x = f32({n, 32, 28, 28}, v);
      const std::vector<Tensor> out = e->run({{"x", &x}}), ref_out = ref->run({{"x", &x}});
      const Tensor &y = out[0], &want = ref_out[0];
      ASSERT_EQ(y.shape(), (std::vector<int64_t>{n, 10}));
      for (int64_t i = 0; i < n * 10; ++i)
        EXPECT_NEAR(y.as<float>()[i], want.as<float>()[i],
                    1e-4f + 1e-4f * std::abs(want.as<float>()[i]))
            << backend << " N=" << n << " " << i;
      if (n == 2) {
        packed_bytes = e->packed_store()->live_bytes();
        packed_weights = e->packed_store()->live_entries();
        // Both convolutions' weights and the Gemm's (which oneDNN, capped at AVX2, reads as
        // it is).
        if (backend == "portable") {
          EXPECT_EQ(packed_weights, 3u);
        }
        EXPECT_GE(packed_weights, 2u) << backend;
        EXPECT_GE(packed_bytes, 2 * 32 * 32 * 9 * sizeof(float)) << backend;
        EXPECT_EQ(e->packed_store()->hits(), 0) << backend;
      }
    }
    EXPECT_EQ(e->compiles(), 3) << backend;
    EXPECT_EQ(e->packed_store()->hits(), static_cast<int64_t>(2 * packed_weights)) << backend;
    EXPECT_EQ(e->packed_store()->live_bytes(), packed_bytes) << backend;  // once, not per shape
  }
  EXPECT_EQ(add_relu_->packed_store(), nullptr);  // one session only: nothing to share
}

TEST_F(EngineTest, SymbolicBatchCompilesOnce) {
  // sym_mlp is compiled once for every N (docs/shapes.md; on the first N >= 2): each new
  // batch size, 1 too, is an instance of that plan, with a session of its own, and matches
  // the reference backend, which compiles it the same way.
  default_backend();
  for (const std::string& backend : available_backends()) {
    EngineOptions o;
    o.session.backend = backend;
    std::unique_ptr<Engine> e = Engine::from_file(kFixtures + "sym_mlp.onnx", o);
    std::unique_ptr<Engine> ref = Engine::from_file(kFixtures + "sym_mlp.onnx", options_);
    for (int64_t n : {3, 2, 7, 64, 3}) {
      std::vector<float> v(static_cast<size_t>(n) * 8);
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 37) % 19) / 9 - 1;
      const Tensor x = f32({n, 8}, v);
      const std::vector<Tensor> out = e->run({{"x", &x}}), want = ref->run({{"x", &x}});
      ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{n, 4}));
      for (int64_t i = 0; i < n * 4; ++i)
        EXPECT_NEAR(out[0].as<float>()[i], want[0].as<float>()[i], 1e-4f) << backend << " " << n;
    }
    EXPECT_EQ(e->compiles(), 1) << backend;
    const Tensor one = f32({1, 8}, std::vector<float>(8, 0.5f));
    const std::vector<Tensor> out = e->run({{"x", &one}}), want = ref->run({{"x", &one}});
    for (int64_t i = 0; i < 4; ++i)
      EXPECT_NEAR(out[0].as<float>()[i], want[0].as<float>()[i], 1e-4f) << backend << " 1";
    EXPECT_EQ(e->compiles(), 1) << backend;
  }
}

TEST_F(EngineTest, SharedPanelsAreNeverRepackedInPlace) {
  // A portable extern whose SIMD target changed packs its weights again (sym_wino's
  // Winograd convolution keeps its raw weights for that): into a copy of its own, never
  // over the panels the other sessions read from the store.
  const std::vector<std::string> targets = simd::available_targets();
  if (targets.size() < 2) GTEST_SKIP() << "one SIMD target only";
  simd::pin_target(targets.front());  // where the sessions pack, and go back to
  EngineOptions portable;
  portable.session.backend = "portable";
  std::unique_ptr<Engine> e = Engine::from_file(kFixtures + "sym_wino.onnx", portable);
  std::unique_ptr<Engine> ref = Engine::from_file(kFixtures + "sym_wino.onnx", options_);
  auto check = [&](int64_t n, const char* what) {
    std::vector<float> v(static_cast<size_t>(n) * 32 * 28 * 28);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 31) % 97) / 50 - 1;
    const Tensor x = f32({n, 32, 28, 28}, v);
    const std::vector<Tensor> out = e->run({{"x", &x}}), want = ref->run({{"x", &x}});
    for (int64_t i = 0; i < n * 32 * 28 * 28; ++i)
      ASSERT_NEAR(out[0].as<float>()[i], want[0].as<float>()[i],
                  1e-4f + 1e-4f * std::abs(want[0].as<float>()[i]))
          << what << " N=" << n << " " << i;
  };
  check(2, "packed");
  check(3, "shared");
  const size_t bytes = e->packed_store()->live_bytes();
  simd::pin_target(targets.back());
  check(2, "repacked");
  simd::pin_target(targets.front());
  check(3, "shared, after the other session repacked");
  EXPECT_EQ(e->packed_store()->live_bytes(), bytes);
  simd::pin_target("");
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

TEST_F(EngineTest, IfCompilesOnlyTheBranchTaken) {
  // if_shapes reshapes x to [4,128] when sr is 16000 and to [4,64] otherwise: each branch
  // fits only its own x, so the If runs on its own (the model is cut there: the condition
  // before it, Neg after it), and only the branch taken is compiled, when first taken.
  for (const char* backend : {"reference", "portable"}) {
    options_.session.backend = backend;
    std::unique_ptr<Engine> e = Engine::from_file(kFixtures + "if_shapes.onnx", options_);
    // The condition (sr == 16000), the then branch and the tail for [4,128]; then the else
    // branch and the tail for [4,64]; then nothing new.
    const std::vector<int64_t> rates = {16000, 8000, 16000}, compiles = {3, 5, 5};
    for (size_t step = 0; step < rates.size(); ++step) {
      const int64_t rate = rates[step];
      const int64_t cols = rate == 16000 ? 128 : 64;
      std::vector<float> v(static_cast<size_t>(4 * cols));
      for (size_t i = 0; i < v.size(); ++i) v[i] = 0.5f * static_cast<float>(i) - 7;
      const Tensor x = f32({1, 4 * cols}, v), sr(DType::I64, {}, &rate);
      const std::vector<Tensor> out = e->run({{"x", &x}, {"sr", &sr}});
      ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{4, cols})) << backend << " " << rate;
      for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(out[0].as<float>()[i], -v[i]);
      EXPECT_TRUE(e->runs_in_parts());
      EXPECT_EQ(e->compiles(), compiles[step]) << backend << " " << rate;
    }
    // The branch taken is compiled, and its errors reported: 100 elements fit neither.
    const int64_t rate = 8000;
    const Tensor x = f32({1, 100}, std::vector<float>(100, 1.0f)), sr(DType::I64, {}, &rate);
    const std::string message = error_of([&] { e->run({{"x", &x}, {"sr", &sr}}); });
    EXPECT_NE(message.find("cannot reshape 100 elements"), std::string::npos) << message;
  }
}

TEST_F(EngineTest, LoopsWithAFedTripCountRunAtRunTime) {
  // loop_grow: acc = x, then n times acc = Concat(acc, x * i); steps = [0 .. n-1]. Its trip
  // count n is fed, so the Loop runs at run time (no plan per n), its body compiled per
  // shape of the growing acc (symbolic shapes will make that one compile). With no
  // iteration, steps has the type its body declares: float32 [0, 1].
  for (const char* backend : {"reference", "portable"}) {
    options_.session.backend = backend;
    std::unique_ptr<Engine> e = Engine::from_file(kFixtures + "loop_grow.onnx", options_);
    const std::vector<float> xv = {1, -2, 3, 0.5f};
    const Tensor x = f32({1, 4}, xv);
    for (int64_t n : {3, 0, 40, 0}) {
      const Tensor nt(DType::I64, {}, &n);
      const std::vector<Tensor> out = e->run({{"n", &nt}, {"x", &x}});
      EXPECT_TRUE(e->runs_in_parts());
      ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{n + 1, 4})) << backend;
      ASSERT_EQ(out[1].shape(), (std::vector<int64_t>{n, 1}));
      ASSERT_EQ(out[1].dtype(), DType::F32);
      for (int64_t r = 0; r <= n; ++r)
        for (int64_t k = 0; k < 4; ++k)
          ASSERT_EQ(out[0].as<float>()[r * 4 + k],
                    r == 0 ? xv[static_cast<size_t>(k)]
                           : xv[static_cast<size_t>(k)] * static_cast<float>(r - 1))
              << backend << " n=" << n << " row " << r;
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(out[1].as<float>()[i], static_cast<float>(i));
    }
  }
}

TEST_F(EngineTest, ScansPastTheBudgetRunAtRunTime) {
  // scan_sum: s = s0; for t from T-1 down to 0 (xs read in reverse): s += xs[t], ys_t = 2 s;
  // ys stacked on axis 1: [1, T, 2]. With a budget of 1 node the Scan runs at run time.
  options_.compile.max_unrolled_nodes = 1;
  for (const char* backend : {"reference", "portable"}) {
    options_.session.backend = backend;
    std::unique_ptr<Engine> e = Engine::from_file(kFixtures + "scan_sum.onnx", options_);
    const Tensor s0 = f32({1, 2}, {0.5f, -1});
    for (int64_t steps : {4, 1, 0, 9}) {  // none: ys is [1, 0, 2], as the body declares
      std::vector<float> xv(static_cast<size_t>(2 * steps));
      for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i % 5) - 1.5f;
      const Tensor xs = f32({steps, 2}, xv);
      const std::vector<Tensor> out = e->run({{"s0", &s0}, {"xs", &xs}});
      EXPECT_TRUE(e->runs_in_parts());
      ASSERT_EQ(out[1].shape(), (std::vector<int64_t>{1, steps, 2})) << backend;
      float s[2] = {0.5f, -1};
      for (int64_t k = 0; k < steps; ++k) {
        const int64_t t = steps - 1 - k;  // the k-th step reads row t
        for (int64_t c = 0; c < 2; ++c) {
          s[c] += xv[static_cast<size_t>(2 * t + c)];
          EXPECT_EQ(out[1].as<float>()[2 * k + c], 2 * s[c]) << backend << " step " << k;
        }
      }
      EXPECT_EQ(out[0].as<float>()[0], s[0]);
      EXPECT_EQ(out[0].as<float>()[1], s[1]);
    }
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
