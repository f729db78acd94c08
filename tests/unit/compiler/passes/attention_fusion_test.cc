// fuse_attention: the plain-op attention pattern (MatMul, scale, mask Add, Softmax, MatMul)
// becomes one Attention node, lowered to the fused Attention extern; every backend gives
// the unfused graph's values. Patterns it must leave alone stay as they are.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/plan/externs/extern_op.h"
#include "tests/unit/compiler/lower/run_graph.h"
#include "tests/unit/compiler/passes/fusion_case.h"

namespace ferrite {
namespace {

using fusion_test::Case;
using fusion_test::count_ops;
using fusion_test::expect_same_values;
using fusion_test::make_case;

int count_externs(const Plan& p, ExternOp op) {
  int n = 0;
  for (const ExternCall& e : p.externs) n += e.op == op;
  return n;
}

// q [1, 3, S, 4] against keys [1, 3, T, 4] stored as [1, T, 3, 4] (a BERT split), scaled by
// Div, an additive padding mask [1, 1, 1, T], values [1, 3, T, 5].
void bert_attention(GraphBuilder& b, int64_t s, int64_t t, bool mask) {
  Value* q = b.input("q", DType::F32, {1, 3, s, 4});
  Value* k = b.input("k", DType::F32, {1, t, 3, 4});
  Value* v = b.input("v", DType::F32, {1, 3, t, 5});
  Value* kt = b.op("Transpose", {k}, {{"perm", attr_is({0, 2, 3, 1})}});
  Value* scores = b.op("MatMul", {q, kt});
  scores = b.op("Div", {scores, b.constant_f32({}, {2.0f})});
  if (mask) {
    std::vector<float> m(static_cast<size_t>(t), 0.0f);
    m.back() = -10000.0f;
    scores = b.op("Add", {b.constant_f32({1, 1, 1, t}, m), scores});
  }
  Value* probs = b.op("Softmax", {scores}, {{"axis", attr_i(-1)}});
  b.output(b.op("MatMul", {probs, v}));
}

TEST(FuseAttention, BertPatternBecomesOneExtern) {
  for (bool mask : {false, true}) {
    SCOPED_TRACE(mask ? "mask" : "no mask");
    Case c = make_case([mask](GraphBuilder& b) { bert_attention(b, 7, 9, mask); });
    EXPECT_EQ(count_ops(*c.fused, "Attention"), 1);
    EXPECT_EQ(count_ops(*c.fused, "Softmax"), 0);
    EXPECT_EQ(count_ops(*c.fused, "MatMul"), 0);
    EXPECT_EQ(count_ops(*c.unfused, "Softmax"), 1);
    const lower_test::Compiled r = lower_test::run_graph(*c.fused, c.inputs, "reference");
    EXPECT_EQ(count_externs(r.plan, ExternOp::Attention), 1);
    EXPECT_EQ(count_externs(r.plan, ExternOp::MatMul), 0);
    expect_same_values(c);
  }
}

TEST(FuseAttention, LongSequencesRunInTiles) {
  // More query rows and keys than one tile of the portable kernel holds.
  Case c = make_case([](GraphBuilder& b) { bert_attention(b, 70, 300, true); });
  EXPECT_EQ(count_ops(*c.fused, "Attention"), 1);
  expect_same_values(c, 5e-5f);
}

TEST(FuseAttention, ScalesOnQueryAndKeysAsTorchExportsThem) {
  // torch's scaled_dot_product_attention: q * sqrt(s) @ (k^T * sqrt(s)), no mask.
  Case c = make_case([](GraphBuilder& b) {
    Value* q = b.input("q", DType::F32, {2, 2, 5, 8});
    Value* k = b.input("k", DType::F32, {2, 2, 6, 8});
    Value* v = b.input("v", DType::F32, {2, 2, 6, 3});
    Value* half = b.constant_f32({}, {0.5f});
    Value* qs = b.op("Mul", {q, half});
    Value* kt = b.op("Mul", {b.op("Transpose", {k}, {{"perm", attr_is({0, 1, 3, 2})}}), half});
    Value* probs = b.op("Softmax", {b.op("MatMul", {qs, kt})}, {{"axis", attr_i(3)}});
    b.output(b.op("MatMul", {probs, v}));
  });
  EXPECT_EQ(count_ops(*c.fused, "Attention"), 1);
  EXPECT_EQ(count_ops(*c.fused, "Mul"), 0);
  expect_same_values(c);
}

TEST(FuseAttention, ShapesTheExternDoesNotTakeRunUnfused) {
  // Keys and values broadcast over the heads: the node is fused (shapes are unknown to the
  // pass), its lowering falls back to the matched nodes.
  Case c = make_case([](GraphBuilder& b) {
    Value* q = b.input("q", DType::F32, {1, 3, 4, 5});
    Value* kt = b.input("kt", DType::F32, {1, 1, 5, 6});
    Value* v = b.input("v", DType::F32, {1, 1, 6, 2});
    Value* probs = b.op("Softmax", {b.op("MatMul", {q, kt})}, {{"axis", attr_i(-1)}});
    b.output(b.op("MatMul", {probs, v}));
  });
  EXPECT_EQ(count_ops(*c.fused, "Attention"), 1);
  const lower_test::Compiled r = lower_test::run_graph(*c.fused, c.inputs, "reference");
  EXPECT_EQ(count_externs(r.plan, ExternOp::Attention), 0);
  expect_same_values(c);
}

TEST(FuseAttention, RowsMaskedEverywhereAreNaNAsSoftmaxMakesThem) {
  Case c = make_case([](GraphBuilder& b) {
    Value* q = b.input("q", DType::F32, {1, 2, 3, 4});
    Value* kt = b.input("kt", DType::F32, {1, 2, 4, 5});
    Value* v = b.input("v", DType::F32, {1, 2, 5, 3});
    std::vector<float> m(15, 0.0f);
    for (int j = 0; j < 5; ++j) m[5 + j] = -std::numeric_limits<float>::infinity();  // row 1
    m[2] = -std::numeric_limits<float>::infinity();
    Value* scores = b.op("Add", {b.op("MatMul", {q, kt}), b.constant_f32({3, 5}, m)});
    b.output(b.op("MatMul", {b.op("Softmax", {scores}, {{"axis", attr_i(-1)}}), v}));
  });
  EXPECT_EQ(count_ops(*c.fused, "Attention"), 1);
  for (const std::string& backend : backend_names()) {
    SCOPED_TRACE(backend);
    const lower_test::Compiled r = lower_test::run_graph(*c.fused, c.inputs, backend);
    EXPECT_EQ(count_externs(r.plan, ExternOp::Attention), 1);
    const std::vector<float> y = lower_test::values_of<float>(r.outputs[0]);
    ASSERT_EQ(y.size(), 18u);
    for (size_t i = 0; i < y.size(); ++i)  // [1, 2, 3, 3]: row 1 of each head is NaN
      EXPECT_EQ(std::isnan(y[i]), (i / 3) % 3 == 1) << i;
  }
}

TEST(FuseAttention, LeavesScoresThatAreReadElsewhere) {
  Case c = make_case([](GraphBuilder& b) {
    Value* q = b.input("q", DType::F32, {1, 2, 4, 4});
    Value* kt = b.input("kt", DType::F32, {1, 2, 4, 6});
    Value* v = b.input("v", DType::F32, {1, 2, 6, 4});
    Value* probs = b.op("Softmax", {b.op("MatMul", {q, kt})}, {{"axis", attr_i(-1)}});
    b.output(b.op("MatMul", {probs, v}));
    b.output(probs);  // the probabilities are an output too
  });
  EXPECT_EQ(count_ops(*c.fused, "Attention"), 0);
  EXPECT_EQ(count_ops(*c.fused, "Softmax"), 1);
  expect_same_values(c);
}

TEST(FuseAttention, LeavesAScaleAfterTheMask) {
  // softmax((q k^T + m) * c) scales the mask too, which Attention's scale would not.
  Case c = make_case([](GraphBuilder& b) {
    Value* q = b.input("q", DType::F32, {1, 2, 4, 4});
    Value* kt = b.input("kt", DType::F32, {1, 2, 4, 6});
    Value* v = b.input("v", DType::F32, {1, 2, 6, 4});
    Value* m = b.input("m", DType::F32, {1, 1, 4, 6});
    Value* scores = b.op("Add", {b.op("MatMul", {q, kt}), m});
    scores = b.op("Mul", {scores, b.constant_f32({}, {3.0f})});
    b.output(b.op("MatMul", {b.op("Softmax", {scores}, {{"axis", attr_i(-1)}}), v}));
  });
  EXPECT_EQ(count_ops(*c.fused, "Attention"), 0);
  expect_same_values(c);
}

TEST(FuseAttention, LeavesASoftmaxOverAnotherAxis) {
  Case c = make_case([](GraphBuilder& b) {
    Value* q = b.input("q", DType::F32, {1, 2, 4, 4});
    Value* kt = b.input("kt", DType::F32, {1, 2, 4, 4});
    Value* v = b.input("v", DType::F32, {1, 2, 4, 4});
    Value* probs = b.op("Softmax", {b.op("MatMul", {q, kt})}, {{"axis", attr_i(2)}});
    b.output(b.op("MatMul", {probs, v}));
  });
  EXPECT_EQ(count_ops(*c.fused, "Attention"), 0);
  expect_same_values(c);
}

}  // namespace
}  // namespace ferrite
