// LRN with windows wider than the channel axis (issue 25, H1: a size of 2^31 ran for hours,
// one reduction step per window offset), on every backend of the build, against numpy's
// ONNX formula: square_sum over channels [max(0, c - floor((size-1)/2)),
// min(C-1, c + ceil((size-1)/2))], y = x / (bias + alpha / size * square_sum)^beta.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "runtime/backend.h"
#include "tests/unit/compiler/lower/run_graph.h"

namespace ferrite {
namespace {

// numpy: x = arange(10, dtype=float32) / 3 - 1.4, shape [1, 5, 1, 2].
std::vector<float> lrn(int64_t size, double alpha, const std::string& backend) {
  std::vector<float> x(10);
  for (int i = 0; i < 10; ++i) x[i] = static_cast<float>(i) / 3 - 1.4f;
  GraphBuilder b;
  Value* xv = b.input("x", DType::F32, {1, 5, 1, 2});
  b.output(b.op("LRN", {xv},
                {{"size", attr_i(size)},
                 {"alpha", attr_f(alpha)},
                 {"beta", attr_f(0.6)},
                 {"bias", attr_f(1.2)}}));
  auto g = b.finish();
  std::vector<Tensor> in;
  in.emplace_back(DType::F32, std::vector<int64_t>{1, 5, 1, 2}, x.data());
  return lower_test::values_of<float>(lower_test::run_graph(*g, in, backend).outputs[0]);
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f) << "element " << i;
}

TEST(LrnWindow, WindowsWiderThanTheChannels) {
  // Every channel is in every window: the same sum for each c (alpha = size / 4).
  const std::vector<float> all = {-0.84568745f,  -0.63081491f, -0.44297913f, -0.23655559f,
                                  -0.040270794f, 0.15770373f,  0.36243752f,  0.55196303f,
                                  0.7651459f,    0.94622242f};
  for (const std::string& backend : backend_names()) {
    SCOPED_TRACE(backend);
    expect_close(lrn(int64_t{1} << 31, 536870912.0, backend), all);
    expect_close(lrn((int64_t{1} << 62) + 1, 1152921504606846976.0, backend), all);
    // size 9 = 2C - 1: the window [c - 4, c + 4] covers every channel, with nothing to cut.
    expect_close(lrn(9, 0.3, backend),
                 {-1.1698827f, -0.88696271f, -0.61279565f, -0.33261102f, -0.055708647f, 0.22174068f,
                  0.50137836f, 0.77609235f, 1.0584654f, 1.3304441f});
    // size 8: [c - 3, c + 4] covers every channel but for c = 4, which misses channel 0.
    expect_close(lrn(8, 0.3, backend),
                 {-1.1603036f, -0.87922746f, -0.60777801f, -0.3297103f, -0.0552525f, 0.21980686f,
                  0.497273f, 0.769324f, 1.08518f, 1.3439286f});
  }
}

}  // namespace
}  // namespace ferrite
