// The TopK extern against numpy's stable argsort: ties go to the lower index, largest and
// smallest, either axis, NaN, integer and uint64 keys, strided input, k = 0 and the checks.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "compiler/plan/error.h"
#include "runtime/kernels/reference/reference_backend.h"
#include "tests/unit/runtime/dense_operands.h"

namespace ferrite {
namespace {

using namespace extern_test;

struct TopKResult {
  Operand values, indices;
};

TopKResult topk(const Operand& x, int64_t axis, int64_t k, int64_t largest) {
  std::vector<int64_t> shape = x.ref.shape;
  shape[static_cast<size_t>(axis)] = k;
  TopKResult r{garbage(x.dtype, shape), garbage(DType::I64, shape)};
  ExternCall call;
  call.op = ExternOp::TopK;
  call.ints = {{"axis", axis}, {"k", k}, {"largest", largest}};
  call.inputs = {x.ref};
  call.outputs = {r.values.ref, r.indices.ref};
  ExternBuffer in = x.buffer();
  ExternBuffer out[2] = {r.values.buffer(), r.indices.buffer()};
  reference_extern(ExternOp::TopK)(call, &in, out);
  return r;
}

TEST(TopK, TiesGoToTheLowerIndex) {
  Operand x = operand<float>(DType::F32, {5}, {3, 1, 3, 2, 3});
  TopKResult big = topk(x, 0, 2, 1);
  EXPECT_EQ(big.values.values<float>(), (std::vector<float>{3, 3}));
  EXPECT_EQ(big.indices.values<int64_t>(), (std::vector<int64_t>{0, 2}));
  TopKResult small = topk(x, 0, 3, 0);
  EXPECT_EQ(small.values.values<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(small.indices.values<int64_t>(), (std::vector<int64_t>{1, 3, 0}));
}

TEST(TopK, EitherAxisOfAMatrix) {
  Operand x = operand<float>(DType::F32, {3, 4}, {0, 5, 5, 1, 7, 7, -1, 7, 2, 9, 4, 9});
  TopKResult rows = topk(x, 1, 3, 1);
  EXPECT_EQ(rows.values.values<float>(), (std::vector<float>{5, 5, 1, 7, 7, 7, 9, 9, 4}));
  EXPECT_EQ(rows.indices.values<int64_t>(), (std::vector<int64_t>{1, 2, 3, 0, 1, 3, 1, 3, 2}));
  TopKResult cols = topk(x, 0, 2, 0);
  EXPECT_EQ(cols.values.values<float>(), (std::vector<float>{0, 5, -1, 1, 2, 7, 4, 7}));
  EXPECT_EQ(cols.indices.values<int64_t>(), (std::vector<int64_t>{0, 0, 1, 0, 2, 1, 2, 1}));
}

TEST(TopK, NaNIsLargest) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Operand x = operand<float>(DType::F32, {4}, {1, nan, 3, nan});
  TopKResult big = topk(x, 0, 3, 1);
  EXPECT_EQ(big.indices.values<int64_t>(), (std::vector<int64_t>{1, 3, 2}));
  TopKResult small = topk(x, 0, 3, 0);
  EXPECT_EQ(small.indices.values<int64_t>(), (std::vector<int64_t>{0, 2, 1}));
  EXPECT_TRUE(std::isnan(small.values.values<float>()[2]));
}

TEST(TopK, IntegerKeys) {
  Operand x = operand<int32_t>(DType::I32, {4}, {-7, 12, 12, 0});
  TopKResult r = topk(x, 0, 2, 1);
  EXPECT_EQ(r.values.values<int32_t>(), (std::vector<int32_t>{12, 12}));
  EXPECT_EQ(r.indices.values<int64_t>(), (std::vector<int64_t>{1, 2}));
  Operand u = operand<uint64_t>(DType::U64, {3}, {5, ~uint64_t{0}, 6});
  EXPECT_EQ(topk(u, 0, 1, 1).indices.values<int64_t>(), (std::vector<int64_t>{1}));
  Operand d = operand<double>(DType::F64, {3}, {0.5, -2.0, 0.25});
  EXPECT_EQ(topk(d, 0, 3, 0).values.values<double>(), (std::vector<double>{-2.0, 0.25, 0.5}));
}

TEST(TopK, StridedInputAndEmptyK) {
  // The transpose of the stored [[1,2,3],[6,5,4]]: [[1,6],[2,5],[3,4]]; top 1 of each row.
  Operand x = operand<float>(DType::F32, {2, 3}, {1, 2, 3, 6, 5, 4});
  x.ref.shape = {3, 2};
  x.ref.strides = {1, 3};
  TopKResult r = topk(x, 1, 1, 1);
  EXPECT_EQ(r.values.values<float>(), (std::vector<float>{6, 5, 4}));
  EXPECT_EQ(r.indices.values<int64_t>(), (std::vector<int64_t>{1, 1, 1}));
  TopKResult none = topk(x, 1, 0, 1);
  EXPECT_EQ(none.values.elements(), 0);
}

TEST(TopK, RejectsBadCalls) {
  Operand x = operand<float>(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(error_of([&] { topk(x, 1, 4, 1); }), "TopK: k = 4 outside [0, 3] (X [2,3], axis 1)");
  ExternCall call;
  call.op = ExternOp::TopK;
  call.ints = {{"axis", 0}, {"k", 1}};
  Operand v = garbage(DType::F32, {1, 3}), i32 = garbage(DType::I32, {1, 3});
  call.inputs = {x.ref};
  call.outputs = {v.ref, i32.ref};
  ExternBuffer in = x.buffer();
  ExternBuffer out[2] = {v.buffer(), i32.buffer()};
  EXPECT_EQ(error_of([&] { reference_extern(ExternOp::TopK)(call, &in, out); }),
            "TopK: Indices must be int64, got int32");
  Operand i64 = garbage(DType::I64, {1, 3});
  out[1] = i64.buffer();
  call.outputs[1] = i64.ref;
  call.ints["axis"] = 2;
  EXPECT_EQ(error_of([&] { reference_extern(ExternOp::TopK)(call, &in, out); }),
            "TopK: axis 2 out of range for X of rank 2");
}

}  // namespace
}  // namespace ferrite
