#include "compiler/passes/fold_matmul_affine.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "compiler/passes/captured_names.h"
#include "compiler/passes/channel_affine.h"

namespace ferrite {
namespace {

// A MatMul or Gemm whose weights (B) are a 2-D float32 constant: its output columns N, the
// output's rank, and whether B is stored transposed ([N, K]: Gemm's transB).
struct Linear {
  int64_t n = 0;
  size_t rank = 0;
  bool transposed = false;
};

bool foldable_linear(const Node& node, Linear* l) {
  const bool gemm = node.op_type == "Gemm";
  if ((!gemm && node.op_type != "MatMul") || node.outputs.size() != 1 || !node.outputs[0])
    return false;
  const Value* a = node.input(0);
  const Value* b = node.input(1);
  if (!a || !a->type.rank_known || !f32_constant(b) || b->data->shape.size() != 2) return false;
  l->transposed = gemm && node.attr_int("transB", 0) != 0;
  l->n = b->data->shape[l->transposed ? 0 : 1];
  l->rank = gemm ? 2 : a->type.shape.size();  // MatMul: [..., M, K] @ [K, N]
  if (l->n <= 0 || l->rank < 2) return false;
  if (gemm) {  // C absent, or one value per column (or a scalar)
    const Value* c = node.input(2);
    if (c && (!f32_constant(c) || c->data->shape.size() > 2 ||
              (c->data->elements() != 1 && c->data->elements() != l->n) ||
              (c->data->shape.size() == 2 && c->data->shape[0] != 1)))
      return false;
  }
  return true;
}

// W' = W * scale per output column; for Gemm, C' = beta * C * scale + shift and beta = 1.
void fold(Graph& g, Node* node, const Linear& l, const ChannelAffine& a) {
  const TensorData& w = *node->inputs[1]->data;
  const int64_t rows = w.shape[0], cols = w.shape[1];
  std::vector<float> wv(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      wv[r * cols + c] =
          static_cast<float>(w.float_at(r * cols + c) * a.scale[l.transposed ? r : c]);
  node->inputs[1] = g.add_constant(node->inputs[1]->name + "_folded", f32_tensor(w.shape, wv));
  if (node->op_type != "Gemm") return;
  const Value* c = node->input(2);
  const double beta = node->attr_float("beta", 1.0);
  std::vector<float> bias(static_cast<size_t>(l.n));
  for (int64_t j = 0; j < l.n; ++j) {
    const double cj = c ? c->data->float_at(c->data->elements() == 1 ? 0 : j) : 0.0;
    bias[j] = static_cast<float>(beta * cj * a.scale[j] + a.shift[j]);
  }
  if (node->inputs.size() < 3) node->inputs.resize(3, nullptr);
  node->inputs[2] = g.add_constant(node->outputs[0]->name + "_bias", f32_tensor({l.n}, bias));
  node->attrs["beta"] = attr_f(1.0);
}

}  // namespace

void fold_matmul_affine(Graph& g) {
  const std::set<std::string> captured = captured_names(g);
  const std::set<const Value*> outputs(g.outputs.begin(), g.outputs.end());
  std::set<Node*> absorbed;
  g.rebuild_uses();
  for (const auto& owner : g.nodes) {
    Node* node = owner.get();
    Linear l;
    if (!foldable_linear(*node, &l)) continue;  // (absorbed nodes have no outputs)
    ChannelAffine total;
    const std::vector<Node*> chain =
        affine_chain(outputs, captured, node->outputs[0], l.rank, l.rank - 1, l.n, &total);
    if (chain.empty() || !total.scales()) continue;
    fold(g, node, l, total);
    Node* last = chain.back();
    const bool keep_add = node->op_type != "Gemm" && total.shifts();
    for (Node* u : chain) {
      if (keep_add && u == last) continue;
      forget_reader(u);
      u->inputs.clear();
      u->outputs.clear();
      absorbed.insert(u);
    }
    if (keep_add) {  // the last node becomes Add(output, shift)
      std::vector<float> shift(total.shift.begin(), total.shift.end());
      last->op_type = "Add";
      last->domain.clear();
      last->attrs.clear();
      forget_reader(last);
      last->inputs = {node->outputs[0],
                      g.add_constant(last->outputs[0]->name + "_shift", f32_tensor({l.n}, shift))};
      add_reader(node->outputs[0], last);
      for (size_t k = 1; k < last->outputs.size(); ++k) {
        if (last->outputs[k]) last->outputs[k]->producer = nullptr;
      }
      last->outputs.resize(1);
    } else {
      node->outputs[0] = last->outputs[0];  // the node now produces what the chain produced
      node->outputs[0]->producer = node;
      node->outputs[0]->output_index = 0;
    }
  }
  if (absorbed.empty()) return;
  erase_absorbed_nodes(g, absorbed);
  g.remove_dead();
}

}  // namespace ferrite
