// fuse_block_weights: which MatMuls by DequantizeLinear'd weights become MatMulNBits, how
// the codes are repacked, and which stay as written (values against numpy:
// tests/models/quant_check.py's dq_*_matmul cases).
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/passes/fuse_block_weights.h"

namespace ferrite {
namespace {

const Node* only(const Graph& g, const std::string& op) {
  const Node* found = nullptr;
  for (const auto& node : g.nodes) {
    if (node->op_type != op) continue;
    if (found) return nullptr;
    found = node.get();
  }
  return found;
}

struct Options {
  DType codes = DType::I4;
  int64_t axis = 0, block = 16;
  bool constant = true, zero_points = true;
};

// a [2, 20] @ DequantizeLinear(w [20, 3] codes, scales [2, 3], zero points [2, 3]).
std::unique_ptr<Graph> dq_matmul(const Options& o) {
  GraphBuilder b;
  std::vector<int8_t> w(60);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(static_cast<int>(i % 16) - 8);
  if (o.codes == DType::U4)
    for (int8_t& v : w) v = static_cast<int8_t>(v + 8);
  const std::vector<float> s = {0.5f, 1, 2, 0.25f, 4, 8};
  const std::vector<int8_t> z = {-1, 0, 1, 2, 3, -8};
  Value* a = b.input("a", DType::F32, {2, 20});
  Value* wq =
      o.constant ? b.constant("w", o.codes, {20, 3}, w.data()) : b.input("w", o.codes, {20, 3});
  std::vector<Value*> ins = {wq, b.constant("s", DType::F32, {2, 3}, s.data())};
  if (o.zero_points) ins.push_back(b.constant("z", o.codes, {2, 3}, z.data()));
  Value* wf =
      b.op("DequantizeLinear", ins, {{"axis", attr_i(o.axis)}, {"block_size", attr_i(o.block)}});
  b.output(b.op("MatMul", {a, wf}));
  return b.finish();
}

TEST(FuseBlockWeights, BlockedInt4WeightsBecomeMatMulNBitsOnRepackedCodes) {
  std::unique_ptr<Graph> g = dq_matmul({});
  fuse_block_weights(*g);
  g->validate();
  const Node* n = only(*g, "MatMulNBits");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->domain, "com.microsoft");
  EXPECT_EQ(n->attr_int("K", 0), 20);
  EXPECT_EQ(n->attr_int("N", 0), 3);
  EXPECT_EQ(n->attr_int("bits", 0), 4);
  EXPECT_EQ(n->attr_int("block_size", 0), 16);
  EXPECT_EQ(only(*g, "DequantizeLinear"), nullptr);  // no other reader: removed as dead
  // Column 0's first block: w[k][0] = (3k mod 16) - 8, offset by 8 into codes 3k mod 16,
  // two to a byte, low nibble first.
  const TensorData& codes = *n->input(1)->data;
  EXPECT_EQ(codes.shape, (std::vector<int64_t>{3, 2, 8}));
  EXPECT_EQ(codes.as<uint8_t>()[0], 0x30);  // k = 0: 0, k = 1: 3
  EXPECT_EQ(codes.as<uint8_t>()[1], 0x96);  // k = 2: 6, k = 3: 9
  // Scales column by column; zero points offset by 8 and packed 2 to a byte per column.
  const float* s = n->input(2)->data->as<float>();
  EXPECT_EQ(std::vector<float>(s, s + 6), (std::vector<float>{0.5f, 0.25f, 1, 4, 2, 8}));
  const uint8_t* z = n->input(3)->data->as<uint8_t>();
  EXPECT_EQ(std::vector<uint8_t>(z, z + 3), (std::vector<uint8_t>{0xA7, 0xB8, 0x09}));
}

TEST(FuseBlockWeights, UnsignedWeightsWithoutZeroPointsGetZeros) {
  Options o;
  o.codes = DType::U4;
  o.zero_points = false;
  std::unique_ptr<Graph> g = dq_matmul(o);
  fuse_block_weights(*g);
  const Node* n = only(*g, "MatMulNBits");
  ASSERT_NE(n, nullptr);
  const uint8_t* z = n->input(3)->data->as<uint8_t>();
  EXPECT_EQ(std::vector<uint8_t>(z, z + 3), (std::vector<uint8_t>{0, 0, 0}));
}

TEST(FuseBlockWeights, OtherFormsStayAsWritten) {
  auto stays = [](Options o) {
    std::unique_ptr<Graph> g = dq_matmul(o);
    fuse_block_weights(*g);
    return only(*g, "MatMulNBits") == nullptr && only(*g, "MatMul") != nullptr;
  };
  Options per_column;  // blocked along N, not K
  per_column.axis = 1;
  EXPECT_TRUE(stays(per_column));
  Options small_block;  // MatMulNBits' blocks are at least 16
  small_block.block = 8;
  EXPECT_TRUE(stays(small_block));
  Options fed;  // codes that are an input, not a weight
  fed.constant = false;
  EXPECT_TRUE(stays(fed));
}

}  // namespace
}  // namespace ferrite
