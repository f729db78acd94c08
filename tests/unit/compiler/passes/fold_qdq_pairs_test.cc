// fold_qdq_pairs: which Q(f(DQ(q))) chains become f on the integers, the bounds an integer
// Clip gets, and the Clip absorbed into a QLinearConv (their values against numpy formulas
// are tests/models/quant_check.py's qdq_conv_relu6_pool).
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/graph/ferrite_ops.h"
#include "compiler/graph/graph.h"
#include "compiler/passes/fold_qdq_pairs.h"

namespace ferrite {
namespace {

const Node* only(const Graph& g, const std::string& op) {
  const Node* found = nullptr;
  for (const auto& n : g.nodes) {
    if (n->op_type != op) continue;
    EXPECT_EQ(found, nullptr) << "two " << op << " nodes";
    found = n.get();
  }
  return found;
}

int count_ops(const Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes) n += node->op_type == op;
  return n;
}

struct Chain {
  std::string op = "Clip";  // f, or "" for none
  float lo = 0, hi = 6;     // Clip's bounds
  float q_scale = 0.05f;    // the QuantizeLinear's scale (the DequantizeLinear's is 0.05)
  bool from_qlinear = false;
};

// x (uint8 [1, 2, 4, 4], or a QLinearConv of it) -> DequantizeLinear -> f ->
// QuantizeLinear -> y.
std::unique_ptr<Graph> chain(const Chain& o) {
  GraphBuilder b;
  const float s = 0.05f, lo = o.lo, hi = o.hi;
  const uint8_t z = 100;
  Value* q = b.input("x", DType::U8, {1, 2, 4, 4});
  Value* ds = b.constant("ds", DType::F32, {}, &s);
  Value* dz = b.constant("dz", DType::U8, {}, &z);
  if (o.from_qlinear) {
    const int8_t w[4] = {1, 2, 3, 4};
    const float ws[2] = {0.1f, 0.2f};
    const int8_t wz[2] = {0, 0};
    q = b.op("QLinearConv",
             {q, ds, dz, b.constant("w", DType::I8, {2, 2, 1, 1}, w),
              b.constant("ws", DType::F32, {2}, ws), b.constant("wz", DType::I8, {2}, wz), ds, dz});
  }
  Value* v = b.op("DequantizeLinear", {q, ds, dz});
  if (o.op == "Clip") {
    v = b.op("Clip",
             {v, b.constant("lo", DType::F32, {}, &lo), b.constant("hi", DType::F32, {}, &hi)});
  } else if (o.op == "MaxPool") {
    v = b.op("MaxPool", {v}, {{"kernel_shape", attr_is({2, 2})}});
  } else if (!o.op.empty()) {
    v = b.op(o.op, {v});
  }
  Value* y = b.op("QuantizeLinear", {v, b.constant("qs", DType::F32, {}, &o.q_scale), dz});
  b.output(y);
  return b.finish();
}

std::vector<int64_t> clip_bounds(const Node* clip) {
  return {clip->input(1)->data->int_at(0), clip->input(2)->data->int_at(0)};
}

TEST(FoldQdqPairs, ClipBecomesAnIntegerClipWithQuantizedBounds) {
  std::unique_ptr<Graph> g = chain({});
  fold_qdq_pairs(*g);
  g->validate();
  EXPECT_EQ(count_ops(*g, "QuantizeLinear"), 0);
  EXPECT_EQ(count_ops(*g, "DequantizeLinear"), 0);
  const Node* clip = only(*g, "Clip");
  ASSERT_NE(clip, nullptr);
  EXPECT_EQ(clip->input(0)->name, "x");
  EXPECT_EQ(clip->input(1)->type.dtype, DType::U8);
  // Q(0) = 100, Q(6) = 6 / 0.05 + 100 = 220.
  EXPECT_EQ(clip_bounds(clip), (std::vector<int64_t>{100, 220}));
}

TEST(FoldQdqPairs, ReluCoveringTheRangeOrNothingLeavesAnIdentity) {
  for (const char* op : {"", "Relu"}) {
    Chain o;
    o.op = op;
    std::unique_ptr<Graph> g = chain(o);
    fold_qdq_pairs(*g);
    g->validate();
    EXPECT_EQ(count_ops(*g, "QuantizeLinear"), 0) << op;
    // Relu: Q(0) = 100, the zero point: still a lower bound.
    if (std::string(op) == "Relu") {
      const Node* clip = only(*g, "Clip");
      ASSERT_NE(clip, nullptr);
      EXPECT_EQ(clip_bounds(clip), (std::vector<int64_t>{100, 255}));
    } else {
      EXPECT_EQ(count_ops(*g, "Identity"), 1);
    }
  }
}

TEST(FoldQdqPairs, MaxPoolRunsOnTheIntegers) {
  Chain o;
  o.op = "MaxPool";
  std::unique_ptr<Graph> g = chain(o);
  fold_qdq_pairs(*g);
  g->validate();
  const Node* pool = only(*g, "MaxPool");
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->input(0)->name, "x");
  EXPECT_EQ(pool->attr_ints("kernel_shape"), (std::vector<int64_t>{2, 2}));
}

// The pooled float value read elsewhere too (resnet18's residual Add): that reader reads
// DequantizeLinear of the integer pool, and the float pool is gone; unless the float value
// is a graph output itself.
TEST(FoldQdqPairs, AnotherReaderOfAMovedValueReadsItsDequantization) {
  for (bool float_output : {false, true}) {
    GraphBuilder b;
    const float s = 0.05f;
    const uint8_t z = 100;
    Value* x = b.input("x", DType::U8, {1, 2, 4, 4});
    Value* t = b.input("t", DType::F32, {1, 2, 3, 3});
    Value* ds = b.constant("ds", DType::F32, {}, &s);
    Value* dz = b.constant("dz", DType::U8, {}, &z);
    Value* pooled = b.op("MaxPool", {b.op("DequantizeLinear", {x, ds, dz})},
                         {{"kernel_shape", attr_is({2, 2})}});
    b.output(b.op("QuantizeLinear", {pooled, ds, dz}));
    b.output(b.op("Add", {pooled, t}));
    if (float_output) b.output(pooled);
    std::unique_ptr<Graph> g = b.finish();
    fold_qdq_pairs(*g);
    g->validate();
    EXPECT_EQ(count_ops(*g, "MaxPool"), float_output ? 2 : 1) << float_output;
    const Node* add = only(*g, "Add");
    ASSERT_NE(add, nullptr);
    const Node* dq = add->input(0)->producer;
    ASSERT_NE(dq, nullptr);
    EXPECT_EQ(dq->op_type, "DequantizeLinear");
    ASSERT_NE(dq->input(0)->producer, nullptr);
    EXPECT_EQ(dq->input(0)->producer->op_type, "MaxPool");
    EXPECT_EQ(dq->input(0)->producer->input(0)->name, "x");
    EXPECT_EQ(dq->input(1), ds);
  }
}

TEST(FoldQdqPairs, ConcatOfPairsWithOneScaleConcatenatesTheIntegers) {
  for (bool same : {true, false}) {
    GraphBuilder b;
    const float s = 0.05f, other = 0.07f;
    const uint8_t z = 100;
    Value* a = b.input("a", DType::U8, {2, 3});
    Value* c = b.input("c", DType::U8, {2, 3});
    Value* ds = b.constant("ds", DType::F32, {}, &s);
    Value* dz = b.constant("dz", DType::U8, {}, &z);
    Value* cs = same ? ds : b.constant("cs", DType::F32, {}, &other);
    Value* v = b.op("Concat",
                    {b.op("DequantizeLinear", {a, ds, dz}), b.op("DequantizeLinear", {c, cs, dz})},
                    {{"axis", attr_i(1)}});
    b.output(b.op("QuantizeLinear", {v, ds, dz}));
    std::unique_ptr<Graph> g = b.finish();
    fold_qdq_pairs(*g);
    g->validate();
    EXPECT_EQ(count_ops(*g, "QuantizeLinear"), same ? 0 : 1);
    if (!same) continue;
    const Node* concat = only(*g, "Concat");
    ASSERT_NE(concat, nullptr);
    EXPECT_EQ(concat->input(0)->name, "a");
    EXPECT_EQ(concat->input(1)->name, "c");
    EXPECT_EQ(concat->attr_int("axis", 0), 1);
  }
}

TEST(FoldQdqPairs, AClipAfterAQLinearConvBecomesItsSaturationRange) {
  Chain o;
  o.from_qlinear = true;
  std::unique_ptr<Graph> g = chain(o);
  fold_qdq_pairs(*g);
  g->validate();
  EXPECT_EQ(count_ops(*g, "Clip"), 0);
  const Node* conv = only(*g, "QLinearConv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->outputs[0], g->outputs[0]);
  EXPECT_EQ(conv->attr_ints(kSaturateAttr), (std::vector<int64_t>{100, 220}));
}

TEST(FoldQdqPairs, LeavesPairsOfOtherParametersAndOtherOps) {
  Chain scale;
  scale.q_scale = 0.1f;  // a requantization: stays dequantize -> clip -> quantize
  Chain sigmoid;
  sigmoid.op = "Sigmoid";
  for (const Chain& o : {scale, sigmoid}) {
    std::unique_ptr<Graph> g = chain(o);
    fold_qdq_pairs(*g);
    g->validate();
    EXPECT_EQ(count_ops(*g, "QuantizeLinear"), 1);
    EXPECT_EQ(count_ops(*g, "DequantizeLinear"), 1);
  }
}

}  // namespace
}  // namespace ferrite
