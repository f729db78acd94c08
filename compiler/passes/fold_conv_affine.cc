#include "compiler/passes/fold_conv_affine.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler/passes/captured_names.h"

namespace ferrite {
namespace {

// A per-output-channel affine map y -> scale[m] * y + shift[m] (over M channels).
struct Affine {
  std::vector<double> scale, shift;
};

bool f32_constant(const Value* v) {
  return v && v->is_constant() && v->data->dtype == DType::F32;
}

// The M per-channel values of a constant that broadcasts against a conv output of rank
// `rank` as one value per channel (dims 1 everywhere except dim 1 = M, or a scalar).
bool per_channel(const Value* c, size_t rank, int64_t m, std::vector<double>* out) {
  if (!f32_constant(c)) return false;
  const std::vector<int64_t>& s = c->data->shape;
  if (s.size() > rank) return false;
  const size_t lead = rank - s.size();
  int64_t channels = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == 1) continue;
    if (lead + i != 1 || s[i] != m) return false;
    channels = m;
  }
  out->resize(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) (*out)[i] = c->data->float_at(channels == 1 ? 0 : i);
  return true;
}

// The affine map `u` applies to the conv output `v` (M channels, rank `rank`), if it is one.
bool affine_of(const Node& u, const Value* v, size_t rank, int64_t m, Affine* a) {
  a->scale.assign(static_cast<size_t>(m), 1.0);
  a->shift.assign(static_cast<size_t>(m), 0.0);
  if (u.op_type == "BatchNormalization") {
    if (u.input(0) != v || u.attr_int("training_mode", 0) != 0) return false;
    for (size_t k = 1; k < u.outputs.size(); ++k)
      if (u.outputs[k] && !u.outputs[k]->users.empty()) return false;
    std::vector<double> gamma, beta, mean, var;
    for (auto [i, dst] :
         {std::pair<size_t, std::vector<double>*>{1, &gamma}, {2, &beta}, {3, &mean}, {4, &var}}) {
      const Value* c = u.input(i);
      if (!f32_constant(c) || c->data->shape != std::vector<int64_t>{m}) return false;
      dst->resize(static_cast<size_t>(m));
      for (int64_t j = 0; j < m; ++j) (*dst)[j] = c->data->float_at(j);
    }
    const double eps = u.attr_float("epsilon", 1e-5);
    for (int64_t j = 0; j < m; ++j) {
      // In float, as the unfolded BatchNormalization computes its scale.
      const float s = static_cast<float>(gamma[j]) /
                      std::sqrt(static_cast<float>(var[j]) + static_cast<float>(eps));
      a->scale[j] = s;
      a->shift[j] = beta[j] - mean[j] * s;
    }
    return true;
  }
  const bool mul = u.op_type == "Mul", add = u.op_type == "Add", sub = u.op_type == "Sub";
  if ((!mul && !add && !sub) || u.inputs.size() != 2) return false;
  const int vi = u.input(0) == v ? 0 : (u.input(1) == v ? 1 : -1);
  if (vi < 0 || u.input(0) == u.input(1)) return false;
  if (sub && vi != 0) return false;  // c - y negates the conv: leave it
  std::vector<double> c;
  if (!per_channel(u.input(1 - vi), rank, m, &c)) return false;
  for (int64_t j = 0; j < m; ++j) {
    if (mul) a->scale[j] = c[j];
    if (add) a->shift[j] = c[j];
    if (sub) a->shift[j] = -c[j];
  }
  return true;
}

std::shared_ptr<TensorData> f32_data(const std::vector<int64_t>& shape,
                                     const std::vector<float>& values) {
  auto t = std::make_shared<TensorData>();
  t->dtype = DType::F32;
  t->shape = shape;
  t->bytes.resize(values.size() * sizeof(float));
  if (!values.empty()) std::memcpy(t->bytes.data(), values.data(), t->bytes.size());
  return t;
}

// Folds `a` into conv `n` over M output channels: W' = W * scale[m], B' = B * scale + shift.
// Conv's W is [M, Cg, k...]; ConvTranspose's [C, M / group, k...], where input channel c
// of group c / (C / group) feeds output channels group * M / group + j. New constants: W and
// B may be shared with other nodes.
void fold(Graph& g, Node* n, int64_t m, const Affine& a) {
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
  n->inputs[1] = g.add_constant(n->inputs[1]->name + "_folded", f32_data(w.shape, wv));
  Value* b = g.add_constant(n->outputs[0]->name + "_bias", f32_data({m}, bv));
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
  std::vector<Node*> absorbed;
  g.rebuild_uses();
  for (const auto& owner : g.nodes) {
    Node* n = owner.get();
    int64_t m = 0;
    if (!foldable_conv(*n, &m)) continue;
    const size_t rank = n->inputs[0]->type.shape.size();
    for (;;) {
      Value* v = n->outputs[0];
      if (v->users.size() != 1 || captured.count(v->name)) break;
      if (std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end()) break;
      Node* u = v->users[0];
      Affine a;
      if (!affine_of(*u, v, rank, m, &a)) break;
      fold(g, n, m, a);
      Value* w = u->outputs[0];
      n->outputs[0] = w;  // the conv now produces what u produced
      u->inputs.clear();
      u->outputs.clear();
      absorbed.push_back(u);
      g.rebuild_uses();
    }
  }
  if (absorbed.empty()) return;
  erase_absorbed_nodes(g, std::set<Node*>(absorbed.begin(), absorbed.end()));
  g.remove_dead();
}

}  // namespace ferrite
