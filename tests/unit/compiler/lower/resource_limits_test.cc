// Resource limits (compiler/plan/resource_limits.h, issue 25): an intermediate of hundreds
// of GB is refused when the plan is compiled and again when a session loads it (a crafted
// plan), before anything is allocated; Loop, Scan and LSTM unrolling stops at the node
// budget, at once where the trip count is known; a tensor too large for the machine is an
// error; sizes and the environment variables parse.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>

#include "compiler/compile.h"
#include "compiler/plan/resource_limits.h"
#include "runtime/session.h"
#include "tests/unit/compiler/lower/run_graph.h"

namespace ferrite {
namespace {

// The message of the LimitError `f` throws ("(no error)" if none, "(other) ..." for another).
std::string limit_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const LimitError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("(other) ") + e.what();
  }
  return "(no error)";
}

Attribute graph_attr(std::shared_ptr<Graph> g) {
  Attribute a;
  a.kind = AttrKind::Graph;
  a.g = std::move(g);
  return a;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

std::vector<TensorType> input_types(const Graph& g) {
  std::vector<TensorType> types;
  for (const Value* v : g.inputs) types.push_back(v->type);
  return types;
}

// [n, 1] x [1, n], reduced to its maximum: an n x n float intermediate.
std::unique_ptr<Graph> outer_product_max(int64_t n) {
  GraphBuilder b;
  Value* a = b.input("a", DType::F32, {n, 1});
  Value* c = b.input("b", DType::F32, {1, n});
  b.output(b.op("ReduceMax", {b.op("MatMul", {a, c})}, {{"keepdims", attr_i(0)}}));
  return b.finish();
}

TEST(ResourceLimits, CompileRefusesAnIntermediatePastTheLimit) {
  auto g = outer_product_max(1000000);  // 4e12 bytes
  CompileOptions options;
  options.memory_limit = int64_t{1} << 30;
  const std::string message = limit_error([&] { compile_graph(*g, input_types(*g), options); });
  EXPECT_EQ(message,
            "the model (intermediates 3.6 TiB, constants 0 bytes, outputs 4 bytes) needs "
            "4000000000004 bytes (3.6 TiB), more than the memory limit of 1073741824 bytes "
            "(1 GiB); set it with --memory-limit or FERRITE_MEMORY_LIMIT");
  // The default (3/4 of this machine's memory) refuses it too.
  EXPECT_TRUE(contains(limit_error([&] { compile_graph(*g, input_types(*g), {}); }),
                       "more than the memory limit"));
}

TEST(ResourceLimits, SessionRefusesACraftedPoolBeforeAllocatingIt) {
  auto g = outer_product_max(4);
  Plan plan = compile_graph(*g, input_types(*g), {});
  plan.pool_bytes = int64_t{1} << 50;  // a plan file may say anything
  SessionOptions options;
  options.backend = "reference";
  options.memory_limit = int64_t{1} << 30;
  EXPECT_TRUE(contains(limit_error([&] { Session(plan, options); }),
                       "needs 1125899906842628 bytes (1 PiB), more than the memory limit of "
                       "1073741824 bytes"));
}

// A Loop of `trips` iterations of y = y + 1 (two body nodes plus the condition's).
std::unique_ptr<Graph> counting_loop(int64_t trips) {
  GraphBuilder bb;
  bb.input("i", DType::I64, {});
  Value* cin = bb.input("cond_in", DType::Bool, {});
  Value* y = bb.input("y_in", DType::F32, {1});
  bb.output(bb.op("Identity", {cin}));
  bb.output(bb.op("Add", {y, bb.constant_f32({1}, {1.f})}));
  GraphBuilder b;
  Value* y0 = b.input("y0", DType::F32, {1});
  b.output(b.op("Loop", {b.constant_i64({}, {trips}), nullptr, y0},
                {{"body", graph_attr(std::shared_ptr<Graph>(bb.finish()))}}));
  return b.finish();
}

TEST(ResourceLimits, LoopUnrollingStopsAtTheBudgetAndTheLoopRunsAtRunTime) {
  CompileOptions options;
  options.max_unrolled_nodes = 300;  // 100 iterations of 2 nodes plus 1 each
  auto fits = counting_loop(100);
  const float zero = 0;
  const std::vector<Tensor> out =
      lower_test::run_graph(*fits, lower_test::tensors(Tensor(DType::F32, {1}, &zero)), "reference",
                            {}, options)
          .outputs;
  EXPECT_EQ(out[0].as<float>()[0], 100.0f);
  // Past the budget the compile stops at once and asks for the loop to run at run time,
  // on its own (the engine cuts the model there: EngineTest.ScansPastTheBudgetRunAtRunTime);
  // so does a loop past kUnrollAtMost nodes, before unrolling any of it.
  auto past_budget = counting_loop(200), huge = counting_loop(int64_t{1} << 40);
  auto cut_message = [&](const Graph& g) {
    try {
      compile_graph(g, input_types(g), options);
    } catch (const NeedsCutError& e) {
      EXPECT_EQ(e.node_output, g.outputs[0]->name);
      return std::string(e.what());
    }
    return std::string("no NeedsCutError");
  };
  const std::string loop = "Loop (output '" + past_budget->outputs[0]->name + "')";
  EXPECT_EQ(cut_message(*past_budget),
            loop + ": runs at run time: " + loop +
                ": iteration 101 of 200 would unroll more than 300 nodes (loops and "
                "recurrences are unrolled at compile time; raise the limit with "
                "--max-unrolled-nodes or FERRITE_MAX_UNROLLED_NODES)");
  EXPECT_EQ(cut_message(*huge), "Loop (output '" + huge->outputs[0]->name +
                                    "'): 1099511627776 iterations would unroll more than 1024 "
                                    "nodes: it runs at run time");
}

TEST(ResourceLimits, LongScansRunAtRunTimeAndLstmIsChargedBeforeItsFirstStep) {
  // Scan over a sequence of 10^6 rows (y = y + x_t): past kUnrollAtMost nodes it runs at run
  // time, before unrolling any step. An LSTM over 10^6 steps: refused at once with the
  // default budget of 50000 nodes.
  GraphBuilder sb;
  Value* s = sb.input("s", DType::F32, {1});
  Value* xt = sb.input("xt", DType::F32, {1});
  sb.output(sb.op("Add", {s, xt}));
  GraphBuilder b;
  Value* s0 = b.input("s0", DType::F32, {1});
  Value* xs = b.input("xs", DType::F32, {1000000, 1});
  b.output(b.op(
      "Scan", {s0, xs},
      {{"body", graph_attr(std::shared_ptr<Graph>(sb.finish()))}, {"num_scan_inputs", attr_i(1)}}));
  auto scan = b.finish();
  EXPECT_THROW(compile_graph(*scan, input_types(*scan), {}), NeedsCutError);

  GraphBuilder lb;
  Value* x = lb.input("X", DType::F32, {1000000, 1, 2});
  Value* w = lb.constant_f32({1, 8, 2}, std::vector<float>(16, 0.1f));
  Value* r = lb.constant_f32({1, 8, 2}, std::vector<float>(16, 0.1f));
  lb.output(lb.op("LSTM", {x, w, r}, {{"hidden_size", attr_i(2)}}));
  auto lstm = lb.finish();
  EXPECT_TRUE(contains(limit_error([&] { compile_graph(*lstm, input_types(*lstm), {}); }),
                       "a sequence of 1000000 steps would unroll more than 50000 nodes"));
}

TEST(ResourceLimits, ATensorTheMachineCannotHoldIsAnError) {
  // 2^47 bytes, the whole x86-64 user address space: a clean error, also under ASan, whose
  // malloc aborts past 1 TiB (a tensor this large is mapped), and with no limit set.
  EXPECT_THROW(Tensor(DType::F32, {int64_t{1} << 23, int64_t{1} << 22}), Error);
  EXPECT_THROW(Tensor(DType::F32, {int64_t{1} << 62, 8}), Error);  // the byte size overflows
}

TEST(ResourceLimits, SizesParse) {
  EXPECT_EQ(parse_memory_size("4096", "x"), 4096);
  EXPECT_EQ(parse_memory_size("512M", "x"), int64_t{512} << 20);
  EXPECT_EQ(parse_memory_size("8g", "x"), int64_t{8} << 30);
  EXPECT_EQ(parse_memory_size("1.5GiB", "x"), int64_t{3} << 29);
  EXPECT_EQ(parse_memory_size("2TB", "x"), int64_t{2} << 40);
  EXPECT_EQ(parse_memory_size("none", "x"), INT64_MAX);
  for (const char* bad : {"", "0", "-1G", "12x", "G", "1e400", "nan"})
    EXPECT_THROW(parse_memory_size(bad, "x"), Error) << bad;
}

TEST(ResourceLimits, EnvironmentVariablesGiveTheDefaults) {
  const int64_t machine = default_memory_limit();
  EXPECT_GT(machine, 0);
  setenv("FERRITE_MEMORY_LIMIT", "3G", 1);
  EXPECT_EQ(default_memory_limit(), int64_t{3} << 30);
  EXPECT_EQ(memory_limit_or_default(0), int64_t{3} << 30);
  EXPECT_EQ(memory_limit_or_default(5), 5);
  setenv("FERRITE_MEMORY_LIMIT", "lots", 1);
  EXPECT_THROW(default_memory_limit(), Error);
  unsetenv("FERRITE_MEMORY_LIMIT");
  EXPECT_EQ(default_memory_limit(), machine);
  EXPECT_EQ(default_max_unrolled_nodes(), kDefaultMaxUnrolledNodes);
  setenv("FERRITE_MAX_UNROLLED_NODES", "1234", 1);
  EXPECT_EQ(max_unrolled_nodes_or_default(0), 1234);
  setenv("FERRITE_MAX_UNROLLED_NODES", "-3", 1);
  EXPECT_THROW(default_max_unrolled_nodes(), Error);
  unsetenv("FERRITE_MAX_UNROLLED_NODES");
}

}  // namespace
}  // namespace ferrite
