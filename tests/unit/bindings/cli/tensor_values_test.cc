// Generated inputs, value printing and the conformance comparison rule.
#include "bindings/cli/tensor_values.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <cstring>
#include <limits>

#include "compiler/plan/error.h"

namespace ferrite {
namespace {

Tensor f32(std::vector<int64_t> shape, std::vector<float> v) {
  return Tensor(DType::F32, std::move(shape), v.data());
}

TEST(TensorValues, GeneratedInputsAreReproducibleAndInRange) {
  const Tensor a = generated_input(DType::F32, {4, 16}, 7);
  const Tensor b = generated_input(DType::F32, {4, 16}, 7);
  const Tensor c = generated_input(DType::F32, {4, 16}, 8);
  ASSERT_EQ(a.nbytes(), 256u);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0);
  EXPECT_NE(std::memcmp(a.data(), c.data(), a.nbytes()), 0);
  double sum = 0;
  for (int64_t i = 0; i < a.elements(); ++i) {
    EXPECT_GE(a.as<float>()[i], -1.0f);
    EXPECT_LT(a.as<float>()[i], 1.0f);
    sum += a.as<float>()[i];
  }
  EXPECT_LT(std::fabs(sum / 64), 0.5);  // not all one value
  const Tensor ints = generated_input(DType::I64, {100}, 1);
  bool seen[4] = {false, false, false, false};
  for (int64_t i = 0; i < 100; ++i) {
    const int64_t v = ints.as<int64_t>()[i];
    ASSERT_TRUE(v >= 0 && v < 4) << v;
    seen[v] = true;
  }
  EXPECT_TRUE(seen[0] && seen[1] && seen[2] && seen[3]);
  const Tensor bools = generated_input(DType::Bool, {8}, 1);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(bools.data()[i], 0);
  const Tensor halves = generated_input(DType::F16, {8}, 3);
  for (int i = 0; i < 8; ++i) EXPECT_LT(std::fabs(element_as_double(halves, i)), 1.0);
  // Strings: up to 7 characters of "ab c", the same for the same seed.
  const Tensor strings = generated_input(DType::String, {64}, 5);
  EXPECT_EQ(strings.strings(), generated_input(DType::String, {64}, 5).strings());
  size_t longest = 0;
  for (const std::string& s : strings.strings()) {
    EXPECT_LE(s.size(), 7u);
    EXPECT_EQ(s.find_first_not_of("ab c"), std::string::npos) << s;
    longest = std::max(longest, s.size());
  }
  EXPECT_EQ(longest, 7u);
  EXPECT_THROW(generated_input(DType::Undefined, {1}, 1), Error);
}

TEST(TensorValues, FormatsTypesAndValues) {
  EXPECT_EQ(format_type(DType::F32, {1, 10}), "float32[1,10]");
  EXPECT_EQ(format_type(DType::I64, {}), "int64[]");
  EXPECT_EQ(format_values(f32({3}, {1.5f, -2.0f, 0.25f}), 8), "[1.5, -2, 0.25]");
  EXPECT_EQ(format_values(f32({4}, {1, 2, 3, 4}), 2), "[1, 2, ...]");
  const int64_t big[2] = {(1LL << 60) + 1, -3};
  EXPECT_EQ(format_values(Tensor(DType::I64, {2}, big), 8), "[1152921504606846977, -3]");
  const uint8_t flags[2] = {1, 0};
  EXPECT_EQ(format_values(Tensor(DType::Bool, {2}, flags), 8), "[true, false]");
  const uint16_t half[1] = {0x3800};
  EXPECT_EQ(format_values(Tensor(DType::F16, {1}, half), 8), "[0.5]");
}

TEST(TensorValues, CompareUsesRelativeAndAbsoluteTolerance) {
  const Tensor e = f32({3}, {1000.0f, 0.0f, -2.0f});
  EXPECT_EQ(compare_tensors(f32({3}, {1000.9f, 5e-8f, -2.0019f}), e, 1e-3, 1e-7), "");
  const std::string far = compare_tensors(f32({3}, {1001.2f, 0.0f, -2.0f}), e, 1e-3, 1e-7);
  EXPECT_NE(far.find("index 0"), std::string::npos) << far;
  EXPECT_NE(compare_tensors(f32({3}, {1000.0f, 2e-7f, -2.0f}), e, 1e-3, 1e-7), "");
}

TEST(TensorValues, CompareSpecialFloats) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::nanf("");
  EXPECT_EQ(compare_tensors(f32({2}, {nan, inf}), f32({2}, {nan, inf}), 1e-3, 1e-7), "");
  EXPECT_NE(compare_tensors(f32({1}, {1.0f}), f32({1}, {nan}), 1e-3, 1e-7), "");
  EXPECT_NE(compare_tensors(f32({1}, {nan}), f32({1}, {1.0f}), 1e-3, 1e-7), "");
  EXPECT_NE(compare_tensors(f32({1}, {-inf}), f32({1}, {inf}), 1e-3, 1e-7), "");
  EXPECT_NE(compare_tensors(f32({1}, {3e38f}), f32({1}, {inf}), 1e-3, 1e-7), "");
}

TEST(TensorValues, CompareIntegersExactlyAndChecksTypeAndShape) {
  const int64_t a[2] = {1LL << 60, 2}, b[2] = {(1LL << 60) + 1, 2};
  EXPECT_EQ(compare_tensors(Tensor(DType::I64, {2}, a), Tensor(DType::I64, {2}, a), 1, 1), "");
  // Tolerances do not apply to integers, and 2^60 vs 2^60+1 is not lost through double.
  EXPECT_NE(compare_tensors(Tensor(DType::I64, {2}, a), Tensor(DType::I64, {2}, b), 1, 1), "");
  const std::string dt = compare_tensors(Tensor(DType::I32, {2}), Tensor(DType::I64, {2}), 0, 0);
  EXPECT_EQ(dt, "dtype int32, expected int64");
  const std::string sh =
      compare_tensors(Tensor(DType::F32, {2, 3}), Tensor(DType::F32, {3, 2}), 0, 0);
  EXPECT_EQ(sh, "shape float32[2,3], expected float32[3,2]");
  const uint8_t t[1] = {1}, f[1] = {0};
  EXPECT_NE(compare_tensors(Tensor(DType::Bool, {1}, t), Tensor(DType::Bool, {1}, f), 0, 0), "");
}

TEST(TensorValues, NormwiseCompareScalesByTheLargestExpectedMagnitude) {
  const Tensor e = f32({4}, {10.0f, 0.0f, -1e-6f, 3.0f});
  // An error of 1e-4 at an expected 0 is 1e-5 of max |e| = 10: a pass, although its
  // per-element relative error is unbounded (and 100 at index 2).
  EXPECT_EQ(compare_tensors_normwise(f32({4}, {10.0f, 1e-4f, 1e-4f, 3.0f}), e, 1e-4), "");
  // The same error against a max |e| of 0.5 is 2e-4 of it: a failure naming the worst index.
  const Tensor small = f32({2}, {0.5f, 0.0f});
  const std::string diff = compare_tensors_normwise(f32({2}, {0.5f, 1e-4f}), small, 1e-4);
  EXPECT_NE(diff.find("index 1 of 2"), std::string::npos) << diff;
  EXPECT_NE(diff.find("0.0002 * max |expected|"), std::string::npos) << diff;
  // All-zero expectations only accept exact zeros.
  EXPECT_EQ(compare_tensors_normwise(f32({2}, {0, 0}), f32({2}, {0, 0}), 1e-4), "");
  EXPECT_NE(compare_tensors_normwise(f32({2}, {0, 1e-30f}), f32({2}, {0, 0}), 1e-4), "");
}

TEST(TensorValues, NormwiseCompareSpecialValuesTypesAndIntegers) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::nanf("");
  // NaN and infinities must match in place and stay out of the maxima.
  EXPECT_EQ(compare_tensors_normwise(f32({3}, {nan, inf, 1.0f}), f32({3}, {nan, inf, 1.0f}), 0),
            "");
  EXPECT_NE(compare_tensors_normwise(f32({2}, {nan, 1.0f}), f32({2}, {0.0f, 1.0f}), 1), "");
  EXPECT_NE(compare_tensors_normwise(f32({2}, {1.0f, 1.0f}), f32({2}, {inf, 1.0f}), 1), "");
  EXPECT_EQ(compare_tensors_normwise(Tensor(DType::F32, {2, 3}), Tensor(DType::F32, {3, 2}), 1),
            "shape float32[2,3], expected float32[3,2]");
  const int64_t a[2] = {5, 7}, b[2] = {5, 8};
  EXPECT_NE(compare_tensors_normwise(Tensor(DType::I64, {2}, a), Tensor(DType::I64, {2}, b), 1),
            "");
}

}  // namespace
}  // namespace ferrite
