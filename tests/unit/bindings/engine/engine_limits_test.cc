// The Engine under resource limits (issue 25, D2): a session that cannot be created (out of
// memory, or past the memory limit) leaves the engine reporting that error again, not "the
// model's graph was released", and able to compile and run once memory allows; the limit
// reaches both the compiler (compile.memory_limit) and the session (session.memory_limit).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string>

#include "bindings/engine/engine.h"
#include "compiler/plan/resource_limits.h"
#include "tests/unit/support/error_of.h"
#include "tests/unit/support/source_dir.h"

namespace ferrite {
namespace {

const std::string kAddRelu = test::source_dir() + "/tests/cli/fixtures/add_relu.onnx";

using test::error_of;

// Sets FERRITE_MEMORY_LIMIT while it lives.
class MemoryLimitVariable {
 public:
  explicit MemoryLimitVariable(const char* value) {
    const char* old = std::getenv("FERRITE_MEMORY_LIMIT");
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv("FERRITE_MEMORY_LIMIT", value, 1);
  }
  ~MemoryLimitVariable() {
    if (had_) {
      setenv("FERRITE_MEMORY_LIMIT", old_.c_str(), 1);
    } else {
      unsetenv("FERRITE_MEMORY_LIMIT");
    }
  }

 private:
  bool had_ = false;
  std::string old_;
};

const std::vector<float> kX = {-1.0f, 0.25f, -0.75f, 2.0f, 0.5f, 0.1f};

// add_relu: y = relu(x + [-0.5, 0, 0.5]).
void expect_add_relu(const std::vector<Tensor>& out) {
  ASSERT_EQ(out.size(), 1u);
  const float c[3] = {-0.5f, 0.0f, 0.5f};
  for (int i = 0; i < 6; ++i)
    EXPECT_FLOAT_EQ(out[0].as<float>()[i], std::max(kX[i] + c[i % 3], 0.0f)) << i;
}

TEST(EngineLimits, AFailedSessionLeavesTheEngineUsable) {
  // add_relu's inputs are static, so its graph is released once its one session exists;
  // before the fix it was released before the session, whose failure then left every later
  // run with "the model's graph was released after its only plan was compiled". (Compiled
  // at the first run here; at load, the load fails: TheLimitReachesTheCompilerAndTheSession.)
  EngineOptions options;
  options.session.backend = "reference";
  options.compile_at_load = false;
  options.compile.memory_limit = parse_memory_size("none", "test");  // the session decides
  std::unique_ptr<Engine> engine = Engine::from_file(kAddRelu, options);
  const Tensor x(DType::F32, {2, 3}, kX.data());
  {
    const MemoryLimitVariable tiny("30");  // the session's plan needs 36 bytes and more
    const std::string first = error_of([&] { engine->run({{"x", &x}}); });
    EXPECT_NE(first.find("more than the memory limit of 30 bytes"), std::string::npos) << first;
    EXPECT_EQ(error_of([&] { engine->run({{"x", &x}}); }), first);    // the real error, again
    EXPECT_EQ(engine->compile_plan({{"x", &x}}).outputs.size(), 1u);  // the graph is kept
  }
  expect_add_relu(engine->run({{"x", &x}}));  // memory allows now
  EXPECT_EQ(error_of([&] {
              engine->session_for({{3, 2}});
            }),
            "the model's graph was released after its only plan was compiled");
}

TEST(EngineLimits, TheLimitReachesTheCompilerAndTheSession) {
  // session.memory_limit alone limits both: the compile (at load: add_relu's input is
  // static) fails first, naming the sizes.
  EngineOptions options;
  options.session.backend = "reference";
  options.session.memory_limit = 30;
  const Tensor x(DType::F32, {2, 3}, kX.data());
  const std::string message = error_of([&] { Engine::from_file(kAddRelu, options); });
  EXPECT_EQ(message.rfind("the model (intermediates ", 0), 0u) << message;
  EXPECT_NE(message.find("more than the memory limit of 30 bytes; set it with "
                         "--memory-limit or FERRITE_MEMORY_LIMIT"),
            std::string::npos)
      << message;
  options.session.memory_limit = 4096;
  expect_add_relu(Engine::from_file(kAddRelu, options)->run({{"x", &x}}));
}

}  // namespace
}  // namespace ferrite
