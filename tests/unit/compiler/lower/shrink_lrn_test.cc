// Shrink (float and integer inputs) and LRN (a channel window cut by both edges) lowered
// from small graphs and run on both backends, against values computed with numpy.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "tests/unit/compiler/lower/run_graph.h"

namespace ferrite {
namespace {

using lower_test::run_graph;
using lower_test::values_of;

class ShrinkLrn : public ::testing::TestWithParam<std::string> {};

TEST_P(ShrinkLrn, ShrinkOnFloatAndIntegerInputs) {
  GraphBuilder b;
  Value* xf = b.input("xf", DType::F32, {7});
  Value* xi = b.input("xi", DType::I64, {7});
  auto attrs = std::map<std::string, Attribute>{{"lambd", attr_f(1.5)}, {"bias", attr_f(0.5)}};
  b.output(b.op("Shrink", {xf}, attrs));
  b.output(b.op("Shrink", {xi}, attrs));
  auto g = b.finish();
  const float fv[7] = {-3, -2, -1.5f, 0, 1.5f, 2, 3};
  const int64_t iv[7] = {-3, -2, -1, 0, 1, 2, 3};
  std::vector<Tensor> in;
  in.emplace_back(DType::F32, std::vector<int64_t>{7}, fv);
  in.emplace_back(DType::I64, std::vector<int64_t>{7}, iv);
  std::vector<Tensor> out = run_graph(*g, in, GetParam()).outputs;
  EXPECT_EQ(values_of<float>(out[0]), (std::vector<float>{-2.5f, -1.5f, 0, 0, 0, 1.5f, 2.5f}));
  // numpy: x + 0.5 = -2.5 truncates to -2 (astype), as ONNX's reference computes it.
  EXPECT_EQ(values_of<int64_t>(out[1]), (std::vector<int64_t>{-2, -1, 0, 0, 0, 1, 2}));
}

TEST_P(ShrinkLrn, LrnWindowAcrossChannels) {
  // size 4 over 5 channels: the window [c - 1, c + 2] is cut at both ends.
  std::vector<float> x(20);
  for (int i = 0; i < 20; ++i) x[i] = static_cast<float>(i) / 7 - 0.5f;
  GraphBuilder b;
  Value* xv = b.input("x", DType::F32, {2, 5, 1, 2});
  b.output(b.op(
      "LRN", {xv},
      {{"size", attr_i(4)}, {"alpha", attr_f(0.3)}, {"beta", attr_f(0.6)}, {"bias", attr_f(1.2)}}));
  auto g = b.finish();
  std::vector<Tensor> in;
  in.emplace_back(DType::F32, std::vector<int64_t>{2, 5, 1, 2}, x.data());
  std::vector<float> got = values_of<float>(run_graph(*g, in, GetParam()).outputs[0]);
  const std::vector<float> want = {
      -0.44320470f, -0.31801024f, -0.18905863f, -0.06301954f, 0.06264677f, 0.18575539f, 0.31375501f,
      0.43350765f,  0.56486356f,  0.68233836f,  0.71552706f,  0.80017579f, 0.85823500f, 0.92173231f,
      0.97785407f,  1.02721488f,  1.20369232f,  1.25399816f,  1.47509110f, 1.53249168f};
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(Backends, ShrinkLrn, ::testing::Values("reference", "portable"));

}  // namespace
}  // namespace ferrite
