// The ops on string tensors (string_ops.h) against ONNX's definitions (Python's str.split,
// numpy's broadcasting, LabelEncoder's defaults), worked out here by hand, and the engine
// running a model whose values are strings from its input to its outputs, through the ops
// that move strings (compiled on the elements' positions) and back to numbers.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bindings/engine/engine.h"
#include "bindings/engine/string_ops.h"
#include "compiler/plan/error.h"
#include "tests/unit/support/error_of.h"
#include "tests/unit/support/node_of.h"
#include "tests/unit/support/source_dir.h"

namespace ferrite {
namespace {

using test::error_of;
using Strings = std::vector<std::string>;

const std::string kFixtures = test::source_dir() + "/tests/cli/fixtures/";

Node node(const std::string& op, std::map<std::string, Attribute> attrs = {}) {
  return test::node_of(op, std::move(attrs));
}

EngineValue text(std::vector<int64_t> shape, Strings s) {
  return EngineValue::of(Tensor(std::move(shape), std::move(s)));
}

Attribute attr_strings(Strings s) {
  Attribute a;
  a.kind = AttrKind::Strings;
  a.strings = std::move(s);
  return a;
}

std::vector<EngineValue> run(const Node& n, const std::vector<const EngineValue*>& in,
                             size_t outputs = 1, int64_t memory_limit = int64_t{1} << 30) {
  return run_string_op(n, n.op_type, outputs, in, memory_limit);
}

// The first output, copied out of the values.
Tensor first(const Node& n, const std::vector<const EngineValue*>& in) {
  return Tensor::copy_of(run(n, in)[0].tensor(""));
}

std::vector<int64_t> ints(const Tensor& t) {
  return std::vector<int64_t>(t.as<int64_t>(), t.as<int64_t>() + t.elements());
}

TEST(StringOpsTest, SplitAsPythonDoes) {
  const EngineValue x = text({3}, {"a,b,,c", "", ",x"});
  std::vector<EngineValue> out = run(node("StringSplit", {{"delimiter", attr_s(",")}}), {&x}, 2);
  // "a,b,,c" -> a b "" c; "" -> "" (one piece); ",x" -> "" x. Padded to 4 pieces.
  EXPECT_EQ(out[0].tensor("").shape(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(out[0].tensor("").strings(),
            (Strings{"a", "b", "", "c", "", "", "", "", "", "x", "", ""}));
  EXPECT_EQ(ints(out[1].tensor("")), (std::vector<int64_t>{4, 1, 2}));
  // No delimiter: runs of whitespace, none at the ends; "" and "  " have no pieces.
  const EngineValue y = text({2, 2}, {"  to be\tor  ", "", "  ", "x"});
  out = run(node("StringSplit"), {&y}, 2);
  EXPECT_EQ(out[0].tensor("").shape(), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(out[0].tensor("").strings(),
            (Strings{"to", "be", "or", "", "", "", "", "", "", "x", "", ""}));
  EXPECT_EQ(ints(out[1].tensor("")), (std::vector<int64_t>{3, 0, 0, 1}));
  // maxsplit: at most that many splits, the rest whole (trailing whitespace dropped).
  out = run(node("StringSplit", {{"maxsplit", attr_i(1)}}), {&y}, 2);
  EXPECT_EQ(out[0].tensor("").strings()[0], "to");
  EXPECT_EQ(out[0].tensor("").strings()[1], "be\tor");
  const EngineValue abc = text({1}, {"a--b--c"});
  out = run(node("StringSplit", {{"delimiter", attr_s("--")}, {"maxsplit", attr_i(1)}}), {&abc}, 2);
  EXPECT_EQ(out[0].tensor("").strings(), (Strings{"a", "b--c"}));
  // An empty tensor gives [.., 0].
  const EngineValue none = text({0}, {});
  out = run(node("StringSplit"), {&none}, 2);
  EXPECT_EQ(out[0].tensor("").shape(), (std::vector<int64_t>{0, 0}));
}

TEST(StringOpsTest, ConcatAndEqualBroadcast) {
  const EngineValue x = text({2, 1}, {"a", "b"}), y = text({3}, {"1", "2", ""});
  const Tensor joined = first(node("StringConcat"), {&x, &y});
  EXPECT_EQ(joined.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(joined.strings(), (Strings{"a1", "a2", "a", "b1", "b2", "b"}));
  const EngineValue z = text({}, {"b2"});
  const EngineValue j = EngineValue::of(Tensor::copy_of(joined));
  const Tensor same = first(node("Equal"), {&j, &z});
  EXPECT_EQ(same.dtype(), DType::Bool);
  EXPECT_EQ(std::vector<uint8_t>(same.as<uint8_t>(), same.as<uint8_t>() + 6),
            (std::vector<uint8_t>{0, 0, 0, 0, 1, 0}));
  const EngineValue w = text({2}, {"a", "b"});
  EXPECT_EQ(error_of([&] {
              run(node("StringConcat"), {&w, &y});
            }),
            "StringConcat: shapes do not broadcast (dim 0: 2 and 3)");
  const EngineValue f = EngineValue::of(Tensor(DType::F32, {2}));
  EXPECT_EQ(error_of([&] {
              run(node("StringConcat"), {&w, &f});
            }),
            "StringConcat: input 1 must be strings, got float32[2]");
}

TEST(StringOpsTest, NormalizerDropsStopWordsAndChangesCase) {
  const EngineValue x = text({1, 4}, {"Monday", "is", "MONDAY", "Fun"});
  Node n = node("StringNormalizer",
                {{"case_change_action", attr_s("UPPER")}, {"stopwords", attr_strings({"monday"})}});
  Tensor y = first(n, {&x});  // not case sensitive: both Mondays go
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(y.strings(), (Strings{"IS", "FUN"}));
  n.attrs["is_case_sensitive"] = attr_i(1);
  y = first(n, {&x});  // case sensitive: none matches "monday"
  EXPECT_EQ(y.strings(), (Strings{"MONDAY", "IS", "MONDAY", "FUN"}));
  const EngineValue all = text({1}, {"monday"});
  y = first(node("StringNormalizer", {{"stopwords", attr_strings({"monday"})}}), {&all});
  EXPECT_EQ(y.strings(), (Strings{""}));  // nothing left: one empty string
  const EngineValue cube = text({1, 1, 1}, {"a"});
  EXPECT_EQ(error_of([&] { run(node("StringNormalizer"), {&cube}); }),
            "StringNormalizer: X must be [C] or [1, C], got string[1,1,1]");
}

TEST(StringOpsTest, CastsAndLabelEncoders) {
  const std::vector<float> v = {0.1f, -2.5f, 1e20f};
  const EngineValue f = EngineValue::of(Tensor(DType::F32, {3}, v.data()));
  const Tensor s = first(node("Cast", {{"to", attr_i(8)}}), {&f});
  EXPECT_EQ(s.strings(), (Strings{"0.1", "-2.5", "1e+20"}));  // the shortest that reads back
  const EngineValue sv = EngineValue::of(Tensor::copy_of(s));
  const Tensor back = first(node("Cast", {{"to", attr_i(1)}}), {&sv});
  EXPECT_EQ(std::vector<float>(back.as<float>(), back.as<float>() + 3), v);
  const EngineValue bad = text({1}, {"12abc"});
  EXPECT_EQ(error_of([&] {
              run(node("Cast", {{"to", attr_i(7)}}), {&bad});
            }),
            "Cast: '12abc' is not an integer of int64");
  // Strings to numbers, with the default for a missing key; numbers to strings.
  Node enc = node("LabelEncoder",
                  {{"keys_strings", attr_strings({"a", "b"})}, {"values_int64s", attr_is({5, 6})}});
  enc.domain = "ai.onnx.ml";
  const EngineValue x = text({2, 2}, {"b", "z", "a", "a"});
  const Tensor ids = first(enc, {&x});
  EXPECT_EQ(ids.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(ints(ids), (std::vector<int64_t>{6, -1, 5, 5}));
  Node dec = node("LabelEncoder", {{"keys_int64s", attr_is({5, 6})},
                                   {"values_strings", attr_strings({"five", "six"})}});
  dec.domain = "ai.onnx.ml";
  const EngineValue idv = EngineValue::of(Tensor::copy_of(ids));
  EXPECT_EQ(first(dec, {&idv}).strings(), (Strings{"six", "_Unused", "five", "five"}));
  EXPECT_EQ(error_of([&] { run(enc, {&idv}); }), "LabelEncoder: X of int64 for string keys");
}

TEST(StringOpsTest, OutputsPastTheMemoryLimitFail) {
  const EngineValue x = text({2}, {std::string(1000, 'a'), "b"});
  EXPECT_NE(error_of([&] {
              run(node("StringConcat"), {&x, &x}, 1, 1000);
            }).find("limit"),
            std::string::npos);
  // A broadcast of 2^40 elements fails before anything of that size is made.
  const std::vector<std::string> many(1 << 20, "x");
  const EngineValue col = text({1 << 20, 1}, many), row = text({1, 1 << 20}, many);
  EXPECT_NE(error_of([&] { run(node("Equal"), {&col, &row}); }).find("limit"), std::string::npos);
  EXPECT_NE(error_of([&] {
              run(node("StringConcat"), {&col, &row});
            }).find("limit"),
            std::string::npos);
}

// strings.onnx (make_fixtures.py): text -> lower case -> words -> their ids, and back.
TEST(StringOpsTest, TheEngineRunsAModelOnStrings) {
  std::unique_ptr<Engine> e = Engine::from_file(kFixtures + "strings.onnx", EngineOptions());
  EXPECT_TRUE(e->runs_in_parts());
  const Tensor in({3}, {"Hello World", "ferrite  is FAST", "x"});
  std::vector<Tensor> out = e->run({{"text", &in}});
  ASSERT_EQ(out.size(), 5u);
  // Split by ' ': [hello world], [ferrite, '', is, fast], [x]; transposed and flattened.
  EXPECT_EQ(out[3].strings(),
            (Strings{"hello", "ferrite", "x", "world", "", "", "", "is", "", "", "fast", ""}));
  EXPECT_EQ(ints(out[0]), (std::vector<int64_t>{10, 30, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(out[1].strings(), (Strings{"hello world!", "ferrite  is fast!", "x!"}));
  EXPECT_EQ(ints(out[2]), (std::vector<int64_t>{2, 4, 1}));
  EXPECT_EQ(std::vector<uint8_t>(out[4].as<uint8_t>(), out[4].as<uint8_t>() + 3),
            (std::vector<uint8_t>{1, 0, 0}));
  // Another batch size: the words' axis changes too.
  const Tensor one({1}, {"WORLD"});
  out = e->run({{"text", &one}});
  EXPECT_EQ(out[3].strings(), (Strings{"world"}));
  EXPECT_EQ(ints(out[0]), (std::vector<int64_t>{20}));
  // A tensor of numbers where strings are declared is named.
  const Tensor f(DType::F32, {1});
  EXPECT_EQ(error_of([&] {
              e->run({{"text", &f}});
            }),
            "input 'text': expected string, got float32");
}

}  // namespace
}  // namespace ferrite
