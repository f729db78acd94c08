// The Conv and ConvTranspose lowerings: output shapes and the explicit pads that auto_pad,
// output_shape and output_padding resolve to (read from the plan's extern call), values on
// both backends for small cases worked out by hand, and errors that name the node.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "compiler/compile.h"
#include "compiler/plan/error.h"
#include "runtime/session.h"

namespace ferrite {
namespace {

using Dims = std::vector<int64_t>;
using Attrs = std::map<std::string, Attribute>;

struct ConvNode {
  std::string op = "Conv";
  Dims x, w;
  Attrs attrs;
  std::vector<float> w_values;  // empty: ones
  std::vector<float> bias;      // empty: no B
  DType dtype = DType::F32;
};

std::unique_ptr<Graph> conv_graph(const ConvNode& n) {
  GraphBuilder b;
  Value* x = b.input("x", n.dtype, n.x);
  int64_t w_elements = 1;
  for (int64_t d : n.w) w_elements *= d;
  std::vector<float> wv = n.w_values;
  if (wv.empty()) wv.assign(static_cast<size_t>(w_elements), 1.0f);
  std::vector<Value*> ins{x, b.constant_f32(n.w, wv)};
  if (!n.bias.empty()) ins.push_back(b.constant_f32({static_cast<int64_t>(n.bias.size())}, n.bias));
  b.output(b.op(n.op, ins, n.attrs));
  b.last_node()->name = "the_conv";
  auto g = b.finish();
  g->opsets[""] = 17;
  return g;
}

// The plan's one extern call for the node.
ExternCall lowered_call(const ConvNode& n) {
  auto g = conv_graph(n);
  Plan plan = compile_graph(*g, {g->inputs[0]->type}, {});
  EXPECT_EQ(plan.externs.size(), 1u);
  return plan.externs.at(0);
}

// Expected output shape and, per spatial dim, the extern's (pad_begin, pad_end).
void expect_lowered(const ConvNode& n, const Dims& y, const std::vector<Dims>& pads) {
  const ExternCall call = lowered_call(n);
  ASSERT_EQ(call.op, find_extern_op(n.op));
  EXPECT_EQ(call.outputs.at(0).shape, y);
  for (size_t d = 0; d < pads.size(); ++d) {
    const std::string s = std::to_string(d);
    EXPECT_EQ(call.ints.at("pad_begin" + s), pads[d][0]) << "dim " << d;
    EXPECT_EQ(call.ints.at("pad_end" + s), pads[d][1]) << "dim " << d;
  }
}

TEST(ConvLowering, ConvAutoPadShapesAndPads) {
  ConvNode n;
  n.x = {1, 1, 5, 6};
  n.w = {1, 1, 3, 3};
  n.attrs["strides"] = attr_is({2, 2});
  // SAME: out = ceil(in / stride) = (3, 3); total padding H: 2*2 + 3 - 5 = 2, W: 4 + 3 - 6 = 1.
  n.attrs["auto_pad"] = attr_s("SAME_UPPER");
  expect_lowered(n, {1, 1, 3, 3}, {{1, 1}, {0, 1}});
  n.attrs["auto_pad"] = attr_s("SAME_LOWER");
  expect_lowered(n, {1, 1, 3, 3}, {{1, 1}, {1, 0}});
  n.attrs["auto_pad"] = attr_s("VALID");
  n.attrs["pads"] = attr_is({1, 1, 1, 1});  // ignored under VALID
  expect_lowered(n, {1, 1, 2, 2}, {{0, 0}, {0, 0}});
  n.attrs["auto_pad"] = attr_s("NOTSET");
  n.attrs["pads"] = attr_is({1, 0, 2, 1});  // (5 + 3 - 3) / 2 + 1, (6 + 1 - 3) / 2 + 1
  expect_lowered(n, {1, 1, 3, 3}, {{1, 2}, {0, 1}});
  n.attrs["kernel_shape"] = attr_is({3, 3});
  n.attrs["dilations"] = attr_is({2, 1});  // H span 5: (5 + 3 - 5) / 2 + 1
  expect_lowered(n, {1, 1, 2, 3}, {{1, 2}, {0, 1}});
}

TEST(ConvLowering, ConvTransposeOutputShapeAndPadding) {
  ConvNode n;
  n.op = "ConvTranspose";
  n.x = {1, 1, 3, 3};
  n.w = {1, 2, 3, 3};
  // ONNX's test_convtranspose_output_shape: the full output is 9 x 7, the requested 10 x 8
  // (total padding -1) extends it at the end.
  n.attrs["strides"] = attr_is({3, 2});
  n.attrs["output_shape"] = attr_is({10, 8});
  expect_lowered(n, {1, 2, 10, 8}, {{0, -1}, {0, -1}});
  n.attrs["output_shape"] = attr_is({1, 2, 10, 8});  // all dims, as some exporters write it
  expect_lowered(n, {1, 2, 10, 8}, {{0, -1}, {0, -1}});
  // Smaller than the full 9 x 7: total padding 2 and 3; the odd one goes first (NOTSET).
  n.attrs["output_shape"] = attr_is({7, 4});
  expect_lowered(n, {1, 2, 7, 4}, {{1, 1}, {2, 1}});
  n.attrs["auto_pad"] = attr_s("SAME_UPPER");
  expect_lowered(n, {1, 2, 7, 4}, {{1, 1}, {1, 2}});
  // SAME without output_shape: out = in * stride; the full output is 9 x 7.
  n.attrs.erase("output_shape");
  expect_lowered(n, {1, 2, 9, 6}, {{0, 0}, {0, 1}});
  n.attrs["auto_pad"] = attr_s("SAME_LOWER");
  expect_lowered(n, {1, 2, 9, 6}, {{0, 0}, {1, 0}});
  // output_padding lengthens the end; the extern's pad_end has it subtracted.
  n.attrs["auto_pad"] = attr_s("NOTSET");
  n.attrs["strides"] = attr_is({2, 2});
  n.attrs["pads"] = attr_is({1, 1, 1, 1});
  n.attrs["output_padding"] = attr_is({1, 0});
  expect_lowered(n, {1, 2, 6, 5}, {{1, 0}, {1, 1}});
  n.attrs["auto_pad"] = attr_s("VALID");
  expect_lowered(n, {1, 2, 8, 7}, {{0, -1}, {0, 0}});
}

class ConvLoweringRun : public ::testing::TestWithParam<std::string> {};

std::vector<float> run_node(const ConvNode& n, const std::vector<float>& x,
                            const std::string& backend) {
  auto g = conv_graph(n);
  SessionOptions opts;
  opts.backend = backend;
  Session s(compile_graph(*g, {g->inputs[0]->type}, {}), opts);
  Tensor in(DType::F32, n.x, x.data());
  std::vector<Tensor> out = s.run({&in});
  const float* p = out.at(0).as<float>();
  return std::vector<float>(p, p + out[0].elements());
}

TEST_P(ConvLoweringRun, ValuesUnderAutoPadAndOutputShape) {
  // x = [1, 2, 3, 4], taps [1, 10], bias 0.5, total padding 1: SAME_LOWER pads in front
  // (y[o] = x[o-1] + 10 x[o]), SAME_UPPER behind (y[o] = x[o] + 10 x[o+1]).
  ConvNode n;
  n.x = {1, 1, 4};
  n.w = {1, 1, 2};
  n.w_values = {1, 10};
  n.bias = {0.5f};
  n.attrs["auto_pad"] = attr_s("SAME_LOWER");
  EXPECT_EQ(run_node(n, {1, 2, 3, 4}, GetParam()), (std::vector<float>{10.5, 21.5, 32.5, 43.5}));
  n.attrs["auto_pad"] = attr_s("SAME_UPPER");
  EXPECT_EQ(run_node(n, {1, 2, 3, 4}, GetParam()), (std::vector<float>{21.5, 32.5, 43.5, 4.5}));
  // ConvTranspose, stride 2: the full output of [1, 2, 3] with taps [1, 2, 3] is
  // [1, 2, 5, 4, 9, 6, 9]; output_shape 8 appends a position no input reaches.
  ConvNode t;
  t.op = "ConvTranspose";
  t.x = {1, 1, 3};
  t.w = {1, 1, 3};
  t.w_values = {1, 2, 3};
  t.attrs["strides"] = attr_is({2});
  t.attrs["output_shape"] = attr_is({8});
  EXPECT_EQ(run_node(t, {1, 2, 3}, GetParam()), (std::vector<float>{1, 2, 5, 4, 9, 6, 9, 0}));
}

INSTANTIATE_TEST_SUITE_P(Backends, ConvLoweringRun, ::testing::Values("reference", "portable"));

// Compiling `n` fails with an error of type E whose message names the node and holds `what`.
template <class E>
void expect_error(const ConvNode& n, const std::string& what) {
  auto g = conv_graph(n);
  try {
    compile_graph(*g, {g->inputs[0]->type}, {});
    ADD_FAILURE() << "no error; expected " << what;
  } catch (const E& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("the_conv"), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

TEST(ConvLowering, ErrorsNameTheNode) {
  ConvNode n;
  n.x = {1, 3, 5, 5};
  n.w = {2, 2, 3, 3};
  expect_error<Error>(n, "X has 3 channels and W is [2, 2, ...]");
  n.w = {2, 3, 3, 3};
  n.attrs["group"] = attr_i(2);
  expect_error<Error>(n, "X has 3 channels");
  n.attrs.erase("group");
  n.attrs["kernel_shape"] = attr_is({3, 2});
  expect_error<Error>(n, "kernel_shape does not match");
  n.attrs.erase("kernel_shape");
  n.bias = {1, 2, 3};
  expect_error<Error>(n, "B must have shape [2]");
  n.bias.clear();
  n.attrs["pads"] = attr_is({1, 1});
  expect_error<Error>(n, "pads has 2 entries, expected 4");
  n.attrs["pads"] = attr_is({0, 0, 0, 0});
  n.attrs["dilations"] = attr_is({3, 3});  // span 7 > 5
  expect_error<Error>(n, "output spatial dim 0 has size 0");
  n.attrs.erase("dilations");
  n.attrs["auto_pad"] = attr_s("SAME");
  expect_error<Error>(n, "unknown auto_pad 'SAME'");
  n.attrs.erase("auto_pad");
  n.dtype = DType::F64;
  expect_error<UnsupportedError>(n, "Conv on float64 (float32 only)");
  n.dtype = DType::F32;
  n.x = {1, 3, 2, 2, 2, 2};
  n.w = {2, 3, 1, 1, 1, 1};
  expect_error<UnsupportedError>(n, "with 4 spatial dims");

  ConvNode t;
  t.op = "ConvTranspose";
  t.x = {1, 4, 3};
  t.w = {3, 2, 3};
  expect_error<Error>(t, "X has 4 channels and W is [3, 2, ...]");
  t.w = {4, 2, 3};
  t.attrs["pads"] = attr_is({3, 3});  // full output 5
  expect_error<Error>(t, "output spatial dim 0 has size -1");
  t.attrs.erase("pads");
  t.attrs["output_shape"] = attr_is({5, 5});
  expect_error<Error>(t, "output_shape has 2 entries, expected 1");
  t.attrs.erase("output_shape");
  t.attrs["output_padding"] = attr_is({-1});
  expect_error<Error>(t, "output_padding must be in [0, 2^30), got -1");
}

}  // namespace
}  // namespace ferrite
