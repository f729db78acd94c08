// import_onnx on real models of the ONNX test data (libonnx-testdata 1.12): op types,
// attributes, shapes, opsets, constants and subgraphs. Expected numbers come from
// /usr/bin/python3 with onnx.numpy_helper.to_array on the same files.
#include "compiler/frontend/onnx/onnx_import.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "compiler/plan/error.h"

namespace ferrite {
namespace {

const std::string kData = "/usr/share/libonnx-testdata/data";

std::unique_ptr<Graph> load(const std::string& rel) {
  std::string path = kData + "/" + rel + "/model.onnx";
  if (!std::filesystem::exists(path)) return nullptr;
  return import_onnx_file(path);
}

#define LOAD_OR_SKIP(var, rel) \
  auto var = load(rel);        \
  if (!var) GTEST_SKIP() << "libonnx-testdata not installed: " << rel

std::vector<int64_t> dims(const Value* v) {
  return v->type.shape;
}

TEST(OnnxImport, Add) {
  LOAD_OR_SKIP(g, "node/test_add");
  EXPECT_EQ(g->name, "test_add");
  EXPECT_EQ(g->opset(), 14);
  ASSERT_EQ(g->inputs.size(), 2u);
  EXPECT_EQ(g->inputs[0]->name, "x");
  EXPECT_EQ(g->inputs[0]->type.dtype, DType::F32);
  EXPECT_EQ(dims(g->inputs[1]), (std::vector<int64_t>{3, 4, 5}));
  ASSERT_EQ(g->nodes.size(), 1u);
  const Node& n = *g->nodes[0];
  EXPECT_EQ(n.op_type, "Add");
  EXPECT_EQ(n.domain, "");
  EXPECT_EQ(n.inputs[0], g->inputs[0]);
  EXPECT_EQ(n.inputs[1], g->inputs[1]);
  ASSERT_EQ(g->outputs.size(), 1u);
  EXPECT_EQ(g->outputs[0], n.outputs[0]);
  EXPECT_EQ(g->outputs[0]->name, "sum");
  EXPECT_EQ(g->outputs[0]->producer, &n);
  EXPECT_EQ(dims(g->outputs[0]), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(g->inputs[0]->users.size(), 1u);
}

TEST(OnnxImport, ConvAttributes) {
  LOAD_OR_SKIP(g, "node/test_conv_with_strides_padding");
  EXPECT_EQ(g->opset(), 11);
  ASSERT_EQ(g->nodes.size(), 1u);
  const Node& n = *g->nodes[0];
  EXPECT_EQ(n.op_type, "Conv");
  EXPECT_EQ(n.attr_ints("kernel_shape"), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(n.attr_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(n.attr_ints("strides"), (std::vector<int64_t>{2, 2}));
  EXPECT_FALSE(n.has_attr("dilations"));
  EXPECT_EQ(dims(g->find("x")), (std::vector<int64_t>{1, 1, 7, 5}));
  EXPECT_EQ(dims(g->find("W")), (std::vector<int64_t>{1, 1, 3, 3}));
  EXPECT_EQ(dims(g->find("y")), (std::vector<int64_t>{1, 1, 4, 3}));
}

TEST(OnnxImport, ConstantNodeBecomesConstant) {
  LOAD_OR_SKIP(g, "node/test_constant");
  EXPECT_TRUE(g->nodes.empty());
  ASSERT_EQ(g->outputs.size(), 1u);
  const Value* v = g->outputs[0];
  ASSERT_TRUE(v->is_constant());
  EXPECT_EQ(v->data->dtype, DType::F32);
  EXPECT_EQ(v->data->shape, (std::vector<int64_t>{5, 5}));
  EXPECT_EQ(v->type.shape, (std::vector<int64_t>{5, 5}));
  // numpy_helper.to_array(...).flatten()[:3] = [1.7640524, 0.4001572, 0.978738]
  EXPECT_FLOAT_EQ(static_cast<float>(v->data->float_at(0)), 1.7640524f);
  EXPECT_FLOAT_EQ(static_cast<float>(v->data->float_at(1)), 0.4001572f);
  EXPECT_FLOAT_EQ(static_cast<float>(v->data->float_at(2)), 0.978738f);
}

TEST(OnnxImport, IfSubgraphs) {
  LOAD_OR_SKIP(g, "node/test_if");
  ASSERT_EQ(g->nodes.size(), 1u);
  const Node& n = *g->nodes[0];
  EXPECT_EQ(n.op_type, "If");
  EXPECT_EQ(g->inputs[0]->type.dtype, DType::Bool);
  EXPECT_TRUE(g->inputs[0]->type.shape.empty());
  ASSERT_EQ(n.attrs.at("then_branch").kind, AttrKind::Graph);
  const Graph& then_g = *n.attrs.at("then_branch").g;
  const Graph& else_g = *n.attrs.at("else_branch").g;
  EXPECT_EQ(then_g.name, "then_body");
  EXPECT_EQ(then_g.opset(), 11);  // subgraphs share the model's opsets
  ASSERT_EQ(then_g.outputs.size(), 1u);
  ASSERT_TRUE(then_g.outputs[0]->is_constant());
  EXPECT_EQ(then_g.outputs[0]->data->to_ints(), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(else_g.outputs[0]->data->to_ints(), (std::vector<int64_t>{5, 4, 3, 2, 1}));
  EXPECT_TRUE(then_g.captures.empty());
}

TEST(OnnxImport, Loop11Body) {
  LOAD_OR_SKIP(g, "node/test_loop11");
  ASSERT_EQ(g->nodes.size(), 1u);
  const Node& loop = *g->nodes[0];
  EXPECT_EQ(loop.op_type, "Loop");
  ASSERT_EQ(loop.outputs.size(), 2u);
  EXPECT_EQ(g->inputs[0]->type.dtype, DType::I64);
  const Graph& body = *loop.attrs.at("body").g;
  EXPECT_EQ(body.name, "loop_body");
  ASSERT_EQ(body.inputs.size(), 3u);
  EXPECT_EQ(body.outputs.size(), 3u);
  std::vector<std::string> ops;
  for (const auto& n : body.nodes) ops.push_back(n->op_type);
  EXPECT_EQ(ops, (std::vector<std::string>{"Identity", "Add", "Unsqueeze", "Unsqueeze", "Slice",
                                           "Add", "Identity"}));
  EXPECT_EQ(body.nodes[2]->attr_ints("axes"), (std::vector<int64_t>{0}));
  const Value* x = body.find("x");
  ASSERT_TRUE(x && x->is_constant());
  EXPECT_EQ(x->data->to_ints(), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(body.find("one")->data->dtype, DType::I64);
}

TEST(OnnxImport, OmittedOutputKeepsPosition) {
  LOAD_OR_SKIP(g, "node/test_lstm_defaults");
  ASSERT_EQ(g->nodes.size(), 1u);
  const Node& n = *g->nodes[0];
  ASSERT_EQ(n.outputs.size(), 2u);
  ASSERT_NE(n.outputs[0], nullptr);
  EXPECT_EQ(n.outputs[1]->name, "Y_h");
  EXPECT_EQ(g->outputs[0], n.outputs[1]);
  EXPECT_TRUE(n.outputs[0]->users.empty());
}

TEST(OnnxImport, InitializersListedAsInputsAreConstants) {
  // IR 3 (PyTorch export): weights '1', '2' are both graph inputs and initializers.
  LOAD_OR_SKIP(g, "pytorch-converted/test_Conv2d");
  ASSERT_EQ(g->inputs.size(), 1u);
  EXPECT_EQ(g->inputs[0]->name, "0");
  const Value* w = g->find("1");
  ASSERT_TRUE(w && w->is_constant());
  EXPECT_EQ(w->data->shape, (std::vector<int64_t>{4, 3, 3, 2}));
  // [float(v) for v in numpy_helper.to_array(initializer[0]).flatten()[:3]]
  EXPECT_FLOAT_EQ(static_cast<float>(w->data->float_at(0)), -0.14294092f);
  EXPECT_FLOAT_EQ(static_cast<float>(w->data->float_at(1)), -0.08505815f);
  EXPECT_FLOAT_EQ(static_cast<float>(w->data->float_at(2)), -0.0018995553f);
  EXPECT_EQ(g->find("2")->data->shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(g->nodes[0]->op_type, "Conv");
}

TEST(OnnxImport, ParseTensorProtoOfTestData) {
  std::string path = kData + "/node/test_add/test_data_set_0/input_0.pb";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "libonnx-testdata not installed";
  std::vector<uint8_t> bytes(std::filesystem::file_size(path));
  FILE* f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fread(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
  std::string name;
  TensorData t = parse_tensor_proto(bytes.data(), bytes.size(), &name);
  EXPECT_EQ(name, "x");
  EXPECT_EQ(t.dtype, DType::F32);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{3, 4, 5}));
  // onnx.numpy_helper.to_array: a.flatten()[[0, 1, 2, 59]] and a.sum()
  EXPECT_FLOAT_EQ(static_cast<float>(t.float_at(0)), 1.7640524f);
  EXPECT_FLOAT_EQ(static_cast<float>(t.float_at(1)), 0.4001572f);
  EXPECT_FLOAT_EQ(static_cast<float>(t.float_at(2)), 0.978738f);
  EXPECT_FLOAT_EQ(static_cast<float>(t.float_at(59)), -0.36274117f);
  double sum = 0;
  for (int64_t i = 0; i < 60; ++i) sum += t.float_at(i);
  EXPECT_NEAR(sum, 4.6000376, 1e-4);
}

TEST(OnnxImport, FileErrorsNameThePath) {
  try {
    import_onnx_file("/nonexistent/dir/model.onnx");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/model.onnx"), std::string::npos);
  }
  EXPECT_THROW(import_onnx_file("/"), Error);        // a directory is not a model
  EXPECT_THROW(import_onnx(nullptr, 0, ""), Error);  // empty: no graph
}

}  // namespace
}  // namespace ferrite
