// GatherND, TopK, the scatters, ReverseSequence, MaxUnpool and MaxPool's Indices lowered
// from small graphs and run on both backends, against values computed with numpy or torch;
// a TopK K fed at run time needs the input's value.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/plan/error.h"
#include "runtime/session.h"
#include "tests/unit/compiler/lower/run_graph.h"

namespace ferrite {
namespace {

using lower_test::values_of;

// The outputs of g run on `backend` (see lower_test::run_graph).
std::vector<Tensor> run_graph(const Graph& g, const std::vector<Tensor>& inputs,
                              const std::string& backend,
                              const std::vector<std::shared_ptr<const TensorData>>& values = {}) {
  return lower_test::run_graph(g, inputs, backend, values).outputs;
}

std::vector<int64_t> iota64(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

class IndexLowering : public ::testing::TestWithParam<std::string> {};

TEST_P(IndexLowering, GatherNDWithBatchDims) {
  const std::vector<int64_t> d = iota64(24);
  GraphBuilder b;
  Value* data = b.input("data", DType::I64, {2, 3, 4});
  Value* tuples = b.constant_i64({2, 2, 2}, {1, 2, 0, -1, 2, 0, 1, 3});
  Value* rows = b.constant_i64({2, 2, 1}, {2, 0, 1, 1});
  b.output(b.op("GatherND", {data, tuples}, {{"batch_dims", attr_i(1)}}));
  b.output(b.op("GatherND", {data, rows}, {{"batch_dims", attr_i(1)}}));
  auto g = b.finish();
  std::vector<Tensor> in;
  in.emplace_back(DType::I64, std::vector<int64_t>{2, 3, 4}, d.data());
  std::vector<Tensor> out = run_graph(*g, in, GetParam());
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values_of<int64_t>(out[0]), (std::vector<int64_t>{6, 3, 20, 19}));
  EXPECT_EQ(out[1].shape(), (std::vector<int64_t>{2, 2, 4}));
  EXPECT_EQ(values_of<int64_t>(out[1]),
            (std::vector<int64_t>{8, 9, 10, 11, 0, 1, 2, 3, 16, 17, 18, 19, 16, 17, 18, 19}));
}

TEST_P(IndexLowering, GatherNDOutOfRangeIndexIsAnError) {
  GraphBuilder b;
  Value* data = b.input("data", DType::F32, {2, 2});
  Value* ind = b.input("ind", DType::I64, {2, 2});
  b.output(b.op("GatherND", {data, ind}));
  auto g = b.finish();
  const float dv[4] = {0, 1, 2, 3};
  const int64_t ok[4] = {0, 0, 1, 1}, bad[4] = {0, 0, 1, 2};
  std::vector<Tensor> in;
  in.emplace_back(DType::F32, std::vector<int64_t>{2, 2}, dv);
  in.emplace_back(DType::I64, std::vector<int64_t>{2, 2}, ok);
  EXPECT_EQ(values_of<float>(run_graph(*g, in, GetParam())[0]), (std::vector<float>{0, 3}));
  in[1] = Tensor(DType::I64, {2, 2}, bad);
  try {
    run_graph(*g, in, GetParam());
    ADD_FAILURE() << "no error for index 2 of a dim of size 2";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GatherND"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("index 2 out of range [-2, 2)"), std::string::npos)
        << e.what();
  }
}

TEST_P(IndexLowering, TopKWithConstantK) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {3, 4});
  Value* k = b.constant_i64({1}, {3});
  Value* values = b.op("TopK", {x, k}, {{"axis", attr_i(1)}}, 2);
  b.output(values);
  b.output(b.last_node()->outputs[1]);
  auto g = b.finish();
  const float xv[12] = {0, 5, 5, 1, 7, 7, -1, 7, 2, 9, 4, 9};
  std::vector<Tensor> in;
  in.emplace_back(DType::F32, std::vector<int64_t>{3, 4}, xv);
  std::vector<Tensor> out = run_graph(*g, in, GetParam());
  EXPECT_EQ(values_of<float>(out[0]), (std::vector<float>{5, 5, 1, 7, 7, 7, 9, 9, 4}));
  EXPECT_EQ(values_of<int64_t>(out[1]), (std::vector<int64_t>{1, 2, 3, 0, 1, 3, 1, 3, 2}));
}

TEST_P(IndexLowering, TopKBeforeOpset10TakesKAsAnAttribute) {
  GraphBuilder b;
  Value* x = b.input("x", DType::I32, {2, 3});
  b.output(b.op("TopK", {x}, {{"k", attr_i(2)}, {"axis", attr_i(0)}}, 2));
  b.output(b.last_node()->outputs[1]);
  auto g = b.finish();
  g->opsets[""] = 9;
  const int32_t xv[6] = {4, -1, 7, 4, 8, 2};
  std::vector<Tensor> in;
  in.emplace_back(DType::I32, std::vector<int64_t>{2, 3}, xv);
  std::vector<Tensor> out = run_graph(*g, in, GetParam());
  EXPECT_EQ(values_of<int32_t>(out[0]), (std::vector<int32_t>{4, 8, 7, 4, -1, 2}));
  EXPECT_EQ(values_of<int64_t>(out[1]), (std::vector<int64_t>{0, 1, 0, 1, 0, 1}));
}

TEST_P(IndexLowering, TopKWithKFedAtRunTimeSpecializesOnIt) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {5});
  Value* k = b.input("k", DType::I64, {1});
  b.output(b.op("TopK", {x, k}, {{"largest", attr_i(0)}}, 2));
  auto g = b.finish();
  std::vector<TensorType> types = {g->inputs[0]->type, g->inputs[1]->type};
  EXPECT_THROW(compile_graph(*g, types, {}), NeedsInputValueError);
  const float xv[5] = {3, 1, 3, 2, 3};
  const int64_t kv[1] = {3};
  std::vector<Tensor> in;
  in.emplace_back(DType::F32, std::vector<int64_t>{5}, xv);
  in.emplace_back(DType::I64, std::vector<int64_t>{1}, kv);
  auto kdata = std::make_shared<TensorData>();
  kdata->dtype = DType::I64;
  kdata->shape = {1};
  kdata->bytes.assign(reinterpret_cast<const uint8_t*>(kv),
                      reinterpret_cast<const uint8_t*>(kv) + sizeof kv);
  std::vector<Tensor> out = run_graph(*g, in, GetParam(), {nullptr, kdata});
  EXPECT_EQ(values_of<float>(out[0]), (std::vector<float>{1, 2, 3}));
}

TEST_P(IndexLowering, ScatterElementsAddOfAComputedValue) {
  // out = ScatterElements(zeros, idx, relu(u), axis 0, add): the updates are a kernel's
  // output, the data a constant; indices repeat.
  GraphBuilder b;
  Value* u = b.input("u", DType::F32, {3, 2});
  Value* zeros = b.constant_f32({2, 2}, {0, 0, 0, 0});
  Value* idx = b.constant_i64({3, 2}, {1, 0, 1, 1, -2, 1});
  b.output(b.op("ScatterElements", {zeros, idx, b.op("Relu", {u})},
                {{"axis", attr_i(0)}, {"reduction", attr_s("add")}}));
  auto g = b.finish();
  const float uv[6] = {1, 2, 3, -4, 5, 6};
  std::vector<Tensor> in;
  in.emplace_back(DType::F32, std::vector<int64_t>{3, 2}, uv);
  std::vector<Tensor> out = run_graph(*g, in, GetParam());
  // numpy: out[1,0] = 1 + 3, out[0,1] = 2, out[1,1] = 0 + 6, out[0,0] = 5
  EXPECT_EQ(values_of<float>(out[0]), (std::vector<float>{5, 2, 4, 6}));
}

TEST_P(IndexLowering, ScatterNDAndItsRunTimeIndexCheck) {
  GraphBuilder b;
  Value* data = b.input("data", DType::F32, {4});
  Value* idx = b.input("idx", DType::I64, {2, 1});
  Value* upd = b.constant_f32({2}, {10, 20});
  b.output(b.op("ScatterND", {data, idx, upd}, {{"reduction", attr_s("mul")}}));
  auto g = b.finish();
  const float dv[4] = {1, 2, 3, 4};
  const int64_t ok[2] = {3, -1}, bad[2] = {0, 4};
  std::vector<Tensor> in;
  in.emplace_back(DType::F32, std::vector<int64_t>{4}, dv);
  in.emplace_back(DType::I64, std::vector<int64_t>{2, 1}, ok);
  EXPECT_EQ(values_of<float>(run_graph(*g, in, GetParam())[0]), (std::vector<float>{1, 2, 3, 800}));
  in[1] = Tensor(DType::I64, {2, 1}, bad);
  try {
    run_graph(*g, in, GetParam());
    ADD_FAILURE() << "no error for index 4 of a dim of size 4";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "ScatterND (output '_t1'): ScatterND: index 4 out of range [-4, 4) for data dim 0 at "
              "indices position [1,0]");
  }
}

TEST(IndexLowering, ScatterShapeErrorsNameTheNode) {
  GraphBuilder b;
  Value* data = b.input("data", DType::F32, {2, 2});
  Value* idx = b.constant_i64({3, 2}, {0, 0, 0, 0, 0, 0});
  Value* upd = b.constant_f32({3, 2}, {0, 0, 0, 0, 0, 0});
  b.output(b.op("ScatterElements", {data, idx, upd}, {{"axis", attr_i(1)}}));
  auto g = b.finish();
  try {
    compile_graph(*g, {g->inputs[0]->type}, {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("ScatterElements", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("exceed data"), std::string::npos) << e.what();
  }
}

TEST_P(IndexLowering, ReverseSequenceAndItsLengthCheck) {
  // ONNX's example (time_axis 0, batch_axis 1), then a length beyond the 4 time steps.
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {4, 4});
  Value* lens = b.input("lens", DType::I64, {4});
  b.output(
      b.op("ReverseSequence", {x, lens}, {{"time_axis", attr_i(0)}, {"batch_axis", attr_i(1)}}));
  auto g = b.finish();
  const float xv[16] = {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15};
  const int64_t ok[4] = {4, 3, 2, 1}, bad[4] = {4, 5, 2, 1};
  std::vector<Tensor> in;
  in.emplace_back(DType::F32, std::vector<int64_t>{4, 4}, xv);
  in.emplace_back(DType::I64, std::vector<int64_t>{4}, ok);
  EXPECT_EQ(values_of<float>(run_graph(*g, in, GetParam())[0]),
            (std::vector<float>{3, 6, 9, 12, 2, 5, 8, 13, 1, 4, 10, 14, 0, 7, 11, 15}));
  in[1] = Tensor(DType::I64, {4}, bad);
  try {
    run_graph(*g, in, GetParam());
    ADD_FAILURE() << "no error for a length of 5 over 4 time steps";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ReverseSequence"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("index 4 out of range [-4, 4)"), std::string::npos)
        << e.what();
  }
}

TEST_P(IndexLowering, MaxUnpoolScattersIntoTheInferredShape) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {1, 1, 2, 2});
  Value* ind = b.input("ind", DType::I64, {1, 1, 2, 2});
  auto attrs = std::map<std::string, Attribute>{{"kernel_shape", attr_is({2, 2})},
                                                {"strides", attr_is({2, 2})}};
  b.output(b.op("MaxUnpool", {x, ind}, attrs));
  b.output(b.op("MaxUnpool", {x, ind, b.constant_i64({4}, {1, 1, 5, 5})}, attrs));
  auto g = b.finish();
  const float xv[4] = {1, 2, 3, 4};
  const int64_t ok[4] = {5, 7, 13, 15}, bad[4] = {5, 7, 13, 16};
  std::vector<Tensor> in;
  in.emplace_back(DType::F32, std::vector<int64_t>{1, 1, 2, 2}, xv);
  in.emplace_back(DType::I64, std::vector<int64_t>{1, 1, 2, 2}, ok);
  std::vector<Tensor> out = run_graph(*g, in, GetParam());
  EXPECT_EQ(values_of<float>(out[0]),
            (std::vector<float>{0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4}));
  // With output_shape [1,1,5,5] the 4x4 result fills the leading corner (ONNX's reference).
  EXPECT_EQ(values_of<float>(out[1]), (std::vector<float>{0, 0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0,
                                                          0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0, 0}));
  in[1] = Tensor(DType::I64, {1, 1, 2, 2}, bad);
  try {
    run_graph(*g, in, GetParam());
    ADD_FAILURE() << "no error for index 16 of a 4x4 output";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("MaxUnpool (output '_t0'): Indices must be in [0, 16)"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("index 16 out of range"), std::string::npos) << e.what();
  }
}

TEST_P(IndexLowering, MaxPoolIndicesRowAndColumnMajor) {
  // torch.nn.functional.max_pool2d(x, 2, 2, padding=1, return_indices=True) on a [2,2,3,4]
  // permutation, its per-plane indices offset by plane * 12 (ONNX's flat indices).
  const std::vector<float> xv = {17,  -8,  -6,  6,  -13, -9, 21,  20,  27, -2,  -16, 24,
                                 -10, 26,  -5,  1,  2,   16, 0,   25,  10, -3,  -19, 7,
                                 3,   -11, -17, 9,  -20, 13, -15, -14, 19, -18, 23,  -12,
                                 15,  12,  -4,  11, -1,  22, 4,   -7,  8,  18,  14,  5};
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {2, 2, 3, 4});
  for (int64_t order : {0, 1}) {
    Value* y = b.op("MaxPool", {x},
                    {{"kernel_shape", attr_is({2, 2})},
                     {"strides", attr_is({2, 2})},
                     {"pads", attr_is({1, 1, 1, 1})},
                     {"storage_order", attr_i(order)}},
                    2);
    b.output(y);
    b.output(b.last_node()->outputs[1]);
  }
  auto g = b.finish();
  std::vector<Tensor> in;
  in.emplace_back(DType::F32, std::vector<int64_t>{2, 2, 3, 4}, xv.data());
  std::vector<Tensor> out = run_graph(*g, in, GetParam());
  EXPECT_EQ(values_of<float>(out[0]),
            (std::vector<float>{17, -6,  6, 27, 21, 24,  -10, 26, 1,  10, 16, 25,
                                3,  -11, 9, 19, 23, -12, 15,  12, 11, 8,  22, 5}));
  EXPECT_EQ(out[1].shape(), (std::vector<int64_t>{2, 2, 2, 3}));
  EXPECT_EQ(values_of<int64_t>(out[1]),
            (std::vector<int64_t>{0,  2,  3,  8,  6,  11, 12, 13, 15, 20, 17, 19,
                                  24, 25, 27, 32, 34, 35, 36, 37, 39, 44, 41, 47}));
  EXPECT_EQ(values_of<int64_t>(out[3]),
            (std::vector<int64_t>{0,  6,  9,  2,  7,  11, 12, 15, 21, 14, 16, 22,
                                  24, 27, 33, 26, 32, 35, 36, 39, 45, 38, 40, 47}));
}

INSTANTIATE_TEST_SUITE_P(Backends, IndexLowering, ::testing::Values("reference", "portable"));

}  // namespace
}  // namespace ferrite
