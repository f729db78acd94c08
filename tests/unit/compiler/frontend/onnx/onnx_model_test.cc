// import_onnx on hand-written models (tests/unit/compiler/frontend/onnx/proto_writer.h): node
// order, symbolic dims, value_info, Constant variants, attribute kinds, opsets, outer-scope
// captures in subgraphs, and the errors for inconsistent or malformed models.
#include <gtest/gtest.h>

#include "compiler/frontend/onnx/onnx_import.h"
#include "compiler/plan/error.h"
#include "tests/unit/compiler/frontend/onnx/proto_writer.h"

namespace ferrite {
namespace {

using testing::model;
using testing::node;
using testing::Pb;
using testing::value_info;

std::unique_ptr<Graph> import(const Pb& m) {
  return import_onnx(m.data(), m.size(), "");
}

std::string error_of(const Pb& m) {
  try {
    import(m);
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

Pb attr_ints(const std::string& name, const std::vector<int64_t>& v) {
  return Pb().str(1, name).packed_varints(8, v).i64(20, 7);
}

Pb attr_graph(const std::string& name, const Pb& g) {
  return Pb().str(1, name).msg(6, g).i64(20, 5);
}

TEST(OnnxModel, UnsortedNodesSymbolicDimsAndValueInfo) {
  Pb g = Pb().msg(1, node("Neg", {"a"}, {"b"}, "neg")).msg(1, node("Relu", {"x"}, {"a"}, "relu"));
  g.str(2, "g").msg(11, value_info("x", 1, {-1, 3})).msg(12, value_info("b", 1, {-1, 3}));
  g.msg(13, value_info("a", 1, {-1, 3}));
  auto gr = import(model(g));
  ASSERT_EQ(gr->nodes.size(), 2u);
  EXPECT_EQ(gr->nodes[0]->name, "relu");
  EXPECT_EQ(gr->nodes[1]->name, "neg");
  const Value* x = gr->find("x");
  EXPECT_EQ(x->type.shape, (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(x->type.dim_names, (std::vector<std::string>{"N", ""}));
  EXPECT_EQ(gr->find("a")->type.to_string(), "float32[N,3]");
  EXPECT_EQ(gr->find("b")->type.dtype, DType::F32);
}

TEST(OnnxModel, MissingShapeAndDimAreUnknown) {
  Pb no_shape = Pb().str(1, "x").msg(2, Pb().msg(1, Pb().i64(1, 7)));
  Pb no_dim = Pb().str(1, "y").msg(2, Pb().msg(1, Pb().i64(1, 1).msg(2, Pb().msg(1, Pb()))));
  Pb g = Pb().msg(1, node("Identity", {"x"}, {"z"})).msg(11, no_shape).msg(11, no_dim);
  g.msg(12, Pb().str(1, "z"));
  auto gr = import(model(g));
  EXPECT_FALSE(gr->find("x")->type.rank_known);
  EXPECT_EQ(gr->find("x")->type.dtype, DType::I64);
  EXPECT_EQ(gr->find("y")->type.shape, (std::vector<int64_t>{-1}));
  EXPECT_FALSE(gr->find("z")->type.rank_known);
}

TEST(OnnxModel, ConstantVariants) {
  Pb g;
  g.msg(1, node("Constant", {}, {"f"}).msg(5, Pb().str(1, "value_float").f32(2, 2.5f).i64(20, 1)));
  g.msg(1, node("Constant", {}, {"fs"})
               .msg(5, Pb().str(1, "value_floats").packed_floats(7, {1, 2}).i64(20, 6)));
  g.msg(1, node("Constant", {}, {"i"}).msg(5, Pb().str(1, "value_int").i64(3, -9).i64(20, 2)));
  g.msg(1, node("Constant", {}, {"is"}).msg(5, attr_ints("value_ints", {4, 5, 6})));
  for (const char* o : {"f", "fs", "i", "is"}) g.msg(12, Pb().str(1, o));
  auto gr = import(model(g));
  EXPECT_TRUE(gr->nodes.empty());
  const TensorData& f = *gr->find("f")->data;
  EXPECT_TRUE(f.shape.empty());
  EXPECT_EQ(f.float_at(0), 2.5);
  EXPECT_EQ(gr->find("fs")->data->shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(gr->find("fs")->data->float_at(1), 2.0);
  EXPECT_EQ(gr->find("i")->data->dtype, DType::I64);
  EXPECT_EQ(gr->find("i")->data->int_at(0), -9);
  EXPECT_EQ(gr->find("is")->data->to_ints(), (std::vector<int64_t>{4, 5, 6}));
  EXPECT_EQ(gr->outputs[3]->type.shape, (std::vector<int64_t>{3}));
}

TEST(OnnxModel, UnsupportedConstants) {
  Pb s = Pb().msg(
      1, node("Constant", {}, {"c"}).msg(5, Pb().str(1, "value_string").str(4, "hi").i64(20, 3)));
  EXPECT_THROW(import(model(s.msg(12, Pb().str(1, "c")))), UnsupportedError);
  Pb sp = Pb().msg(
      1, node("Constant", {}, {"c"}).msg(5, Pb().str(1, "sparse_value").msg(22, Pb()).i64(20, 11)));
  EXPECT_THROW(import(model(sp.msg(12, Pb().str(1, "c")))), UnsupportedError);
  Pb two = Pb().msg(1, node("Constant", {}, {"c"})
                           .msg(5, attr_ints("value_ints", {1}))
                           .msg(5, attr_ints("value_ints", {2})));
  EXPECT_THROW(import(model(two)), Error);
}

TEST(OnnxModel, AttributeKinds) {
  Pb n = node("Custom", {"x"}, {"y"}, "c");
  n.str(7, "com.example");
  n.msg(5, Pb().str(1, "f").f32(2, 0.25f).i64(20, 1));
  n.msg(5, Pb().str(1, "i").i64(3, 1LL << 40).i64(20, 2));
  n.msg(5, Pb().str(1, "s").str(4, "abc").i64(20, 3));
  n.msg(5, Pb().str(1, "fs").f32(7, 1.0f).f32(7, 2.0f).i64(20, 6));  // unpacked floats
  n.msg(5, Pb().str(1, "is").i64(8, 3).i64(8, -4).i64(20, 7));       // unpacked ints
  n.msg(5, Pb().str(1, "ss").str(9, "a").str(9, "b").i64(20, 8));
  n.msg(5, Pb().str(1, "t").msg(5, Pb().i64(2, 7).i64(7, 11)).i64(20, 4));
  n.msg(5, Pb().str(1, "empty").i64(20, 7));  // an empty ints list
  Pb g = Pb().msg(1, n).msg(11, value_info("x", 1, {2})).msg(12, Pb().str(1, "y"));
  Pb m = Pb().i64(1, 8)
             .msg(8, Pb().str(1, "ai.onnx").i64(2, 15))
             .msg(8, Pb().str(1, "com.example").i64(2, 3));
  auto gr = import(m.msg(7, g));
  EXPECT_EQ(gr->opset(), 15);
  EXPECT_EQ(gr->opset("com.example"), 3);
  const Node& c = *gr->nodes[0];
  EXPECT_EQ(c.domain, "com.example");
  EXPECT_EQ(c.attr_float("f", 0), 0.25);
  EXPECT_EQ(c.attr_int("i", 0), 1LL << 40);
  EXPECT_EQ(c.attr_string("s", ""), "abc");
  EXPECT_EQ(c.attr_floats("fs"), (std::vector<double>{1, 2}));
  EXPECT_EQ(c.attr_ints("is"), (std::vector<int64_t>{3, -4}));
  EXPECT_EQ(c.attrs.at("ss").strings, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(c.attr_tensor("t")->int_at(0), 11);
  EXPECT_EQ(c.attr_ints("empty", {9}), (std::vector<int64_t>{}));
  // A type attribute (Optional's): an optional of float tensors; a list of types is refused.
  Pb float_type = Pb().msg(9, Pb().msg(1, Pb().msg(1, Pb().i64(1, 1))));
  Pb tp = node("Optional", {}, {"o"}).msg(5, Pb().str(1, "type").msg(14, float_type).i64(20, 13));
  auto opt = import(model(Pb().msg(1, tp).msg(12, Pb().str(1, "o")), 15));
  const Attribute& type = opt->nodes[0]->attrs.at("type");
  EXPECT_EQ(type.kind, AttrKind::Type);
  EXPECT_EQ(type.type.to_string(), "optional<float32[*]>");
  Pb tps = node("Custom", {}, {"o"}).str(7, "com.example");
  tps.msg(5, Pb().str(1, "types").msg(15, Pb()).i64(20, 14));
  Pb custom = Pb().i64(1, 8)
                  .msg(8, Pb().str(1, "").i64(2, 15))
                  .msg(8, Pb().str(1, "com.example").i64(2, 1));
  EXPECT_THROW(import(custom.msg(7, Pb().msg(1, tps).msg(12, Pb().str(1, "o")))), UnsupportedError);
}

// Before IR version 2 an attribute had no type field: its type is the field it sets.
TEST(OnnxModel, AttributeTypeInferredBeforeIr2) {
  Pb n = node("Custom", {"x"}, {"y"}, "c").str(7, "com.example");
  n.msg(5, Pb().str(1, "i").i64(3, 1LL << 40));
  Pb g = Pb().msg(1, n).msg(11, value_info("x", 1, {2})).msg(12, Pb().str(1, "y"));
  Pb opsets = Pb().msg(8, Pb().str(1, "").i64(2, 1)).msg(8, Pb().str(1, "com.example").i64(2, 1));
  auto gr = import(Pb().i64(1, 1).raw(opsets.bytes()).msg(7, g));
  EXPECT_EQ(gr->nodes[0]->attr_int("i", 0), 1LL << 40);
  Pb ir8 = Pb().i64(1, 8).raw(opsets.bytes()).msg(7, g);
  EXPECT_EQ(error_of(ir8), "onnx: node Custom 'c': attribute 'i' has no type");
}

// outer: Relu(x) -> a, and Loop(trip, cond) whose body holds an If whose branch reads 'a'
// (two levels out) and 'x'. The Loop comes first in the file.
TEST(OnnxModel, SubgraphsCaptureOuterValues) {
  Pb then_g = Pb().msg(1, node("Add", {"a", "x"}, {"t"})).str(2, "then").msg(12, Pb().str(1, "t"));
  Pb else_g = Pb().str(2, "else").msg(12, Pb().str(1, "a"));
  Pb iff = node("If", {"c_in"}, {"r"}).msg(5, attr_graph("then_branch", then_g));
  iff.msg(5, attr_graph("else_branch", else_g));
  Pb body = Pb().msg(1, iff).msg(1, node("Identity", {"c_in"}, {"c_out"})).str(2, "body");
  body.msg(11, value_info("i", 7, {})).msg(11, value_info("c_in", 9, {}));
  body.msg(12, Pb().str(1, "c_out")).msg(12, Pb().str(1, "r"));
  Pb loop = node("Loop", {"trip", "cond"}, {"out"}, "loop").msg(5, attr_graph("body", body));
  Pb g = Pb().msg(1, loop).msg(1, node("Relu", {"x"}, {"a"}, "relu")).str(2, "main");
  g.msg(11, value_info("x", 1, {4}))
      .msg(11, value_info("trip", 7, {}))
      .msg(11, value_info("cond", 9, {}));
  g.msg(12, Pb().str(1, "out"));
  auto gr = import(model(g));
  ASSERT_EQ(gr->nodes.size(), 2u);
  EXPECT_EQ(gr->nodes[0]->op_type, "Relu");  // the Loop depends on 'a' through its body
  const Graph& b = *gr->nodes[1]->attrs.at("body").g;
  ASSERT_EQ(b.captures.size(), 2u);
  EXPECT_EQ(b.captures[0]->name, "a");
  EXPECT_EQ(b.captures[1]->name, "x");
  EXPECT_EQ(b.captures[1]->type.shape, (std::vector<int64_t>{4}));
  const Node* if_node = b.nodes[0]->op_type == "If" ? b.nodes[0].get() : b.nodes[1].get();
  const Graph& t = *if_node->attrs.at("then_branch").g;
  ASSERT_EQ(t.captures.size(), 2u);
  EXPECT_EQ(t.nodes[0]->inputs[0], t.captures[0]);
  const Graph& e = *if_node->attrs.at("else_branch").g;
  ASSERT_EQ(e.outputs.size(), 1u);
  EXPECT_EQ(e.outputs[0], e.captures[0]);  // a branch may return an outer value directly
  gr->validate();
  gr->remove_dead();
  EXPECT_EQ(gr->nodes.size(), 2u);  // Relu stays: only the body reads 'a'
}

TEST(OnnxModel, ErrorsNameTheNodeAndValue) {
  Pb conv = Pb().msg(1, node("Conv", {"x", "x9"}, {"y"}, "conv1")).msg(11, value_info("x", 1, {1}));
  EXPECT_EQ(error_of(model(conv.msg(12, Pb().str(1, "y")))),
            "onnx: node Conv 'conv1': input 'x9' is not defined");
  Pb twice = Pb().msg(1, node("Relu", {"x"}, {"y"})).msg(1, node("Neg", {"x"}, {"y"}, "n"));
  twice.msg(11, value_info("x", 1, {1})).msg(12, Pb().str(1, "y"));
  EXPECT_EQ(error_of(model(twice)), "onnx: node Neg 'n': output 'y' is already defined");
  Pb shadow = Pb().msg(1, node("Relu", {"x"}, {"x"}, "r")).msg(11, value_info("x", 1, {1}));
  EXPECT_NE(error_of(model(shadow)).find("output 'x' is already defined"), std::string::npos);
  Pb no_out = Pb().str(2, "g").msg(11, value_info("x", 1, {1})).msg(12, Pb().str(1, "q"));
  EXPECT_EQ(error_of(model(no_out)), "onnx: graph 'g': output 'q' is not defined");
  Pb cycle = Pb().str(2, "g")
                 .msg(1, node("Relu", {"b"}, {"a"}, "r"))
                 .msg(1, node("Neg", {"a"}, {"b"}, "n"));
  EXPECT_NE(error_of(model(cycle.msg(12, Pb().str(1, "b")))).find("cycle"), std::string::npos);
  Pb no_op = Pb().msg(1, Pb().str(2, "y"));
  EXPECT_NE(error_of(model(no_op)).find("no op_type"), std::string::npos);
  Pb dup_attr =
      Pb().msg(1, node("Relu", {"x"}, {"y"}).msg(5, attr_ints("a", {})).msg(5, attr_ints("a", {})));
  EXPECT_NE(error_of(model(dup_attr)).find("'a' is given twice"), std::string::npos);
  Pb init = Pb().msg(5, Pb().i64(1, 1).i64(2, 1).f32(4, 1).str(8, "w"))
                .msg(5, Pb().i64(2, 1).f32(4, 1).str(8, "w"));
  EXPECT_NE(error_of(model(init)).find("initializer 'w' is defined twice"), std::string::npos);
  EXPECT_EQ(error_of(Pb().i64(1, 8)), "onnx: the model has no graph");
  Pb complex = Pb().msg(11, value_info("x", 14, {1}));
  EXPECT_THROW(import(model(complex)), UnsupportedError);
}

TEST(OnnxModel, WireErrors) {
  std::string msg = error_of(Pb().key(7, 3));  // start-group
  EXPECT_EQ(msg, "onnx: unsupported wire type 3 for field 7 at offset 0 (ModelProto)");
  msg = error_of(Pb().key(1, 0).raw(std::string(10, '\xff')).raw("\x01"));  // 11-byte varint
  EXPECT_EQ(msg, "onnx: over-long varint field 1 at offset 0 (ModelProto)");
  msg = error_of(Pb().key(1, 0).raw("\xff"));
  EXPECT_EQ(msg, "onnx: truncated varint field 1 at offset 0 (ModelProto)");
  msg = error_of(Pb().i64(1, 8).msg(7, Pb().i64(2, 5)));  // GraphProto.name as a varint
  EXPECT_EQ(
      msg,
      "onnx: wire type varint (expected length-delimited) for field 2 at offset 4 (GraphProto)");
  msg = error_of(Pb().i64(1, 8).key(7, 2).raw_varint(1000).raw("abc"));
  EXPECT_EQ(msg, "onnx: truncated length-delimited field 7 at offset 2 (ModelProto)");
  EXPECT_THROW(import(Pb().raw(std::string("\x00", 1))), Error);  // field number 0
  EXPECT_THROW(import(Pb().key(3, 6)), Error);                    // wire type 6
  // Unknown fields of every wire type are skipped.
  Pb g = Pb().i64(99, 5).f32(98, 1).f64(97, 2).str(96, "x").msg(11, value_info("x", 1, {1}));
  auto gr = import(model(g.msg(12, Pb().str(1, "x"))).i64(1234, 1));
  EXPECT_EQ(gr->inputs.size(), 1u);
}

Pb nested_ifs(int depth) {
  Pb g = Pb().str(2, "leaf").msg(12, Pb().str(1, "c"));
  for (int i = 0; i < depth; ++i) {
    Pb n = node("If", {"c"}, {"r" + std::to_string(i)}).msg(5, attr_graph("then_branch", g));
    n.msg(5, attr_graph("else_branch", Pb().str(2, "else").msg(12, Pb().str(1, "c"))));
    g = Pb().msg(1, n).msg(12, Pb().str(1, "r" + std::to_string(i)));
  }
  return g.msg(11, value_info("c", 9, {}));
}

TEST(OnnxModel, NestingDepthIsLimited) {
  auto gr = import(model(nested_ifs(20)));
  const Graph* g = gr.get();
  for (int i = 0; i < 20; ++i) g = g->nodes.at(0)->attrs.at("then_branch").g.get();
  EXPECT_EQ(g->name, "leaf");
  EXPECT_EQ(g->captures.size(), 1u);
  EXPECT_NE(error_of(model(nested_ifs(200))).find("nested deeper"), std::string::npos);
}

}  // namespace
}  // namespace ferrite
