#include "compiler/passes/choose_conv_layout.h"

#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

namespace ferrite {
namespace {

// The convolutions whose lowerings obey the layout: the float ones and the integer ones of
// quantized models (their int32 sums stored channels-last).
bool is_conv(const Node& n) {
  static const std::set<std::string> kConvs{"Conv", "ConvTranspose", "QLinearConv", "ConvInteger"};
  return n.domain.empty() && kConvs.count(n.op_type) != 0;
}

// The integer convolutions: every backend's reads and writes its activations channels-last
// (oneDNN's int8 convolutions, and the portable ones, which widen the input channels-last).
bool is_integer_conv(const Node& n) {
  return n.domain.empty() && (n.op_type == "QLinearConv" || n.op_type == "ConvInteger");
}

bool is_pool(const Node& n) {
  static const std::set<std::string> kPools{"MaxPool",       "AveragePool", "GlobalAveragePool",
                                            "GlobalMaxPool", "LpPool",      "GlobalLpPool"};
  return n.domain.empty() && kPools.count(n.op_type) != 0;
}

// Ops whose result the lowering computes pointwise from their input's elements, in
// whatever order that input is stored: a channels-last value flows through them (or, more
// often, they become the convolution's post-ops).
bool follows_input_layout(const Node& n) {
  static const std::set<std::string> kOps{"Relu",
                                          "Clip",
                                          "LeakyRelu",
                                          "Sigmoid",
                                          "HardSigmoid",
                                          "HardSwish",
                                          "Tanh",
                                          "Elu",
                                          "Selu",
                                          "Softplus",
                                          "Erf",
                                          "Exp",
                                          "Neg",
                                          "Abs",
                                          "Sqrt",
                                          "Identity",
                                          "Add",
                                          "Sub",
                                          "Mul",
                                          "Div",
                                          "Max",
                                          "Min",
                                          "PRelu",
                                          "BatchNormalization",
                                          "Mish",
                                          "Celu",
                                          "ThresholdedRelu",
                                          "QuantizeLinear",
                                          "DequantizeLinear"};
  return n.domain.empty() && kOps.count(n.op_type) != 0;
}

bool in_region(const Node& n) {
  return is_conv(n) || is_pool(n) || follows_input_layout(n);
}

struct Regions {
  std::vector<size_t> parent;
  size_t find(size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  }
  void join(size_t a, size_t b) { parent[find(a)] = find(b); }
};

}  // namespace

void choose_conv_layout(Graph& g, bool prefer_channels_last) {
  for (const auto& n : g.nodes) {  // the choice is this pass's alone
    if (is_conv(*n)) n->attrs.erase(kLayoutAttr);
    n->attrs.erase(kStoreAttr);
  }
  std::map<const Value*, size_t> producer;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const Value* v : g.nodes[i]->outputs)
      if (v) producer[v] = i;
  Regions r;
  r.parent.resize(g.nodes.size());
  std::iota(r.parent.begin(), r.parent.end(), size_t{0});
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!in_region(*g.nodes[i])) continue;
    for (const Value* v : g.nodes[i]->inputs) {
      auto p = v ? producer.find(v) : producer.end();
      if (p != producer.end() && in_region(*g.nodes[p->second])) r.join(i, p->second);
    }
  }
  std::map<size_t, int> convs, float_convs, pools;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (is_conv(*g.nodes[i])) ++convs[r.find(i)];
    if (is_conv(*g.nodes[i]) && !is_integer_conv(*g.nodes[i])) ++float_convs[r.find(i)];
    if (is_pool(*g.nodes[i])) ++pools[r.find(i)];
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = *g.nodes[i];
    if (!in_region(n)) continue;
    const size_t region = r.find(i);
    if (convs[region] < 2 && pools[region] == 0) continue;
    // Without the backend's preference, only a region of integer convolutions.
    if (!prefer_channels_last && (convs[region] == 0 || float_convs[region] > 0)) continue;
    n.attrs[is_conv(n) ? kLayoutAttr : kStoreAttr] = attr_s(kChannelsLastLayout);
  }
}

}  // namespace ferrite
