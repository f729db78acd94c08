// Lowerings against the inputs fuzzing found (issue 25): ranks the op's spec forbids,
// attributes and constant inputs whose sizes overflow int64, and invalid models that ran.
// Each is an Error naming the node; where a result exists (extreme but valid steps, k,
// Range bounds) it is checked against numpy's.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/plan/error.h"
#include "tests/unit/lower/run_graph.h"

namespace ferrite {
namespace {

using namespace lower_test;
using Attrs = std::map<std::string, Attribute>;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// Compiles `g` for its declared input types; expects an Error that names the node 'n' and
// holds `what`.
void expect_error(const Graph& g, const std::string& what) {
  std::vector<TensorType> types;
  for (const Value* v : g.inputs) types.push_back(v->type);
  try {
    compile_graph(g, types, {});
    ADD_FAILURE() << "no error; expected: " << what;
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'n'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

// A graph of one node named 'n' over `ins`, with one output.
std::unique_ptr<Graph> one_node(GraphBuilder& b, const std::string& op, std::vector<Value*> ins,
                                Attrs attrs = {}, int64_t opset = 17) {
  b.output(b.op(op, std::move(ins), std::move(attrs)));
  b.last_node()->name = "n";
  auto g = b.finish();
  g->opsets[""] = opset;
  return g;
}

std::unique_ptr<Graph> loss_graph(const std::string& op, std::vector<int64_t> target,
                                  std::vector<int64_t> weight) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {3, 5});
  Value* t = b.input("t", DType::I64, std::move(target));
  Value* w = b.input("w", DType::F32, std::move(weight));
  return one_node(b, op, {x, t, w}, {{"reduction", attr_s("mean")}}, 13);
}

TEST(ShapeChecks, LossWeightAndTargetShapesFollowTheSpec) {
  for (const char* op : {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"}) {
    SCOPED_TRACE(op);
    expect_error(*loss_graph(op, {3}, {}), "weight float32[] must have shape [5]");
    expect_error(*loss_graph(op, {3}, {6}), "weight float32[6] must have shape [5]");
    expect_error(*loss_graph(op, {3}, {1, 5}), "weight float32[1,5] must have shape [5]");
    expect_error(*loss_graph(op, {4}, {5}), "target int64[4] must have shape [3]");
  }
}

TEST(ShapeChecks, WeightedLossMatchesTheFormula) {
  // mean reduction: -sum(w[t[i]] * x[i, t[i]]) / sum(w[t[i]]), ignore_index rows skipped.
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {3, 4});
  Value* t = b.input("t", DType::I64, {3});
  Value* w = b.input("w", DType::F32, {4});
  auto g = one_node(b, "NegativeLogLikelihoodLoss", {x, t, w}, {{"ignore_index", attr_i(1)}}, 13);
  const std::vector<float> xs = random_floats(12, 7), ws = {0.5f, 2.f, 1.5f, 3.f};
  const int64_t ts[3] = {3, 1, 2};
  Compiled r = run_graph(*g,
                         tensors(Tensor(DType::F32, {3, 4}, xs.data()), Tensor(DType::I64, {3}, ts),
                                 Tensor(DType::F32, {4}, ws.data())),
                         "reference");
  const float num = -(ws[3] * xs[0 * 4 + 3] + ws[2] * xs[2 * 4 + 2]);
  expect_near(r.outputs[0], {num / (ws[3] + ws[2])});
}

}  // namespace
}  // namespace ferrite
