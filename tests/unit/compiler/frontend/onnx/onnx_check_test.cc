// The importer's model checks (compiler/frontend/onnx/onnx_check.cc, onnx_type_check.cc)
// on hand-built models: one invalid model per check class, with the message naming the
// node, the op with its schema version and what is wrong, and the valid edge cases next to
// each (optional inputs left empty, variadic inputs, attributes left at their defaults,
// the schema version in force for the opset). Each invalid model here is one that
// onnx.checker (python3-onnx 1.12, full_check) rejects too.
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

constexpr int kFloat = 1, kInt64 = 7, kBool = 9;

std::string error_of(const Pb& m) {
  try {
    import_onnx(m.data(), m.size(), "");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

Pb attr_int(const std::string& name, int64_t v) {
  return Pb().str(1, name).i64(3, v).i64(20, 2);
}
Pb attr_float(const std::string& name, float v) {
  return Pb().str(1, name).f32(2, v).i64(20, 1);
}
Pb attr_ints(const std::string& name, const std::vector<int64_t>& v) {
  return Pb().str(1, name).packed_varints(8, v).i64(20, 7);
}
Pb attr_graph(const std::string& name, const Pb& g) {
  return Pb().str(1, name).msg(6, g).i64(20, 5);
}

// A graph of `nodes` with float inputs of shape [2] (or the given types) and outputs.
Pb graph(const std::vector<Pb>& nodes, const std::vector<std::pair<std::string, int>>& ins,
         const std::vector<std::string>& outs) {
  Pb g = Pb().str(2, "g");
  for (const Pb& n : nodes) g.msg(1, n);
  for (const auto& in : ins) g.msg(11, value_info(in.first, in.second, {2}));
  for (const auto& o : outs) g.msg(12, Pb().str(1, o));
  return g;
}

std::string check(const Pb& n, const std::vector<std::pair<std::string, int>>& ins,
                  const std::vector<std::string>& outs, int64_t opset = 13) {
  return error_of(model(graph({n}, ins, outs), opset));
}

const std::vector<std::pair<std::string, int>> kXY = {{"x", kFloat}, {"y", kFloat}};

TEST(OnnxCheck, InputAndOutputCounts) {
  EXPECT_EQ(check(node("Add", {"x", "y", "x"}, {"z"}), kXY, {"z"}),
            "onnx: node Add (output 'z'): 3 inputs, but Add-13 takes 2");
  EXPECT_EQ(check(node("Add", {"x"}, {"z"}, "a"), kXY, {"z"}),
            "onnx: node Add 'a': 1 inputs, but Add-13 takes 2");
  EXPECT_EQ(check(node("Relu", {"x"}, {"z", "w"}), kXY, {"z"}),
            "onnx: node Relu (output 'z'): 2 outputs, but Relu-13 takes 1");
  EXPECT_EQ(check(node("Clip", {"x", "y", "y", "y"}, {"z"}), kXY, {"z"}),
            "onnx: node Clip (output 'z'): 4 inputs, but Clip-13 takes 1 to 3");
  EXPECT_EQ(check(node("Concat", {}, {"z"}).msg(5, attr_int("axis", 0)), kXY, {"z"}),
            "onnx: node Concat (output 'z'): 0 inputs, but Concat-13 takes at least 1");
  // BatchNormalization-15 gives 1 or 3 outputs (a set, not a range).
  Pb bn = node("BatchNormalization", {"x", "y", "y", "y", "y"}, {"z", "m"});
  EXPECT_EQ(check(bn, kXY, {"z"}, 15),
            "onnx: node BatchNormalization (output 'z'): 2 outputs, but BatchNormalization-15 "
            "gives 1 or 3");
  Pb none = Pb().str(4, "Relu");
  EXPECT_EQ(check(none, kXY, {}), "onnx: node Relu (unnamed): has no inputs and no outputs");
  // Variadic inputs and outputs, optional outputs left out.
  Pb concat = node("Concat", {"x", "y", "x", "y", "x"}, {"z"}).msg(5, attr_int("axis", 0));
  EXPECT_EQ(check(concat, kXY, {"z"}), "");
  EXPECT_EQ(check(node("Sum", {"x", "y", "x"}, {"z"}), kXY, {"z"}), "");
  EXPECT_EQ(check(node("Dropout", {"x"}, {"z"}), kXY, {"z"}), "");
  Pb split = node("Split", {"x"}, {"a", "b"}).msg(5, attr_ints("split", {1, 1}));
  EXPECT_EQ(check(split, kXY, {"a", "b"}, 11), "");
}

TEST(OnnxCheck, EmptyNamesOnlyForOptionalParameters) {
  EXPECT_EQ(check(node("Add", {"x", ""}, {"z"}), kXY, {"z"}),
            "onnx: node Add (output 'z'): input 1 ('B') of Add-13 is required but its name is "
            "empty");
  EXPECT_EQ(check(node("Relu", {"x"}, {""}, "r"), kXY, {}),
            "onnx: node Relu 'r': output 0 ('Y') of Relu-13 is required but its name is empty");
  // Clip-13's min left out, max given; Dropout's mask left out by name.
  EXPECT_EQ(check(node("Clip", {"x", "", "y"}, {"z"}), kXY, {"z"}), "");
  EXPECT_EQ(check(node("Dropout", {"x"}, {"z", ""}), kXY, {"z"}), "");
}

TEST(OnnxCheck, Attributes) {
  Pb unknown = node("Relu", {"x"}, {"z"}).msg(5, attr_float("alpha", 1));
  EXPECT_EQ(check(unknown, kXY, {"z"}),
            "onnx: node Relu (output 'z'): Relu-13 has no attribute 'alpha'");
  Pb retyped = node("Transpose", {"x"}, {"z"}).msg(5, attr_int("perm", 0));
  EXPECT_EQ(check(retyped, kXY, {"z"}),
            "onnx: node Transpose (output 'z'): attribute 'perm' is int, but Transpose-13 takes "
            "ints");
  EXPECT_EQ(check(node("Cast", {"x"}, {"z"}, "c"), kXY, {"z"}),
            "onnx: node Cast 'c': Cast-13 needs attribute 'to' (int)");
  // The attribute set of the version in force: Clip's min/max became inputs in opset 11.
  Pb clip_attr = node("Clip", {"x"}, {"z"}).msg(5, attr_float("min", 0));
  EXPECT_EQ(check(clip_attr, kXY, {"z"}, 6), "");
  EXPECT_EQ(check(clip_attr, kXY, {"z"}, 13),
            "onnx: node Clip (output 'z'): Clip-13 has no attribute 'min'");
  // Defaults may be left out; "__" names are implementation details, as in onnx.checker.
  EXPECT_EQ(check(node("LeakyRelu", {"x"}, {"z"}), kXY, {"z"}), "");
  Pb internal = node("Relu", {"x"}, {"z"}).msg(5, attr_int("__hint", 1));
  EXPECT_EQ(check(internal, kXY, {"z"}), "");
  // LayerNormalization-17 accepts attributes it does not declare (AllowUncheckedAttributes).
  Pb layer_norm = node("LayerNormalization", {"x", "y"}, {"z"}).msg(5, attr_int("foo", 1));
  EXPECT_EQ(check(layer_norm, kXY, {"z"}, 17), "");
  Pb empty_list = node("Transpose", {"x"}, {"z"}).msg(5, attr_ints("perm", {}));
  EXPECT_EQ(check(empty_list, kXY, {"z"}), "") << "ONNX since 1.13 allows empty lists";
}

TEST(OnnxCheck, AttributeFields) {
  Pb int_holding_float = Pb().str(1, "alpha").f32(2, 1).i64(20, 2);
  EXPECT_EQ(check(node("Elu", {"x"}, {"z"}).msg(5, int_holding_float), kXY, {"z"}),
            "onnx: node Elu (output 'z'): attribute 'alpha' is declared int but holds float");
  Pb two_fields = Pb().str(1, "alpha").f32(2, 1).i64(3, 1).i64(20, 1);
  EXPECT_EQ(check(node("Elu", {"x"}, {"z"}).msg(5, two_fields), kXY, {"z"}),
            "onnx: node Elu (output 'z'): attribute 'alpha' sets 2 value fields (one allowed)");
  Pb untyped = Pb().str(1, "alpha").f32(2, 1);
  EXPECT_EQ(check(node("Elu", {"x"}, {"z"}).msg(5, untyped), kXY, {"z"}),
            "onnx: node Elu (output 'z'): attribute 'alpha' has no type");
  // proto3 writers omit a zero value: a typed attribute with no field is its default.
  Pb zero = Pb().str(1, "alpha").i64(20, 1);
  EXPECT_EQ(check(node("Elu", {"x"}, {"z"}).msg(5, zero), kXY, {"z"}), "");
}

TEST(OnnxCheck, OpsetsAndSchemaVersions) {
  EXPECT_EQ(check(node("Gelu", {"x"}, {"z"}), kXY, {"z"}, 13),
            "onnx: node Gelu (output 'z'): Gelu is not in opset 13 of ai.onnx (it first appears "
            "in opset 20)");
  EXPECT_EQ(check(node("Gelu", {"x"}, {"z"}), kXY, {"z"}, 20), "");
  Pb upsample = node("Upsample", {"x", "y"}, {"z"});
  EXPECT_EQ(check(upsample, kXY, {"z"}, 10),
            "onnx: node Upsample (output 'z'): Upsample is deprecated in opset 10 of ai.onnx "
            "(since 10)");
  // Not an ONNX op: imported, and left to lowering to report as unsupported.
  EXPECT_EQ(check(node("NoSuchOp", {"x"}, {"z"}), kXY, {"z"}), "");
  Pb g = graph({node("Relu", {"x"}, {"z"})}, kXY, {"z"});
  Pb dup =
      Pb().i64(1, 8).msg(8, Pb().str(1, "").i64(2, 13)).msg(8, Pb().str(1, "ai.onnx").i64(2, 12));
  EXPECT_EQ(error_of(dup.msg(7, g)), "onnx: the model imports ai.onnx twice (opsets 13 and 12)");
  EXPECT_EQ(error_of(Pb().i64(1, 8).msg(7, g)), "onnx: the model imports no opset (IR version 8)");
  EXPECT_EQ(error_of(Pb().i64(1, 8).msg(8, Pb().i64(2, 0)).msg(7, g)),
            "onnx: opset import of ai.onnx has version 0");
  EXPECT_EQ(error_of(Pb().msg(8, Pb().i64(2, 13)).msg(7, g)),
            "onnx: the model has no IR version (ir_version 0)");
  Pb future = Pb().i64(1, 8).msg(8, Pb().i64(2, 29)).msg(7, g);
  EXPECT_THROW(import_onnx(future.data(), future.size(), ""), UnsupportedError);
  // A node of a domain the model does not import; one the table lacks is not checked.
  Pb ms = node("FusedGemm", {"x"}, {"z"}).str(7, "com.microsoft").msg(5, attr_int("any", 1));
  EXPECT_EQ(check(ms, kXY, {"z"}),
            "onnx: node FusedGemm (output 'z'): the model imports no opset of domain "
            "'com.microsoft'");
  Pb both = Pb().i64(1, 8).msg(8, Pb().i64(2, 13)).msg(8, Pb().str(1, "com.microsoft").i64(2, 1));
  EXPECT_EQ(error_of(both.msg(7, graph({ms}, kXY, {"z"}))), "");
  Pb ml_only = Pb().i64(1, 8).msg(8, Pb().str(1, "ai.onnx.ml").i64(2, 3));
  EXPECT_EQ(error_of(ml_only.msg(7, graph({node("Relu", {"x"}, {"z"})}, kXY, {"z"}))),
            "onnx: node Relu (output 'z'): the model imports no opset of domain 'ai.onnx'");
}

TEST(OnnxCheck, ElementTypes) {
  const std::vector<std::pair<std::string, int>> xi = {{"x", kFloat}, {"i", kInt64}};
  EXPECT_EQ(check(node("Sqrt", {"i"}, {"z"}), xi, {"z"}),
            "onnx: node Sqrt (output 'z'): input 0 ('X') is int64, but Sqrt-13 allows only "
            "float, float16, double, bfloat16 for T");
  EXPECT_EQ(check(node("Add", {"x", "i"}, {"z"}), xi, {"z"}),
            "onnx: node Add (output 'z'): input 1 ('B') is int64, but input 0 ('A') is float "
            "and Add-13 needs both of one type T");
  Pb concat = node("Concat", {"x", "x", "i"}, {"z"}).msg(5, attr_int("axis", 0));
  EXPECT_NE(check(concat, xi, {"z"}).find("input 2 ('inputs') is int64"), std::string::npos);
  // A literal type: Reshape's shape is tensor(int64).
  EXPECT_NE(check(node("Reshape", {"x", "x"}, {"z"}), xi, {"z"}).find("allows only int64"),
            std::string::npos);
  EXPECT_EQ(check(node("Reshape", {"x", "i"}, {"z"}), xi, {"z"}), "");
  EXPECT_EQ(check(node("Add", {"i", "i"}, {"z"}), xi, {"z"}), "");
}

TEST(OnnxCheck, ElementTypesFlowThroughNodes) {
  // Shape gives int64 (its only output type), Cast gives its `to`: Sqrt of either is wrong.
  Pb shape = node("Shape", {"x"}, {"s"});
  EXPECT_NE(error_of(model(graph({shape, node("Sqrt", {"s"}, {"z"})}, kXY, {"z"})))
                .find("Sqrt (output 'z'): input 0 ('X') is int64"),
            std::string::npos);
  Pb cast = node("Cast", {"x"}, {"c"}).msg(5, attr_int("to", kBool));
  EXPECT_NE(error_of(model(graph({node("Neg", {"c"}, {"z"}), cast}, kXY, {"z"})))
                .find("Neg (output 'z'): input 0 ('X') is bool"),
            std::string::npos);
  // Relu keeps its input's type T: a float declared as int64 is wrong.
  Pb g = graph({node("Relu", {"x"}, {"z"})}, kXY, {});
  g.msg(12, value_info("z", kInt64, {2}));
  EXPECT_EQ(error_of(model(g)),
            "onnx: node Relu (output 'z'): output 0 ('z') is declared int64, but Relu-13 "
            "computes float");
  // Types an attribute chooses: ConstantOfShape's default is float, EyeLike keeps its
  // input's type unless `dtype` says otherwise.
  Pb cos = graph({node("ConstantOfShape", {"s"}, {"z"})}, {{"s", kInt64}}, {});
  EXPECT_EQ(error_of(model(cos.msg(12, value_info("z", kInt64, {2})))),
            "onnx: node ConstantOfShape (output 'z'): output 0 ('z') is declared int64, but "
            "ConstantOfShape-9 computes float");
  Pb eye = graph({node("EyeLike", {"x"}, {"z"})}, kXY, {});
  EXPECT_NE(error_of(model(eye.msg(12, value_info("z", kInt64, {2})))).find("computes float"),
            std::string::npos);
  Pb eye_i = graph({node("EyeLike", {"x"}, {"z"}).msg(5, attr_int("dtype", kInt64))}, kXY, {});
  EXPECT_EQ(error_of(model(eye_i.msg(12, value_info("z", kInt64, {2})))), "");
  // A graph output naming an input or a constant may only repeat its type.
  Pb in_out = graph({node("Relu", {"x"}, {"z"})}, kXY, {"z"});
  EXPECT_EQ(error_of(model(in_out.msg(12, value_info("x", kInt64, {2})))),
            "onnx: value 'x' is declared int64 but is float32 (a graph input)");
  Pb seq_out = graph({node("Relu", {"x"}, {"z"})}, kXY, {"z"});
  seq_out.msg(12, Pb().str(1, "y").msg(2, Pb().msg(4, Pb())));  // y as a sequence
  EXPECT_EQ(error_of(model(seq_out)),
            "onnx: value 'y' is declared a non-tensor type but is float32 (a graph input)");
  Pb ok = graph({node("Relu", {"x"}, {"z"})}, kXY, {});
  EXPECT_EQ(error_of(model(ok.msg(12, value_info("z", kFloat, {2})))), "");
}

// If(c) whose then-branch is `then_node` (output 't') and whose else-branch returns
// Identity(`name`).
Pb if_with(const Pb& then_node, const std::string& name) {
  Pb then_g = Pb().str(2, "then").msg(1, then_node).msg(12, Pb().str(1, "t"));
  Pb else_g = Pb().str(2, "else").msg(1, node("Identity", {name}, {"e"})).msg(12, Pb().str(1, "e"));
  Pb iff = node("If", {"c"}, {"r"}, "if").msg(5, attr_graph("then_branch", then_g));
  return iff.msg(5, attr_graph("else_branch", else_g));
}

Pb if_reading(const std::string& name, const std::string& then_op) {
  return if_with(node(then_op, {name}, {"t"}), name);
}

TEST(OnnxCheck, Subgraphs) {
  const std::vector<std::pair<std::string, int>> ins = {{"c", kBool}, {"i", kInt64}, {"x", kFloat}};
  EXPECT_NE(check(if_reading("i", "Sqrt"), ins, {"r"})
                .find("Sqrt (output 't'): input 0 ('X') "
                      "is int64"),
            std::string::npos);
  EXPECT_EQ(check(if_reading("x", "Sqrt"), ins, {"r"}), "");
  // A subgraph's node may not define a name its enclosing graph has (SSA).
  Pb then_g =
      Pb().str(2, "then").msg(1, node("Relu", {"x"}, {"x"}, "inner")).msg(12, Pb().str(1, "x"));
  Pb iff = node("If", {"c"}, {"r"}).msg(5, attr_graph("then_branch", then_g));
  iff.msg(5, attr_graph("else_branch", then_g));
  EXPECT_EQ(check(iff, ins, {"r"}),
            "onnx: node Relu 'inner': output 'x' is already defined in an enclosing graph");
  // A branch reading the If's own output is a cycle.
  Pb self = if_reading("r", "Relu");
  EXPECT_NE(check(self, ins, {"r"}).find("cycle"), std::string::npos);
  // Subgraph nodes are checked against their schemas too.
  Pb softmax = node("Softmax", {"x"}, {"t"}).msg(5, attr_float("axis", 0));
  EXPECT_EQ(check(if_with(softmax, "x"), ins, {"r"}),
            "onnx: node Softmax (output 't'): attribute 'axis' is float, but Softmax-13 takes "
            "int");
}

TEST(OnnxCheck, BodiesMatchTheirNodes) {
  const std::vector<std::pair<std::string, int>> ins = {{"c", kBool}, {"x", kFloat}};
  // If: both branches give the node's outputs.
  Pb iff = if_reading("x", "Relu");
  EXPECT_EQ(check(iff, ins, {"r"}), "");
  Pb two = node("If", {"c"}, {"r", "q"}, "if");
  two.msg(5, attr_graph("then_branch", Pb().str(2, "t").msg(12, Pb().str(1, "x"))));
  two.msg(5, attr_graph("else_branch", Pb().str(2, "e").msg(12, Pb().str(1, "x"))));
  EXPECT_EQ(check(two, ins, {"r"}),
            "onnx: node If 'if': its then_branch has 1 outputs, If-13 with 2 outputs needs 2");
  // Loop(M, cond, v) -> (v_final, scan): body (i, cond, v) -> (cond, v, scan).
  Pb body = Pb().str(2, "body").msg(1, node("Identity", {"v"}, {"v2"}));
  body.msg(1, node("Identity", {"v"}, {"s"})).msg(1, node("Identity", {"cond_in"}, {"cond_out"}));
  body.msg(11, value_info("i", kInt64, {})).msg(11, value_info("cond_in", kBool, {}));
  body.msg(11, value_info("v", kFloat, {2}));
  Pb body_outs = Pb(body).msg(12, Pb().str(1, "cond_out")).msg(12, Pb().str(1, "v2"));
  Pb loop = node("Loop", {"", "c", "x"}, {"vf", "sf"}, "loop");
  EXPECT_EQ(check(Pb(loop).msg(5, attr_graph("body", Pb(body_outs).msg(12, Pb().str(1, "s")))), ins,
                  {"vf", "sf"}),
            "");
  EXPECT_EQ(check(loop.msg(5, attr_graph("body", body_outs)), ins, {"vf", "sf"}),
            "onnx: node Loop 'loop': its body has 2 outputs, Loop-13 with 2 outputs needs 3");
}

// Scan-8 (sequence_lens first) and Scan-9 over one state and one scan input: the body
// takes (state, element) and gives (state, scan output).
TEST(OnnxCheck, ScanBodies) {
  Pb body = Pb().str(2, "body").msg(1, node("Add", {"s_in", "e"}, {"s_out"}));
  body.msg(1, node("Identity", {"s_out"}, {"o"}));
  body.msg(11, value_info("s_in", kFloat, {2})).msg(11, value_info("e", kFloat, {2}));
  body.msg(12, Pb().str(1, "s_out")).msg(12, Pb().str(1, "o"));
  Pb scan8 = node("Scan", {"", "x", "y"}, {"sf", "so"}, "scan");
  scan8.msg(5, attr_graph("body", body)).msg(5, attr_int("num_scan_inputs", 1));
  EXPECT_EQ(check(scan8, kXY, {"sf", "so"}, 8), "");
  Pb scan9 = node("Scan", {"x", "y"}, {"sf", "so"}, "scan");
  scan9.msg(5, attr_graph("body", body)).msg(5, attr_int("num_scan_inputs", 1));
  EXPECT_EQ(check(scan9, kXY, {"sf", "so"}, 11), "");
  Pb extra = node("Scan", {"x", "y"}, {"sf", "so", "more"}, "scan");
  extra.msg(5, attr_graph("body", body)).msg(5, attr_int("num_scan_inputs", 1));
  EXPECT_EQ(check(extra, kXY, {"sf"}, 11),
            "onnx: node Scan 'scan': its body has 2 outputs, Scan-11 with 3 outputs needs 3");
  EXPECT_EQ(check(scan9, kXY, {"sf", "so"}, 8),
            "onnx: node Scan 'scan': its body has 2 inputs, Scan-8 with 2 inputs needs 1");
}

TEST(OnnxCheck, TensorValueFields) {
  // An initializer with raw_data and float_data both set; external data with data besides.
  Pb both = Pb().i64(1, 1).i64(2, kFloat).f32(4, 1).str(8, "w").str(9, std::string(4, '\0'));
  Pb g = graph({node("Add", {"x", "w"}, {"z"})}, kXY, {"z"});
  EXPECT_EQ(error_of(model(g.msg(5, both))),
            "onnx: initializer 'w': data in 2 fields (one allowed)");
  Pb ext = Pb().i64(1, 1).i64(2, kFloat).f32(4, 1).str(8, "w").i64(14, 1);
  Pb g2 = graph({node("Add", {"x", "w"}, {"z"})}, kXY, {"z"});
  EXPECT_NE(error_of(model(g2.msg(5, ext))).find("external data and 1 data fields"),
            std::string::npos);
}

}  // namespace
}  // namespace ferrite
