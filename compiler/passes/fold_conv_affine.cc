#include "compiler/passes/fold_conv_affine.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler/passes/captured_names.h"
#include "compiler/passes/channel_affine.h"

namespace ferrite {
namespace {

// Folds `a` into conv `n` over M output channels: W' = W * scale[m], B' = B * scale + shift.
// Conv's W is [M, Cg, k...]; ConvTranspose's [C, M / group, k...], where input channel c
// of group c / (C / group) feeds output channels group * M / group + j. New constants: W and
// B may be shared with other nodes.
void fold(Graph& g, Node* n, int64_t m, const ChannelAffine& a) {
  const TensorData& w = *n->inputs[1]->data;
  const bool transpose = n->op_type == "ConvTranspose";
  const int64_t rows = w.shape[0], mg = w.shape[1], per = w.elements() / rows;
  const int64_t kernel = per / std::max<int64_t>(mg, 1);
  const int64_t rows_per_group = rows / std::max<int64_t>(m / std::max<int64_t>(mg, 1), 1);
  std::vector<float> wv(static_cast<size_t>(w.elements())), bv(static_cast<size_t>(m));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < per; ++i) {
      const int64_t o = transpose ? r / rows_per_group * mg + i / kernel : r;
      wv[r * per + i] = static_cast<float>(w.float_at(r * per + i) * a.scale[o]);
    }
  }
  for (int64_t o = 0; o < m; ++o) {
    const double b = n->input(2) ? n->inputs[2]->data->float_at(o) : 0.0;
    bv[o] = static_cast<float>(b * a.scale[o] + a.shift[o]);
  }
  n->inputs[1] = g.add_constant(n->inputs[1]->name + "_folded", f32_tensor(w.shape, wv));
  Value* b = g.add_constant(n->outputs[0]->name + "_bias", f32_tensor({m}, bv));
  if (n->inputs.size() < 3) n->inputs.resize(3, nullptr);
  n->inputs[2] = b;
}

// Whether `n` is a Conv or ConvTranspose whose weights and bias are float32 constants of
// known shape; *m: its output channels.
bool foldable_conv(const Node& n, int64_t* m) {
  const bool transpose = n.op_type == "ConvTranspose";
  if ((n.op_type != "Conv" && !transpose) || n.outputs.size() != 1 || !n.outputs[0]) return false;
  const Value* w = n.input(1);
  if (!f32_constant(w) || w->data->shape.size() < 3 || w->data->shape[0] <= 0) return false;
  if (transpose) {
    const int64_t group = n.attr_int("group", 1);
    if (group <= 0 || w->data->shape[0] % group != 0 || w->data->shape[1] <= 0) return false;
    *m = w->data->shape[1] * group;
  } else {
    *m = w->data->shape[0];
  }
  const Value* b = n.input(2);
  if (b && (!f32_constant(b) || b->data->shape != std::vector<int64_t>{*m})) return false;
  return n.input(0) != nullptr && n.input(0)->type.rank_known;
}

}  // namespace

void fold_conv_affine(Graph& g) {
  const std::set<std::string> captured = captured_names(g);
  const std::set<const Value*> outputs(g.outputs.begin(), g.outputs.end());
  std::vector<Node*> absorbed;
  g.rebuild_uses();
  for (const auto& owner : g.nodes) {
    Node* n = owner.get();
    int64_t m = 0;
    if (!foldable_conv(*n, &m)) continue;
    ChannelAffine total;
    const std::vector<Node*> chain = affine_chain(outputs, captured, n->outputs[0],
                                                  n->inputs[0]->type.shape.size(), 1, m, &total);
    if (chain.empty()) continue;
    fold(g, n, m, total);                      // once, with the chain composed
    n->outputs[0] = chain.back()->outputs[0];  // the conv now produces what the chain produced
    n->outputs[0]->producer = n;
    n->outputs[0]->output_index = 0;
    for (Node* u : chain) {
      forget_reader(u);
      u->inputs.clear();
      u->outputs.clear();
      absorbed.push_back(u);
    }
  }
  if (absorbed.empty()) return;
  erase_absorbed_nodes(g, std::set<Node*>(absorbed.begin(), absorbed.end()));
  g.remove_dead();
}

}  // namespace ferrite
