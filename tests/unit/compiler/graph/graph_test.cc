// Graph: types, constant data access, attributes, naming, sorting, checking, dead code.
#include "compiler/graph/graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "compiler/plan/error.h"

namespace ferrite {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(TensorType, StaticElementsAndString) {
  TensorType t;
  t.dtype = DType::F32;
  t.shape = {2, 3, 4};
  EXPECT_TRUE(t.is_static());
  EXPECT_EQ(t.elements(), 24);
  EXPECT_EQ(t.to_string(), "float32[2,3,4]");
  t.shape = {-1, 3};
  t.dim_names = {"N", ""};
  EXPECT_FALSE(t.is_static());
  EXPECT_EQ(t.elements(), -1);
  EXPECT_EQ(t.to_string(), "float32[N,3]");
  t.dim_names.clear();
  EXPECT_EQ(t.to_string(), "float32[?,3]");
  t.rank_known = false;
  EXPECT_EQ(t.to_string(), "float32[*]");
  TensorType scalar;
  scalar.dtype = DType::I64;
  EXPECT_EQ(scalar.elements(), 1);
  EXPECT_EQ(scalar.to_string(), "int64[]");
}

TEST(TensorType, OverflowingElementsThrow) {
  TensorType t;
  t.dtype = DType::F32;
  t.shape = {int64_t(1) << 40, int64_t(1) << 40};
  EXPECT_THROW(t.elements(), Error);
}

template <class T>
TensorData make_data(DType dt, std::vector<T> vals) {
  TensorData d;
  d.dtype = dt;
  d.shape = {static_cast<int64_t>(vals.size())};
  const uint8_t* p = reinterpret_cast<const uint8_t*>(vals.data());
  d.bytes.assign(p, p + vals.size() * sizeof(T));
  return d;
}

TEST(TensorData, IntAndFloatAccessForEveryDtype) {
  EXPECT_EQ(make_data<int8_t>(DType::I8, {-5, 7}).int_at(0), -5);
  EXPECT_EQ(make_data<uint8_t>(DType::U8, {250}).int_at(0), 250);
  EXPECT_EQ(make_data<int16_t>(DType::I16, {-300}).int_at(0), -300);
  EXPECT_EQ(make_data<uint16_t>(DType::U16, {65000}).int_at(0), 65000);
  EXPECT_EQ(make_data<int32_t>(DType::I32, {-70000}).int_at(0), -70000);
  EXPECT_EQ(make_data<uint32_t>(DType::U32, {4000000000u}).int_at(0), 4000000000LL);
  EXPECT_EQ(make_data<int64_t>(DType::I64, {-(int64_t(1) << 50)}).int_at(0), -(int64_t(1) << 50));
  EXPECT_EQ(make_data<uint64_t>(DType::U64, {123}).float_at(0), 123.0);
  EXPECT_EQ(make_data<uint8_t>(DType::Bool, {0, 1}).int_at(1), 1);
  EXPECT_EQ(make_data<float>(DType::F32, {2.5f}).float_at(0), 2.5);
  EXPECT_EQ(make_data<float>(DType::F32, {-2.75f}).int_at(0), -2);         // truncates toward zero
  EXPECT_EQ(make_data<double>(DType::F64, {1e300}).int_at(0), INT64_MAX);  // saturates
  EXPECT_EQ(make_data<double>(DType::F64, {-1e300}).int_at(0), INT64_MIN);
  EXPECT_EQ(make_data<double>(DType::F64, {std::nan("")}).int_at(0), 0);  // NaN -> 0
  // IEEE half 0x3C00 = 1.0, 0xC500 = -5.0; bfloat16 0x4049 = 3.140625.
  EXPECT_EQ(make_data<uint16_t>(DType::F16, {0x3C00, 0xC500}).float_at(1), -5.0);
  EXPECT_EQ(make_data<uint16_t>(DType::F16, {0x3C00}).int_at(0), 1);
  EXPECT_EQ(make_data<uint16_t>(DType::BF16, {0x4049}).float_at(0), 3.140625);
}

TEST(TensorData, ToIntsAndBounds) {
  TensorData d = make_data<int32_t>(DType::I32, {4, -1, 9});
  EXPECT_EQ(d.to_ints(), (std::vector<int64_t>{4, -1, 9}));
  EXPECT_EQ(d.elements(), 3);
  EXPECT_THROW(d.int_at(3), Error);
  EXPECT_THROW(d.int_at(-1), Error);
  d.shape = {4};  // claims more than the bytes hold
  EXPECT_THROW(d.to_ints(), Error);
  TensorData s;
  s.dtype = DType::String;
  s.shape = {1};
  EXPECT_THROW(s.int_at(0), Error);
}

TEST(Node, AttributeAccessorsCheckKinds) {
  Node n;
  n.op_type = "Conv";
  n.name = "conv1";
  n.attrs["group"] = attr_i(2);
  n.attrs["alpha"] = attr_f(0.5);
  n.attrs["mode"] = attr_s("nearest");
  n.attrs["pads"] = attr_is({1, 1, 2, 2});
  n.attrs["scales"] = attr_fs({1.5, 2});
  EXPECT_EQ(n.attr_int("group", 1), 2);
  EXPECT_EQ(n.attr_int("missing", 7), 7);
  EXPECT_EQ(n.attr_float("alpha", 0), 0.5);
  EXPECT_EQ(n.attr_float("group", 0), 2.0);  // int widens to float
  EXPECT_EQ(n.attr_string("mode", ""), "nearest");
  EXPECT_EQ(n.attr_ints("pads"), (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(n.attr_ints("none", {3}), (std::vector<int64_t>{3}));
  EXPECT_EQ(n.attr_floats("scales"), (std::vector<double>{1.5, 2}));
  EXPECT_EQ(n.attr_tensor("value"), nullptr);
  std::string msg = error_of([&] { n.attr_int("pads", 0); });
  EXPECT_NE(msg.find("Conv 'conv1'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'pads'"), std::string::npos) << msg;
  EXPECT_THROW(n.attr_ints("group"), Error);
  EXPECT_THROW(n.attr_string("alpha", ""), Error);
  EXPECT_THROW(n.attr_tensor("mode"), Error);
  EXPECT_THROW(n.attr_floats("pads"), Error);
}

TEST(Node, Describe) {
  Graph g;
  Value* y = g.add_value("y");
  Node* n = g.add_node("Relu", {}, {y}, "relu_3");
  EXPECT_EQ(n->describe(), "Relu 'relu_3'");
  n->name.clear();
  EXPECT_EQ(n->describe(), "Relu (output 'y')");
}

TEST(Graph, AddValueMakesNamesUnique) {
  Graph g;
  Value* a = g.add_value("x");
  Value* b = g.add_value("x");
  Value* c = g.add_value("");
  Value* d = g.add_value("");
  EXPECT_EQ(a->name, "x");
  EXPECT_EQ(b->name, "x_1");
  EXPECT_NE(c->name, d->name);
  EXPECT_EQ(g.find("x"), a);
  EXPECT_EQ(g.find("x_1"), b);
  EXPECT_EQ(g.find(c->name), c);
  EXPECT_EQ(g.find("nope"), nullptr);
  EXPECT_EQ(g.opset(), 0);
  g.opsets[""] = 13;
  EXPECT_EQ(g.opset(""), 13);
}

// x -> Relu -> a -> Neg -> b -> Add(a, b) -> c; built in order, then shuffled.
std::unique_ptr<Graph> chain() {
  GraphBuilder gb;
  Value* x = gb.input("x", DType::F32, {4});
  Value* a = gb.op("Relu", {x});
  Value* b = gb.op("Neg", {a});
  Value* c = gb.op("Add", {a, b});
  gb.output(c);
  return gb.finish();
}

std::vector<std::string> op_order(const Graph& g) {
  std::vector<std::string> ops;
  for (const auto& n : g.nodes) ops.push_back(n->op_type);
  return ops;
}

TEST(Graph, TopoSortOrdersShuffledNodes) {
  auto g = chain();
  std::reverse(g->nodes.begin(), g->nodes.end());
  EXPECT_THROW(g->validate(), Error);  // uses before definitions
  g->topo_sort();
  EXPECT_EQ(op_order(*g), (std::vector<std::string>{"Relu", "Neg", "Add"}));
  g->validate();
  EXPECT_EQ(g->nodes[0]->outputs[0]->users.size(), 2u);
  EXPECT_EQ(g->nodes[2]->inputs[1]->producer, g->nodes[1].get());
}

TEST(Graph, TopoSortIsStable) {
  // Independent nodes keep their order; a dependent node moves only as far as needed.
  GraphBuilder gb;
  Value* x = gb.input("x", DType::F32, {4});
  Value* a = gb.op("A", {x});
  gb.output(gb.op("B", {x}));
  gb.output(gb.op("C", {a}));
  gb.output(gb.op("D", {x}));
  auto g = gb.finish();
  std::swap(g->nodes[0], g->nodes[2]);  // C, B, A, D
  g->topo_sort();
  EXPECT_EQ(op_order(*g), (std::vector<std::string>{"B", "A", "C", "D"}));
}

TEST(Graph, TopoSortReportsCycle) {
  Graph g;
  g.name = "cyc";
  Value* x = g.add_input("x", {});
  Value* a = g.add_value("a");
  Value* b = g.add_value("b");
  g.add_node("Add", {x, b}, {a}, "first");
  g.add_node("Relu", {a}, {b}, "second");
  std::string msg = error_of([&] { g.topo_sort(); });
  EXPECT_NE(msg.find("cycle"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'first'"), std::string::npos) << msg;
}

TEST(Graph, TopoSortReportsUndefinedInputAndDoubleProducer) {
  Graph g;
  Value* ghost = g.add_value("ghost");
  Value* y = g.add_value("y");
  g.add_node("Relu", {ghost}, {y}, "r");
  std::string msg = error_of([&] { g.topo_sort(); });
  EXPECT_NE(msg.find("Relu 'r'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'ghost'"), std::string::npos) << msg;

  Graph h;
  Value* x = h.add_input("x", {});
  Value* z = h.add_value("z");
  h.add_node("Relu", {x}, {z}, "one");
  h.add_node("Neg", {x}, {z}, "two");
  msg = error_of([&] { h.topo_sort(); });
  EXPECT_NE(msg.find("produced twice"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'z'"), std::string::npos) << msg;
}

TEST(Graph, ValidateChecksOutputsAndForeignValues) {
  auto g = chain();
  Graph other;
  Value* stranger = other.add_value("stranger");
  g->add_output(stranger);
  EXPECT_THROW(g->validate(), Error);
  g->outputs.pop_back();
  g->nodes[1]->inputs[0] = stranger;
  EXPECT_THROW(g->topo_sort(), Error);
}

TEST(Graph, RemoveDeadDropsUnusedNodesAndValues) {
  GraphBuilder gb;
  Value* x = gb.input("x", DType::F32, {4});
  Value* w = gb.constant_f32({4}, {1, 2, 3, 4});
  Value* unused_c = gb.constant_i64({1}, {5});
  Value* dead = gb.op("Mul", {x, w});
  gb.op("Relu", {dead});
  Value* live = gb.op("Neg", {x});
  gb.output(live);
  auto g = gb.finish();
  std::string unused_name = unused_c->name;
  g->remove_dead();
  EXPECT_EQ(op_order(*g), (std::vector<std::string>{"Neg"}));
  EXPECT_EQ(g->find(unused_name), nullptr);
  EXPECT_NE(g->find("x"), nullptr);  // inputs stay even when dead
  EXPECT_EQ(g->values.size(), 2u);   // x and the Neg output
  g->validate();
}

TEST(Graph, SubgraphCapturesOrderTheOwner) {
  // If's branch reads outer value 'a' by name: the If must come after a's producer.
  Graph g;
  Value* x = g.add_input("x", {});
  Value* c = g.add_input("c", {});
  Value* a = g.add_value("a");
  Value* r = g.add_value("r");
  auto body = std::make_shared<Graph>();
  Value* cap = body->add_value("a");
  body->captures.push_back(cap);
  body->add_output(cap);
  Attribute branch;
  branch.kind = AttrKind::Graph;
  branch.g = body;
  Node* iff = g.add_node("If", {c}, {r});
  iff->attrs["then_branch"] = branch;
  g.add_node("Relu", {x}, {a});
  g.add_output(r);
  g.topo_sort();
  EXPECT_EQ(op_order(g), (std::vector<std::string>{"Relu", "If"}));
  g.validate();
  g.remove_dead();
  EXPECT_EQ(op_order(g), (std::vector<std::string>{"Relu", "If"}));  // a is live via capture
}

TEST(GraphBuilder, BuildsAndPrints) {
  GraphBuilder gb;
  Value* x = gb.input("x", DType::F32, {2, 3});
  Value* w = gb.constant("w", DType::F32, {3}, std::vector<float>{1, 2, 3}.data());
  Value* y = gb.op("Add", {x, w});
  Value* z = gb.op("Softmax", {y}, {{"axis", attr_i(-1)}});
  gb.output(z);
  EXPECT_EQ(gb.last_node()->op_type, "Softmax");
  auto g = gb.finish();
  EXPECT_EQ(g->opset(), 17);
  std::string expect =
      "graph 'main' (opset ai.onnx=17)\n"
      "  input %x: float32[2,3]\n"
      "  const %w: float32[3] = [1, 2, 3]\n"
      "  %" +
      y->name +
      " = Add(%x, %w)\n"
      "  %" +
      z->name + " = Softmax(%" + y->name +
      ") {axis=-1}\n"
      "  output %" +
      z->name + ": undefined[*]\n";
  EXPECT_EQ(graph_to_string(*g), expect);
  EXPECT_THROW(gb.finish(), Error);
  EXPECT_THROW(gb.constant_f32({2}, {1}), Error);
}

TEST(GraphPrinter, AttributesOptionalInputsAndSubgraphs) {
  Graph g;
  g.name = "p";
  TensorType t;
  t.dtype = DType::F32;
  t.shape = {-1, 2};
  t.dim_names = {"N", ""};
  Value* x = g.add_input("x", t);
  Value* y = g.add_value("y", t);
  Node* n = g.add_node("Clip", {x, nullptr}, {y}, "clip");
  n->attrs["s"] = attr_s("a\"b");
  n->attrs["f"] = attr_fs({0.25});
  auto body = std::make_shared<Graph>();
  body->name = "body";
  Value* bx = body->add_input("bx", t);
  body->add_output(bx);
  n->attrs["g"].kind = AttrKind::Graph;
  n->attrs["g"].g = body;
  g.add_output(y);
  std::string s = graph_to_string(g);
  EXPECT_NE(s.find("  input %x: float32[N,2]\n"), std::string::npos) << s;
  EXPECT_NE(s.find("  %y = Clip(%x, _) {f=[0.25], g=graph 'body', s=\"a\\\"b\"} : float32[N,2]\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("    g: graph 'body'\n      input %bx: float32[N,2]\n"), std::string::npos) << s;
}

}  // namespace
}  // namespace ferrite
