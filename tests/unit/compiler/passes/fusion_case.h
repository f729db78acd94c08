// Test helpers of the fusing graph passes: a graph built twice, once through the fusing
// passes and once without them, and the check that every backend gives the unfused
// graph's values on the fused one.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "runtime/backend.h"
#include "tests/unit/compiler/lower/run_graph.h"

namespace ferrite {
namespace fusion_test {

using BuildFn = std::function<void(GraphBuilder&)>;

struct Case {
  std::unique_ptr<Graph> fused, unfused;
  std::vector<Tensor> inputs;
};

// Builds the graph twice; runs the passes on one (prepare_graph, fusion on, convolutions
// channels-last where the layout pass picks it when `channels_last`) and the non-fusing
// passes on the other.
inline Case make_case(const BuildFn& build, bool channels_last = false) {
  Case c;
  for (int i = 0; i < 2; ++i) {
    GraphBuilder b;
    build(b);
    std::unique_ptr<Graph> g = b.finish();
    CompileOptions o;
    o.fuse = i == 0;
    o.channels_last = channels_last && i == 0;
    prepare_graph(*g, o);
    (i == 0 ? c.fused : c.unfused) = std::move(g);
  }
  for (size_t i = 0; i < c.fused->inputs.size(); ++i) {
    const TensorType& t = c.fused->inputs[i]->type;
    std::vector<float> v = lower_test::random_floats(static_cast<size_t>(t.elements()), 100 + i);
    c.inputs.emplace_back(DType::F32, t.shape, v.data());
  }
  return c;
}

inline int count_ops(const Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes) n += node->op_type == op;
  return n;
}

// Every backend on the fused graph against the reference on the unfused one.
inline void expect_same_values(const Case& c, float tol = 2e-5f) {
  CompileOptions unfused;
  unfused.fuse = false;
  const lower_test::Compiled want =
      lower_test::run_graph(*c.unfused, c.inputs, "reference", {}, unfused);
  for (const std::string& backend : backend_names()) {
    SCOPED_TRACE(backend);
    const lower_test::Compiled got = lower_test::run_graph(*c.fused, c.inputs, backend);
    ASSERT_EQ(got.outputs.size(), want.outputs.size());
    for (size_t o = 0; o < want.outputs.size(); ++o)
      lower_test::expect_near(got.outputs[o], lower_test::values_of<float>(want.outputs[o]), tol);
  }
}

}  // namespace fusion_test
}  // namespace ferrite
