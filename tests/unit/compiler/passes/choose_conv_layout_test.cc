// choose_conv_layout: which convolutions the pass stores channels-last. Regions of
// convolutions joined through elementwise ops and pools share the layout; a lone
// convolution, or one cut off by a reshape, keeps NCHW. (The values computed from a marked
// graph are checked by ChannelsLast.ConvOutputsAreStoredNhwcAndReadAsNchw.)
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "compiler/graph/layout_attr.h"
#include "compiler/passes/choose_conv_layout.h"

namespace ferrite {
namespace {

Value* conv(GraphBuilder& b, Value* x, int64_t m, int64_t c) {
  std::vector<float> w(static_cast<size_t>(m * c), 0.5f);
  return b.op("Conv", {x, b.constant_f32({m, c, 1, 1}, w)});
}

bool channels_last(const Value* v) {
  return v->producer->attr_string(kLayoutAttr, "") == kChannelsLastLayout;
}

struct Convs {
  std::unique_ptr<Graph> g;
  Value *a, *c, *d, *pooled, *e, *f;
};

Convs build() {
  GraphBuilder b;
  Convs r;
  Value* x = b.input("x", DType::F32, {1, 4, 6, 6});
  // Region 1: conv -> relu -> conv, + residual add -> conv.
  r.a = conv(b, x, 4, 4);
  Value* relu = b.op("Relu", {r.a});
  r.c = conv(b, relu, 4, 4);
  r.d = conv(b, b.op("Add", {r.c, relu}), 4, 4);
  // Region 2: a conv whose only neighbour is a pool.
  r.pooled = conv(b, x, 2, 4);
  Value* p = b.op("MaxPool", {r.pooled}, {{"kernel_shape", attr_is({2, 2})}});
  // Two lone convolutions, cut apart by a Reshape.
  r.e = conv(b, x, 3, 4);
  r.f = conv(b, b.op("Reshape", {r.e, b.constant_i64({4}, {1, 3, 3, 12})}), 2, 3);
  for (Value* v : {r.a, r.c, r.d, p, r.e, r.f}) b.output(v);
  r.g = b.finish();
  return r;
}

TEST(ChooseConvLayout, RegionsOfConvolutionsShareChannelsLast) {
  Convs r = build();
  r.e->producer->attrs[kLayoutAttr] = attr_s(kChannelsLastLayout);  // a model's own: ignored
  choose_conv_layout(*r.g, true);
  EXPECT_TRUE(channels_last(r.a));
  EXPECT_TRUE(channels_last(r.c));
  EXPECT_TRUE(channels_last(r.d));
  EXPECT_TRUE(channels_last(r.pooled));
  EXPECT_FALSE(channels_last(r.e));
  EXPECT_FALSE(channels_last(r.f));
  // The other nodes of a channels-last region store what the lowering realizes of them
  // channels-last (the pool included); nodes outside one get no mark.
  for (const auto& n : r.g->nodes) {
    const bool store = n->attr_string(kStoreAttr, "") == kChannelsLastLayout;
    if (n->op_type == "Relu" || n->op_type == "Add" || n->op_type == "MaxPool") {
      EXPECT_TRUE(store) << n->describe();
    } else {
      EXPECT_FALSE(store) << n->describe();
    }
  }
}

TEST(ChooseConvLayout, BackendsThatWantNchwGetNoMarks) {
  Convs r = build();
  r.a->producer->attrs[kLayoutAttr] = attr_s(kChannelsLastLayout);
  choose_conv_layout(*r.g, false);
  for (const Value* v : {r.a, r.c, r.d, r.pooled, r.e, r.f}) EXPECT_FALSE(channels_last(v));
  for (const auto& n : r.g->nodes) EXPECT_FALSE(n->attrs.count(kStoreAttr)) << n->describe();
}

// Without the backend's preference, a region whose convolutions are all integer ones is
// still channels-last (every backend's integer convolution works channels-last); a region
// with a float convolution, or a lone integer one, is not.
TEST(ChooseConvLayout, IntegerRegionsAreChannelsLastForEveryBackend) {
  GraphBuilder b;
  Value* x = b.input("x", DType::U8, {1, 4, 6, 6});
  const std::vector<int8_t> w8(16, 3);
  const uint8_t zero = 0;
  const float scale = 0.5f;
  Value* w = b.constant("w", DType::I8, {4, 4, 1, 1}, w8.data());
  Value* xz = b.constant("xz", DType::U8, {}, &zero);
  Value* s = b.constant("s", DType::F32, {}, &scale);
  // Region: ConvInteger -> DequantizeLinear -> Relu -> QuantizeLinear -> ConvInteger.
  Value* a = b.op("ConvInteger", {x, w, xz});
  Value* q = b.op("QuantizeLinear", {b.op("Relu", {b.op("DequantizeLinear", {a, s})}), s, xz});
  Value* c = b.op("ConvInteger", {q, w, xz});
  // A lone integer convolution, and a float one beside an integer one.
  Value* lone = b.op("ConvInteger", {x, w, xz});
  Value* mixed_int = b.op("ConvInteger", {x, w, xz});
  Value* mixed_float = conv(b, b.op("Relu", {b.op("DequantizeLinear", {mixed_int, s})}), 4, 4);
  for (Value* v : {c, lone, mixed_float}) b.output(v);
  std::unique_ptr<Graph> g = b.finish();
  choose_conv_layout(*g, false);
  EXPECT_TRUE(channels_last(a));
  EXPECT_TRUE(channels_last(c));
  EXPECT_EQ(q->producer->attr_string(kStoreAttr, ""), kChannelsLastLayout);
  EXPECT_FALSE(channels_last(lone));
  EXPECT_FALSE(channels_last(mixed_int));
  EXPECT_FALSE(channels_last(mixed_float));
}

}  // namespace
}  // namespace ferrite
