// If with a run-time condition (guarded steps), and unrolled Loop/Scan, on both backends.
#include <gtest/gtest.h>

#include "compiler/plan/error.h"
#include "compiler/plan/plan_io.h"
#include "tests/unit/compiler/lower/run_graph.h"

namespace ferrite {
namespace {

using namespace lower_test;

Attribute graph_attr(std::shared_ptr<Graph> g) {
  Attribute a;
  a.kind = AttrKind::Graph;
  a.g = std::move(g);
  return a;
}

// A subgraph built with GraphBuilder whose inputs named in `captured` become captures of
// the enclosing graph's values of the same name (as the ONNX importer makes them).
std::shared_ptr<Graph> with_captures(std::unique_ptr<Graph> g, size_t captured) {
  g->captures.assign(g->inputs.begin(), g->inputs.begin() + captured);
  g->inputs.erase(g->inputs.begin(), g->inputs.begin() + captured);
  return std::shared_ptr<Graph>(std::move(g));
}

class ControlFlow : public ::testing::TestWithParam<std::string> {};

// out = cond ? x[idx] + 1 : sum(x). The then-branch's Gather must not run (and so must not
// report its out-of-range index) when the condition is false.
std::unique_ptr<Graph> if_graph() {
  GraphBuilder tb;
  Value* tx = tb.input("x", DType::F32, {4});
  Value* ti = tb.input("idx", DType::I64, {1});
  tb.output(tb.op("Add", {tb.op("Gather", {tx, ti}), tb.constant_f32({1}, {1.f})}));
  GraphBuilder eb;
  Value* ex = eb.input("x", DType::F32, {4});
  eb.output(eb.op("ReduceSum", {ex, eb.constant_i64({1}, {0})}, {{"keepdims", attr_i(1)}}));
  GraphBuilder b;
  b.input("x", DType::F32, {4});
  Value* c = b.input("c", DType::Bool, {});
  b.input("idx", DType::I64, {1});
  b.output(b.op("If", {c},
                {{"then_branch", graph_attr(with_captures(tb.finish(), 2))},
                 {"else_branch", graph_attr(with_captures(eb.finish(), 1))}}));
  return b.finish();
}

TEST_P(ControlFlow, IfRunsOnlyTheBranchTaken) {
  auto g = if_graph();
  std::vector<float> xs = {1.f, 2.f, 3.f, 4.f};
  auto run = [&](bool cond, int64_t idx) {
    uint8_t c = cond;
    return run_graph(*g,
                     tensors(Tensor(DType::F32, {4}, xs.data()), Tensor(DType::Bool, {}, &c),
                             Tensor(DType::I64, {1}, &idx)),
                     GetParam());
  };
  Compiled taken = run(true, 2);
  expect_near(taken.outputs[0], {4.f});
  // The plan is the same for both conditions: branches are guarded steps.
  bool guarded = false;
  for (const Step& s : taken.plan.steps) guarded |= !s.guards.empty();
  EXPECT_TRUE(guarded);
  expect_near(run(false, 10).outputs[0], {10.f});
  EXPECT_THROW(run(true, 10), Error);
}

TEST_P(ControlFlow, GuardsSurviveSerialization) {
  auto g = if_graph();
  Plan p = compile_graph(*g, {g->inputs[0]->type, g->inputs[1]->type, g->inputs[2]->type}, {});
  std::vector<uint8_t> bytes = serialize_plan(p);
  Plan q = deserialize_plan(bytes.data(), bytes.size());
  ASSERT_EQ(p.steps.size(), q.steps.size());
  for (size_t i = 0; i < p.steps.size(); ++i) {
    ASSERT_EQ(p.steps[i].guards.size(), q.steps[i].guards.size());
    for (size_t j = 0; j < p.steps[i].guards.size(); ++j) {
      EXPECT_EQ(p.steps[i].guards[j].buffer, q.steps[i].guards[j].buffer);
      EXPECT_EQ(p.steps[i].guards[j].value, q.steps[i].guards[j].value);
    }
  }
}

TEST_P(ControlFlow, GuardOnANonBoolBufferIsRejected) {
  auto g = if_graph();
  Plan p = compile_graph(*g, {g->inputs[0]->type, g->inputs[1]->type, g->inputs[2]->type}, {});
  for (Step& s : p.steps) {
    for (Guard& gd : s.guards) gd.buffer = p.inputs[0];  // the float input
  }
  EXPECT_THROW(validate_plan(p), Error);
}

// Loop: 3 iterations of y = y * 2 + i, with scan output y after each step.
TEST_P(ControlFlow, LoopUnrollsWithIterationNumber) {
  GraphBuilder bb;
  Value* i = bb.input("i", DType::I64, {});
  Value* cin = bb.input("cond_in", DType::Bool, {});
  Value* y = bb.input("y_in", DType::F32, {2});
  Value* fi = bb.op("Cast", {i}, {{"to", attr_i(1)}});
  Value* y2 = bb.op("Add", {bb.op("Mul", {y, bb.constant_f32({1}, {2.f})}), fi});
  bb.output(bb.op("Identity", {cin}));
  bb.output(y2);
  bb.output(bb.op("Identity", {y2}));
  GraphBuilder b;
  Value* y0 = b.input("y0", DType::F32, {2});
  Value* trips = b.constant_i64({}, {3});
  b.op("Loop", {trips, nullptr, y0}, {{"body", graph_attr(std::shared_ptr<Graph>(bb.finish()))}},
       2);
  Node* loop = b.last_node();
  b.output(loop->outputs[0]);
  b.output(loop->outputs[1]);
  auto g = b.finish();
  std::vector<float> v = {1.f, -1.f};
  Compiled r = run_graph(*g, tensors(Tensor(DType::F32, {2}, v.data())), GetParam());
  // y: 1 → 2 → 5 → 12;  -1 → -2 → -3 → -4
  expect_near(r.outputs[0], {12.f, -4.f});
  EXPECT_EQ(r.outputs[1].shape(), (std::vector<int64_t>{3, 2}));
  expect_near(r.outputs[1], {2.f, -2.f, 5.f, -3.f, 12.f, -4.f});
}

// y = y * 2 while sum(y) < 100: the condition is data, so iterations run under guards.
std::unique_ptr<Graph> doubling_loop(bool with_trip_count) {
  GraphBuilder bb;
  bb.input("i", DType::I64, {});
  bb.input("cond_in", DType::Bool, {});
  Value* y = bb.input("y_in", DType::F32, {1});
  Value* y2 = bb.op("Mul", {y, bb.constant_f32({1}, {2.f})});
  Value* more = bb.op(
      "Less", {bb.op("ReduceSum", {y2}, {{"keepdims", attr_i(0)}}), bb.constant_f32({}, {100.f})});
  bb.output(more);
  bb.output(y2);
  GraphBuilder b;
  Value* y0 = b.input("y0", DType::F32, {1});
  Value* trips = with_trip_count ? b.constant_i64({}, {10}) : nullptr;
  b.output(b.op("Loop", {trips, nullptr, y0},
                {{"body", graph_attr(std::shared_ptr<Graph>(bb.finish()))}}));
  return b.finish();
}

TEST_P(ControlFlow, LoopWithRunTimeConditionRunsUnderGuards) {
  auto g = doubling_loop(true);
  auto run = [&](float start) {
    return run_graph(*g, tensors(Tensor(DType::F32, {1}, &start)), GetParam());
  };
  expect_near(run(1.f).outputs[0], {128.f});    // 2, 4, ..., 128: stops when the sum reaches 100
  expect_near(run(200.f).outputs[0], {400.f});  // one iteration
  expect_near(run(1e-6f).outputs[0], {1.024e-3f});  // the trip count (10) ends it first
}

TEST_P(ControlFlow, UnboundedLoopWithRunTimeConditionIsUnsupported) {
  auto g = doubling_loop(false);
  EXPECT_THROW(compile_graph(*g, {g->inputs[0]->type}, {}), UnsupportedError);
}

INSTANTIATE_TEST_SUITE_P(Backends, ControlFlow, ::testing::Values("reference", "portable"));

}  // namespace
}  // namespace ferrite
