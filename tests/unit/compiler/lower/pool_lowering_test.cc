// MaxPool and AveragePool lowered from small graphs and run on every backend of the build,
// against values computed with torch (torch.nn.functional.max_pool1d/2d, avg_pool2d):
// padding on every side, NaN and -inf inside windows (a NaN anywhere in a window gives NaN),
// ceil_mode, dilation, 1-D, count_include_pad, and a channels-last input (the output of a
// convolution that choose_conv_layout stored so). Pools the fuzzer found (issue 25): a 5x5
// window of 1e30 and -1e30 beside small values (summed in one order everywhere), pads of
// 10^3 and 10^6 on one side (torch's avg_pool2d of an explicitly padded input), and windows
// far larger than the input (kernel_shape 2^62; against numpy's ONNX definition, which
// agrees with torch wherever torch takes the attributes).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "runtime/backend.h"
#include "tests/unit/compiler/lower/run_graph.h"

namespace ferrite {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Exact comparison (a maximum is one of its inputs); NaN matches NaN.
void expect_same(const Tensor& t, const std::vector<int64_t>& shape,
                 const std::vector<float>& want) {
  EXPECT_EQ(t.shape(), shape);
  ASSERT_EQ(t.elements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    const float got = t.as<float>()[i];
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got)) << "element " << i << ": " << got;
    } else {
      EXPECT_EQ(got, want[i]) << "element " << i;
    }
  }
}

// torch: x = (arange(60) * 7 % 23 - 11).reshape(1, 2, 5, 6), x[0,0,2,3] = x[0,1,4,5] = nan,
// x[0,1,0,0] = -inf; y = max_pool2d(x, 3, 2, 1).
const std::vector<float> kWindowsX = {
    -11, -4, 3, 10,  -6, 1, 8,   -8, -1, 6,  -10,   -3, 4, 11,  -5, kNaN, 9,   -7, 0, 7,
    -9,  -2, 5, -11, -4, 3, 10,  -6, 1,  8,  -kInf, -1, 6, -10, -3, 4,    11,  -5, 2, 9,
    -7,  0,  7, -9,  -2, 5, -11, -4, 3,  10, -6,    1,  8, -8,  -1, 6,    -10, -3, 4, kNaN};
const std::vector<float> kWindowsY = {8,  10, 10, 11, kNaN, kNaN, 7,  10, 8,
                                      11, 9,  9,  11, 10,   9,    10, 10, kNaN};

std::vector<Tensor> run(const Graph& g, const std::vector<Tensor>& in, const std::string& backend,
                        bool channels_last = false) {
  CompileOptions options;
  options.channels_last = channels_last;
  return lower_test::run_graph(g, in, backend, {}, options).outputs;
}

TEST(PoolLowering, MaxPoolPaddedWindowsWithNaNAndInfinity) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {1, 2, 5, 6});
  b.output(b.op("MaxPool", {x},
                {{"kernel_shape", attr_is({3, 3})},
                 {"strides", attr_is({2, 2})},
                 {"pads", attr_is({1, 1, 1, 1})}}));
  auto g = b.finish();
  for (const std::string& backend : backend_names()) {
    SCOPED_TRACE(backend);
    const auto out =
        run(*g, lower_test::tensors(Tensor(DType::F32, {1, 2, 5, 6}, kWindowsX.data())), backend);
    expect_same(out[0], {1, 2, 3, 3}, kWindowsY);
  }
}

TEST(PoolLowering, MaxPoolOnChannelsLastConvolutionOutput) {
  // A 1x1 convolution by the identity stores x channels-last; the pool reads it so.
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {1, 2, 5, 6});
  Value* w = b.constant_f32({2, 2, 1, 1}, {1, 0, 0, 1});
  Value* y = b.op("Conv", {x, w}, {{"kernel_shape", attr_is({1, 1})}});
  b.output(b.op("MaxPool", {y},
                {{"kernel_shape", attr_is({3, 3})},
                 {"strides", attr_is({2, 2})},
                 {"pads", attr_is({1, 1, 1, 1})}}));
  auto g = b.finish();
  std::vector<float> finite = kWindowsX;  // a convolution turns -inf into NaN (-inf * 0)
  for (float& v : finite)
    if (!std::isfinite(v)) v = -20;
  const std::vector<float> want = {8, 10, 10, 11, 11, 9, 7, 10, 8, 11, 9, 9, 11, 10, 9, 10, 10, 8};
  for (const std::string& backend : backend_names()) {
    SCOPED_TRACE(backend);
    const auto out = run(*g, lower_test::tensors(Tensor(DType::F32, {1, 2, 5, 6}, finite.data())),
                         backend, true);
    expect_same(out[0], {1, 2, 3, 3}, want);
  }
}

TEST(PoolLowering, MaxPoolCeilModeDilationAndOneDimension) {
  // torch: max_pool2d(xb, 2, 2, ceil_mode=True), xb = (arange(25) * 5 % 13 - 6) [1,1,5,5];
  // max_pool2d(xc, 2, 1, 1, dilation=2), xc = (arange(20) * 3 % 11 - 5) [1,1,4,5];
  // max_pool1d(xd, 3, 1, 1), xd = (arange(14) * 5 % 9 - 4) [1,2,7].
  std::vector<float> xb(25), xc(20), xd(14);
  for (int i = 0; i < 25; ++i) xb[i] = static_cast<float>(i * 5 % 13 - 6);
  for (int i = 0; i < 20; ++i) xc[i] = static_cast<float>(i * 3 % 11 - 5);
  for (int i = 0; i < 14; ++i) xd[i] = static_cast<float>(i * 5 % 9 - 4);
  GraphBuilder b;
  Value* vb = b.input("xb", DType::F32, {1, 1, 5, 5});
  Value* vc = b.input("xc", DType::F32, {1, 1, 4, 5});
  Value* vd = b.input("xd", DType::F32, {1, 2, 7});
  b.output(b.op(
      "MaxPool", {vb},
      {{"kernel_shape", attr_is({2, 2})}, {"strides", attr_is({2, 2})}, {"ceil_mode", attr_i(1)}}));
  b.output(b.op("MaxPool", {vc},
                {{"kernel_shape", attr_is({2, 2})},
                 {"dilations", attr_is({2, 2})},
                 {"pads", attr_is({1, 1, 1, 1})}}));
  b.output(b.op("MaxPool", {vd}, {{"kernel_shape", attr_is({3})}, {"pads", attr_is({1, 1})}}));
  auto g = b.finish();
  for (const std::string& backend : backend_names()) {
    SCOPED_TRACE(backend);
    const auto out = run(*g,
                         lower_test::tensors(Tensor(DType::F32, {1, 1, 5, 5}, xb.data()),
                                             Tensor(DType::F32, {1, 1, 4, 5}, xc.data()),
                                             Tensor(DType::F32, {1, 2, 7}, xd.data())),
                         backend);
    expect_same(out[0], {1, 1, 3, 3}, {6, 4, 1, 5, 6, -1, 3, 5, -3});
    expect_same(out[1], {1, 1, 4, 5},
                {2, 5, 2, 5, -3, -2, 3, 4, 4, 4, 2, 5, 5, 5, 5, -5, 3, 1, 4, 1});
    expect_same(out[2], {1, 2, 7}, {1, 1, 2, 2, 3, 3, 3, 4, 4, 1, 1, 2, 2, 2});
  }
}

TEST(PoolLowering, AveragePoolPadsCountIncludePadAndCeilMode) {
  // torch: x = (arange(30) * 7 % 17 - 8).reshape(1, 1, 5, 6); avg_pool2d(x, 3, 2, 1,
  // count_include_pad=False / True); avg_pool2d(x, 2, 2, ceil_mode=True).
  std::vector<float> x(30);
  for (int i = 0; i < 30; ++i) x[i] = static_cast<float>(i * 7 % 17 - 8);
  GraphBuilder b;
  Value* v = b.input("x", DType::F32, {1, 1, 5, 6});
  for (int64_t include : {0, 1})
    b.output(b.op("AveragePool", {v},
                  {{"kernel_shape", attr_is({3, 3})},
                   {"strides", attr_is({2, 2})},
                   {"pads", attr_is({1, 1, 1, 1})},
                   {"count_include_pad", attr_i(include)}}));
  b.output(b.op(
      "AveragePool", {v},
      {{"kernel_shape", attr_is({2, 2})}, {"strides", attr_is({2, 2})}, {"ceil_mode", attr_i(1)}}));
  auto g = b.finish();
  for (const std::string& backend : backend_names()) {
    SCOPED_TRACE(backend);
    const auto out =
        run(*g, lower_test::tensors(Tensor(DType::F32, {1, 1, 5, 6}, x.data())), backend);
    for (const Tensor& t : out) EXPECT_EQ(t.shape(), (std::vector<int64_t>{1, 1, 3, 3}));
    lower_test::expect_near(
        out[0], {-0.5f, 1.5f, -1.5f, 3.0f, 1.2222222f, -1.7777778f, 2.25f, 0.0f, -0.16666667f});
    lower_test::expect_near(out[1], {-0.22222222f, 1.0f, -1.0f, 2.0f, 1.2222222f, -1.7777778f, 1.0f,
                                     0.0f, -0.11111111f});
    lower_test::expect_near(out[2],
                            {-0.5f, 0.75f, -2.25f, 2.75f, -0.25f, -3.25f, 2.0f, -1.0f, 4.5f});
  }
}

TEST(PoolLowering, AveragePoolSumsTheWindowInOneOrderOnEveryBackend) {
  // diff_2d58fba890: 1e30 and -1e30 cancel in the first window, whose exact sum 1e9 + 2 the
  // float sum loses; torch and ONNX's reference sum in window order: 1 / 25. The other
  // windows hold an infinity or NaN.
  const std::vector<float> x = {0,      0.5f,   1e30f,  -kInf,  0,     1e9f, 0.5f, 0,    -kInf,
                                -1e30f, -1e30f, 1,      1e-40f, 0,     kInf, kInf, 0.5f, kNaN,
                                -1e30f, kNaN,   -1e30f, 0.5f,   -kInf, 1,    1};
  GraphBuilder b;
  Value* v = b.input("x", DType::F32, {1, 1, 5, 5});
  b.output(b.op("AveragePool", {v},
                {{"kernel_shape", attr_is({5, 5})},
                 {"pads", attr_is({2, 2, 2, 2})},
                 {"count_include_pad", attr_i(1)}}));
  auto g = b.finish();
  std::vector<float> want(25, kNaN);
  want[0] = 0.04f;  // torch: avg_pool2d(x, 5, 1, 2, count_include_pad=True)
  want[1] = -kInf;
  for (const std::string& backend : backend_names()) {
    SCOPED_TRACE(backend);
    const auto out =
        run(*g, lower_test::tensors(Tensor(DType::F32, {1, 1, 5, 5}, x.data())), backend);
    expect_same(out[0], {1, 1, 5, 5}, want);
  }
}

TEST(PoolLowering, AveragePoolWithHugePadsOnOneSide) {
  // diff_85d71788ba's shape, pads of 10^6 and 10^3 before H: torch's avg_pool2d of
  // pad(x, (2, 2, P, 2)), x = (arange(6) * 5 % 7 - 3) [1, 1, 1, 6]. Windows wholly in the
  // padding give 0; with stride 10^6 the output has two rows.
  std::vector<float> x(6);
  for (int i = 0; i < 6; ++i) x[i] = static_cast<float>(i * 5 % 7 - 3);
  GraphBuilder b;
  Value* v = b.input("x", DType::F32, {1, 1, 1, 6});
  b.output(b.op("AveragePool", {v},
                {{"kernel_shape", attr_is({3, 3})},
                 {"pads", attr_is({1000, 2, 2, 2})},
                 {"count_include_pad", attr_i(1)}}));
  b.output(b.op("AveragePool", {v},
                {{"kernel_shape", attr_is({3, 3})},
                 {"strides", attr_is({1000000, 1})},
                 {"pads", attr_is({1000000, 2, 2, 2})},
                 {"count_include_pad", attr_i(1)}}));
  auto g = b.finish();
  const std::vector<float> row = {-0.333333343f, -0.111111112f, -0.111111112f, 0.0f,
                                  0.111111112f,  0.222222224f,  0.444444448f,  0.111111112f};
  std::vector<float> tall(1001 * 8, 0.0f), two(8, 0.0f);
  for (int r = 998; r < 1001; ++r) std::copy(row.begin(), row.end(), tall.begin() + r * 8);
  two.insert(two.end(), row.begin(), row.end());
  for (const std::string& backend : backend_names()) {
    SCOPED_TRACE(backend);
    const auto out =
        run(*g, lower_test::tensors(Tensor(DType::F32, {1, 1, 1, 6}, x.data())), backend);
    EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{1, 1, 1001, 8}));
    lower_test::expect_near(out[0], tall);
    EXPECT_EQ(out[1].shape(), (std::vector<int64_t>{1, 1, 2, 8}));
    lower_test::expect_near(out[1], two);
  }
}

TEST(PoolLowering, WindowsFarLargerThanTheInput) {
  // numpy, by ONNX's definition: x3 = (arange(16) * 7 % 11 - 5) / 4 [1, 1, 4, 4];
  // x4 = (arange(12) * 5 % 13 - 6) / 2 [1, 1, 3, 4]; x5 = arange(20) * 3 % 17 - 8 [1, 1, 5, 4].
  std::vector<float> x3(16), x4(12), x5(20);
  for (int i = 0; i < 16; ++i) x3[i] = static_cast<float>(i * 7 % 11 - 5) / 4;
  for (int i = 0; i < 12; ++i) x4[i] = static_cast<float>(i * 5 % 13 - 6) / 2;
  for (int i = 0; i < 20; ++i) x5[i] = static_cast<float>(i * 3 % 17 - 8);
  const int64_t huge = int64_t{1} << 62;
  GraphBuilder b;
  Value* v3 = b.input("x3", DType::F32, {1, 1, 4, 4});
  Value* v4 = b.input("x4", DType::F32, {1, 1, 3, 4});
  Value* v5 = b.input("x5", DType::F32, {1, 1, 5, 4});
  // Every window holds the whole input: its mean.
  b.output(b.op("AveragePool", {v3},
                {{"kernel_shape", attr_is({huge, huge})}, {"auto_pad", attr_s("SAME_UPPER")}}));
  b.output(b.op("AveragePool", {v3},
                {{"kernel_shape", attr_is({1000000, 2})}, {"auto_pad", attr_s("SAME_UPPER")}}));
  // Counting the pads: a count of about 3 * 2^62, formed in floating point.
  b.output(b.op("AveragePool", {v4},
                {{"kernel_shape", attr_is({huge, 3})},
                 {"auto_pad", attr_s("SAME_LOWER")},
                 {"count_include_pad", attr_i(1)}}));
  // A dilated window of 7 rows over 5 (rows start, start + 3, ...), and its argmax.
  b.output(b.op("MaxPool", {v5},
                {{"kernel_shape", attr_is({7, 3})},
                 {"strides", attr_is({4, 1})},
                 {"dilations", attr_is({3, 1})},
                 {"pads", attr_is({9, 1, 9, 1})},
                 {"ceil_mode", attr_i(1)}},
                2));
  b.output(b.last_node()->outputs[1]);
  auto g = b.finish();
  for (const std::string& backend : backend_names()) {
    SCOPED_TRACE(backend);
    const auto out = run(*g,
                         lower_test::tensors(Tensor(DType::F32, {1, 1, 4, 4}, x3.data()),
                                             Tensor(DType::F32, {1, 1, 3, 4}, x4.data()),
                                             Tensor(DType::F32, {1, 1, 5, 4}, x5.data())),
                         backend);
    EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{1, 1, 4, 4}));
    lower_test::expect_near(out[0], std::vector<float>(16, 0.015625f));
    std::vector<float> cols;
    for (int r = 0; r < 4; ++r) cols.insert(cols.end(), {-0.1875f, 0.1875f, 0.21875f, 0.0625f});
    lower_test::expect_near(out[1], cols);
    EXPECT_EQ(out[2].shape(), (std::vector<int64_t>{1, 1, 3, 4}));
    const std::vector<float> tiny = {-1.80700358e-19f, 7.2280147e-20f, 2.89120588e-19f,
                                     1.08420217e-19f};
    for (int64_t i = 0; i < 12; ++i)
      EXPECT_NEAR(out[2].as<float>()[i] / tiny[i % 4], 1.0f, 1e-6f) << "element " << i;
    expect_same(out[3], {1, 1, 2, 4}, {-3, 0, 3, 3, 7, 7, 7, -2});
    EXPECT_EQ(lower_test::values_of<int64_t>(out[4]),
              (std::vector<int64_t>{13, 14, 15, 15, 5, 5, 5, 19}));
  }
}

}  // namespace
}  // namespace ferrite
