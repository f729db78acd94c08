// fuse_qdq: which QDQ patterns become QLinearConv / QLinearMatMul, and which stay as written
// (their values against numpy formulas are tests/models/quant_check.py's).
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/passes/fuse_qdq.h"

namespace ferrite {
namespace {

int count_ops(const Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes) n += node->op_type == op;
  return n;
}

struct Options {
  bool weights_constant = true;
  bool float_output_too = false;  // yf is also a graph output
  int64_t weights_axis = 1;       // MatMul's per-column axis
};

// a (uint8 input) -> DequantizeLinear; b (int8, per column) -> DequantizeLinear; MatMul;
// QuantizeLinear.
std::unique_ptr<Graph> qdq_matmul(const Options& o) {
  GraphBuilder b;
  const int8_t w[6] = {1, -2, 3, -4, 5, -6};
  const float ws[3] = {0.1f, 0.2f, 0.3f}, xs = 0.05f, ys = 0.5f;
  const uint8_t xz = 128, yz = 10;
  const int8_t wz[3] = {0, 0, 0};
  Value* a = b.input("a", DType::U8, {4, 2});
  Value* wq =
      o.weights_constant ? b.constant("w", DType::I8, {2, 3}, w) : b.input("w", DType::I8, {2, 3});
  Value* af = b.op("DequantizeLinear", {a, b.constant("xs", DType::F32, {}, &xs),
                                        b.constant("xz", DType::U8, {}, &xz)});
  Value* wf =
      b.op("DequantizeLinear",
           {wq, b.constant("ws", DType::F32, {3}, ws), b.constant("wz", DType::I8, {3}, wz)},
           {{"axis", attr_i(o.weights_axis)}});
  Value* yf = b.op("MatMul", {af, wf});
  Value* y = b.op("QuantizeLinear", {yf, b.constant("ys", DType::F32, {}, &ys),
                                     b.constant("yz", DType::U8, {}, &yz)});
  b.output(y);
  if (o.float_output_too) b.output(yf);
  return b.finish();
}

TEST(FuseQdq, MatMulWithPerColumnWeightsBecomesQLinearMatMul) {
  std::unique_ptr<Graph> g = qdq_matmul({});
  fuse_qdq(*g);
  g->validate();
  EXPECT_EQ(count_ops(*g, "QLinearMatMul"), 1);
  EXPECT_EQ(count_ops(*g, "MatMul"), 0);
  EXPECT_EQ(count_ops(*g, "QuantizeLinear"), 0);
  EXPECT_EQ(count_ops(*g, "DequantizeLinear"), 0);  // no other reader: removed as dead
}

TEST(FuseQdq, LeavesWhatIsNotTheQuantizedProduct) {
  Options run_time_weights;
  run_time_weights.weights_constant = false;
  Options read_elsewhere;
  read_elsewhere.float_output_too = true;
  Options per_row;
  per_row.weights_axis = 0;  // per row of B: no per-column scale
  for (const Options& o : {run_time_weights, read_elsewhere, per_row}) {
    std::unique_ptr<Graph> g = qdq_matmul(o);
    fuse_qdq(*g);
    g->validate();
    EXPECT_EQ(count_ops(*g, "QLinearMatMul"), 0);
    EXPECT_EQ(count_ops(*g, "MatMul"), 1);
    EXPECT_EQ(count_ops(*g, "QuantizeLinear"), 1);
  }
}

}  // namespace
}  // namespace ferrite
