// Concatenations of many inputs: one kernel evaluates a masked load per input for each
// element, so past 16 inputs they are concatenated as a tree of realized groups (linear in
// the inputs, where one kernel was quadratic). Values against a direct computation.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/compile.h"
#include "tests/unit/compiler/lower/run_graph.h"

namespace ferrite {
namespace {

using namespace lower_test;

class WideConcat : public ::testing::TestWithParam<std::string> {};

// n inputs of [2, 3] (input i holds 100 * i + its flat index), concatenated along `axis`.
Compiled concat(int n, int axis, const std::string& backend, std::vector<float>* want) {
  GraphBuilder b;
  std::vector<Value*> ins;
  std::vector<Tensor> feeds;
  std::vector<std::vector<float>> data;
  for (int i = 0; i < n; ++i) {
    ins.push_back(b.input("x" + std::to_string(i), DType::F32, {2, 3}));
    std::vector<float> d(6);
    for (int j = 0; j < 6; ++j) d[j] = static_cast<float>(100 * i + j);
    feeds.emplace_back(DType::F32, std::vector<int64_t>{2, 3}, d.data());
    data.push_back(d);
  }
  b.output(b.op("Concat", ins, {{"axis", attr_i(axis)}}));
  auto g = b.finish();
  want->clear();
  if (axis == 0) {
    for (const auto& d : data) want->insert(want->end(), d.begin(), d.end());
  } else {
    for (int r = 0; r < 2; ++r)
      for (const auto& d : data)
        want->insert(want->end(), d.begin() + 3 * r, d.begin() + 3 * r + 3);
  }
  return run_graph(*g, feeds, backend);
}

TEST_P(WideConcat, ManyInputsAlongEitherAxis) {
  for (int axis : {0, 1}) {
    std::vector<float> want;
    Compiled r = concat(3000, axis, GetParam(), &want);
    expect_near(r.outputs[0], want, 0);
    // 188 groups of up to 16, 12 groups of those, then one of the 12: 201 kernels.
    EXPECT_EQ(r.plan.kernels.size(), 201u) << "axis " << axis;
  }
}

TEST_P(WideConcat, SixteenInputsStayOneKernel) {
  std::vector<float> want;
  Compiled r = concat(16, 1, GetParam(), &want);
  expect_near(r.outputs[0], want, 0);
  EXPECT_EQ(r.plan.kernels.size(), 1u);
}

#ifdef FERRITE_HAS_JIT
INSTANTIATE_TEST_SUITE_P(Backends, WideConcat, ::testing::Values("reference", "portable", "jit"));
#else
INSTANTIATE_TEST_SUITE_P(Backends, WideConcat, ::testing::Values("reference", "portable"));
#endif

}  // namespace
}  // namespace ferrite
