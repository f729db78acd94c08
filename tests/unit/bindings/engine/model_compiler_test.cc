// The plans one model compiles (a plan per shape) run from the graph's constant bytes: no
// compile copies a weight.
#include "bindings/engine/model_compiler.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/unit/support/source_dir.h"

namespace ferrite {
namespace {

// The addresses of a plan's constants of at least 1 KiB (the weights; small values folded
// while compiling are the compile's own).
std::set<const uint8_t*> weight_addresses(const Plan& plan) {
  std::set<const uint8_t*> out;
  for (const ConstantBytes& c : plan.constants)
    if (c.size() >= 1024) out.insert(c.data());
  return out;
}

TEST(ModelCompilerTest, PlansForEveryShapeShareTheWeights) {
  CompileOptions options;
  std::unique_ptr<ModelCompiler> model =
      load_onnx_model_file(test::source_dir() + "/tests/cli/fixtures/sym_conv.onnx", options);
  ASSERT_EQ(model->inputs().size(), 1u);
  std::set<const uint8_t*> first;
  for (int64_t n : {2, 3, 5}) {
    IoInfo x = model->inputs()[0].info;
    x.shape[0] = n;
    const Plan plan = model->compile({x}, {});
    const std::set<const uint8_t*> weights = weight_addresses(plan);
    // Both convolutions' weights and the Gemm's.
    EXPECT_GE(weights.size(), 3u) << "batch " << n;
    if (first.empty()) first = weights;
    EXPECT_EQ(weights, first) << "batch " << n << ": a compile copied the weights";
  }
}

}  // namespace
}  // namespace ferrite
