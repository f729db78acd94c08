// The sequence and optional ops (sequence_ops.h) against ONNX's definitions, computed here
// (the node suites test them through models: conformance), and the engine running a model
// whose values are sequences and optionals (a Loop carrying one, outputs of both kinds).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bindings/engine/engine.h"
#include "bindings/engine/sequence_ops.h"
#include "compiler/plan/error.h"
#include "tests/unit/support/error_of.h"
#include "tests/unit/support/node_of.h"
#include "tests/unit/support/source_dir.h"

namespace ferrite {
namespace {

using test::error_of;

const std::string kFixtures = test::source_dir() + "/tests/cli/fixtures/";

Node node(const std::string& op, std::map<std::string, Attribute> attrs = {}) {
  return test::node_of(op, std::move(attrs));
}

EngineValue f32(std::vector<int64_t> shape, const std::vector<float>& v) {
  return EngineValue::of(Tensor(DType::F32, std::move(shape), v.data()));
}

EngineValue i64(int64_t v) {
  return EngineValue::of(Tensor(DType::I64, {}, &v));
}

EngineValue run(const Node& n, const std::vector<const EngineValue*>& in,
                int64_t memory_limit = int64_t{1} << 30) {
  return run_sequence_op(n, n.op_type, 1, in, memory_limit)[0];
}

std::vector<float> floats(const Tensor& t) {
  return std::vector<float>(t.as<float>(), t.as<float>() + t.elements());
}

TEST(SequenceOpsTest, BuildReadAndChangeSequences) {
  const EngineValue a = f32({2}, {1, 2}), b = f32({1}, {3}), c = f32({3}, {4, 5, 6});
  const EngineValue ab = run(node("SequenceConstruct"), {&a, &b});
  ASSERT_TRUE(ab.is_sequence());
  EXPECT_EQ(ab.type_text(), "sequence<float32> of 2");
  // Insert at the end (no position), then at -1 (before the last): [a, b, c] and [a, b, c, c]
  // with the second c before the first.
  const EngineValue abc = run(node("SequenceInsert"), {&ab, &c});
  const EngineValue minus_one = i64(-1);
  const EngineValue abcc = run(node("SequenceInsert"), {&abc, &a, &minus_one});
  ASSERT_EQ(abcc.items("").size(), 4u);
  EXPECT_EQ(floats(*abcc.items("")[2]), (std::vector<float>{1, 2}));
  EXPECT_EQ(floats(*abcc.items("")[3]), (std::vector<float>{4, 5, 6}));
  // Items are shared, not copied.
  EXPECT_EQ(abcc.items("")[0].get(), &a.tensor(""));
  const EngineValue zero = i64(0), two = i64(2), three = i64(3);
  EXPECT_EQ(floats(run(node("SequenceAt"), {&abc, &two}).tensor("")),
            (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(floats(run(node("SequenceAt"), {&abc, &minus_one}).tensor("")),
            (std::vector<float>{4, 5, 6}));
  const EngineValue bc = run(node("SequenceErase"), {&abc, &zero});
  EXPECT_EQ(floats(*bc.items("")[0]), (std::vector<float>{3}));
  const EngineValue ab2 = run(node("SequenceErase"), {&abc});  // the last by default
  EXPECT_EQ(ab2.items("").size(), 2u);
  EXPECT_EQ(run(node("SequenceLength"), {&abc}).tensor("").as<int64_t>()[0], 3);
  // ConcatFromSequence along axis 0: [1, 2, 3, 4, 5, 6].
  const EngineValue joined = run(node("ConcatFromSequence", {{"axis", attr_i(0)}}), {&abc});
  EXPECT_EQ(floats(joined.tensor("")), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  const EngineValue empty = run(node("SequenceEmpty", {{"dtype", attr_i(7)}}), {});
  EXPECT_EQ(empty.type_text(), "sequence<int64> of 0");
  // Errors name the node and the value.
  EXPECT_EQ(error_of([&] {
              run(node("SequenceAt"), {&abc, &three});
            }),
            "SequenceAt: position 3 out of range for a sequence of 3");
  EXPECT_EQ(error_of([&] {
              run(node("SequenceInsert"), {&abc, &zero});
            }),
            "SequenceInsert: a int64 tensor in a sequence of float32");
  EXPECT_EQ(error_of([&] { run(node("SequenceLength"), {&a}); }),
            "SequenceLength: input 0 is float32[2], not a sequence");
  EXPECT_EQ(error_of([&] {
              run(node("ConcatFromSequence", {{"axis", attr_i(1)}}), {&abc});
            }),
            "ConcatFromSequence: axis 1 out of range for rank 1");
  // Its output counts against the memory limit (a sequence may share one tensor many times).
  EXPECT_EQ(error_of([&] {
              run(node("ConcatFromSequence", {{"axis", attr_i(0)}}), {&abcc}, 16);
            }),
            "ConcatFromSequence: its output needs 32 bytes, more than the memory limit of 16 "
            "bytes; set it with --memory-limit or FERRITE_MEMORY_LIMIT");
}

TEST(SequenceOpsTest, ConcatWithNewAxisAndSplitBack) {
  // Two [2, 3] tensors stacked on a new axis 1: [2, 2, 3], row r of item k at [r, k].
  const EngineValue x = f32({2, 3}, {0, 1, 2, 3, 4, 5}), y = f32({2, 3}, {6, 7, 8, 9, 10, 11});
  const EngineValue xy = run(node("SequenceConstruct"), {&x, &y});
  const EngineValue stacked =
      run(node("ConcatFromSequence", {{"axis", attr_i(1)}, {"new_axis", attr_i(1)}}), {&xy});
  EXPECT_EQ(stacked.tensor("").shape(), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(floats(stacked.tensor("")), (std::vector<float>{0, 1, 2, 6, 7, 8, 3, 4, 5, 9, 10, 11}));
  // Items of different ranks do not join (a [2, 3] and a scalar, on a new axis 2).
  const EngineValue scalar = f32({}, {1});
  const EngineValue mixed = run(node("SequenceConstruct"), {&x, &scalar});
  EXPECT_EQ(
      error_of([&] {
        run(node("ConcatFromSequence", {{"axis", attr_i(2)}, {"new_axis", attr_i(1)}}), {&mixed});
      }),
      "ConcatFromSequence: cannot join float32[] to float32[2,3] along axis 2");
  // Split [2, 2, 3] along axis 1 without sizes and keepdims 0: back to x and y.
  const EngineValue back =
      run(node("SplitToSequence", {{"axis", attr_i(1)}, {"keepdims", attr_i(0)}}), {&stacked});
  ASSERT_EQ(back.items("").size(), 2u);
  EXPECT_EQ(floats(*back.items("")[0]), floats(x.tensor("")));
  EXPECT_EQ(floats(*back.items("")[1]), floats(y.tensor("")));
  // Chunks of 2 along axis 1 of x ([2, 3]): [2, 2] and [2, 1]; sizes [1, 2] likewise.
  const EngineValue two = i64(2);
  const EngineValue chunks = run(node("SplitToSequence", {{"axis", attr_i(1)}}), {&x, &two});
  ASSERT_EQ(chunks.items("").size(), 2u);
  EXPECT_EQ(floats(*chunks.items("")[0]), (std::vector<float>{0, 1, 3, 4}));
  EXPECT_EQ(floats(*chunks.items("")[1]), (std::vector<float>{2, 5}));
  const std::vector<int64_t> sizes = {1, 3};
  const EngineValue bad = EngineValue::of(Tensor(DType::I64, {2}, sizes.data()));
  EXPECT_EQ(error_of([&] {
              run(node("SplitToSequence", {{"axis", attr_i(1)}}), {&x, &bad});
            }),
            "SplitToSequence: split sizes sum past the 3 the axis has");
  const std::vector<int64_t> short_sizes = {1, 1};
  const EngineValue few = EngineValue::of(Tensor(DType::I64, {2}, short_sizes.data()));
  EXPECT_EQ(error_of([&] {
              run(node("SplitToSequence", {{"axis", attr_i(1)}}), {&x, &few});
            }),
            "SplitToSequence: split sizes sum to 2, the axis has 3");
}

TEST(SequenceOpsTest, OptionalsHoldAValueOrNone) {
  const EngineValue x = f32({1}, {7}), none;
  const EngineValue some = run(node("Optional"), {&x});
  EXPECT_TRUE(some.is_tensor());
  EXPECT_TRUE(run(node("Optional"), {}).is_none());
  EXPECT_EQ(run(node("OptionalHasElement"), {&some}).tensor("").as<uint8_t>()[0], 1);
  EXPECT_EQ(run(node("OptionalHasElement"), {&none}).tensor("").as<uint8_t>()[0], 0);
  EXPECT_EQ(run(node("OptionalHasElement"), {}).tensor("").as<uint8_t>()[0], 0);
  EXPECT_EQ(floats(run(node("OptionalGetElement"), {&some}).tensor("")), (std::vector<float>{7}));
  EXPECT_EQ(error_of([&] { run(node("OptionalGetElement"), {&none}); }),
            "OptionalGetElement: the optional input holds no value");
}

TEST(SequenceOpsTest, TheEngineRunsALoopThatBuildsASequence) {
  // seq_loop: n int64[], x float32[2] -> Loop n times: seq = SequenceInsert(seq, x * i) from an
  // empty sequence; outputs seq (a sequence) and all = ConcatFromSequence(seq, axis 0).
  for (const char* backend : {"reference", "portable"}) {
    EngineOptions options;
    options.session.backend = backend;
    std::unique_ptr<Engine> e = Engine::from_file(kFixtures + "seq_loop.onnx", options);
    EXPECT_EQ(e->output_container(0), Container::Sequence);
    const std::vector<float> xv = {1, -2};
    const Tensor x(DType::F32, {2}, xv.data());
    const int64_t n = 3;
    const Tensor nt(DType::I64, {}, &n);
    const EngineValue xval = EngineValue::borrowed(x), nval = EngineValue::borrowed(nt);
    const std::vector<EngineValue> out = e->run_values({{"n", &nval}, {"x", &xval}});
    ASSERT_EQ(out.size(), 2u);
    ASSERT_EQ(out[0].items("").size(), 3u) << backend;
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(floats(*out[0].items("")[static_cast<size_t>(i)]),
                (std::vector<float>{1.f * static_cast<float>(i), -2.f * static_cast<float>(i)}));
    }
    EXPECT_EQ(floats(out[1].tensor("")), (std::vector<float>{0, 0, 1, -2, 2, -4}));
    // The tensor door names the output it cannot give.
    EXPECT_EQ(error_of([&] {
                e->run({{"n", &nt}, {"x", &x}});
              }),
              "output 'seq' is sequence<float32> of 3, not a tensor");
  }
}

}  // namespace
}  // namespace ferrite
