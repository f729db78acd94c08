#include "compiler/passes/fuse_attention.h"

#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler/graph/ferrite_ops.h"
#include "compiler/passes/captured_names.h"

namespace ferrite {
namespace {

struct Context {
  std::set<std::string> captured;
  std::set<const Value*> outputs;
  int64_t opset = 0;
};

// `v` is read by `user` alone, is no graph output and no subgraph reads it.
bool private_to(const Context& ctx, const Value* v, const Node* user) {
  return v && v->users.size() == 1 && v->users[0] == user && !ctx.outputs.count(v) &&
         !ctx.captured.count(v->name);
}

// A float32 scalar constant's value (nullptr-safe); false when `v` is none.
bool scalar_constant(const Value* v, double* x) {
  if (!v || !v->is_constant() || v->data->dtype != DType::F32 || v->data->elements() != 1)
    return false;
  *x = v->data->float_at(0);
  return std::isfinite(*x) && *x != 0;
}

// The factor `node` applies when it is Mul or Div of `v` by a scalar constant (nothing else).
bool scales(const Node* node, const Value* v, double* factor) {
  if (node->domain != "" || node->inputs.size() != 2) return false;
  double c;
  if (node->op_type == "Mul") {
    const Value* other = node->inputs[0] == v ? node->inputs[1] : node->inputs[0];
    if (!scalar_constant(other, &c)) return false;
    *factor = c;
    return true;
  }
  if (node->op_type == "Div" && node->inputs[0] == v && scalar_constant(node->inputs[1], &c)) {
    *factor = 1 / c;
    return true;
  }
  return false;
}

// Walks back from `v` through scalar Mul/Div nodes that only feed the next step; returns the
// unscaled value and multiplies *scale by their factors.
Value* unscaled(const Context& ctx, Value* v, const Node* reader, double* scale,
                std::vector<Node*>* absorbed) {
  for (;;) {
    Node* p = v->producer;
    if (!p || p->outputs.size() != 1 || !private_to(ctx, v, reader)) return v;
    Value* in = p->input(0) && p->input(0)->is_constant() ? p->input(1) : p->input(0);
    double f;
    if (!in || in->is_constant() || !scales(p, in, &f)) return v;
    *scale *= f;
    absorbed->push_back(p);
    reader = p;
    v = in;
  }
}

struct Match {
  Node *first = nullptr, *last = nullptr;
  Value *q = nullptr, *kt = nullptr, *v = nullptr, *mask = nullptr;
  double scale = 1;
  std::vector<Node*> absorbed;  // besides first and last
};

bool is_op(const Node* n, const char* op) {
  return n && n->domain.empty() && n->op_type == op;
}

// The chain from Softmax's result forward to the second MatMul and back to the first.
bool match_at(const Context& ctx, Node* softmax, Match* m) {
  if (!is_op(softmax, "Softmax") || softmax->outputs.size() != 1) return false;
  Value* p = softmax->outputs[0];
  const int64_t axis = softmax->attr_int("axis", ctx.opset >= 13 ? -1 : 1);
  if (axis != -1 && axis != 3) return false;
  if (!p || p->users.size() != 1 || !is_op(p->users[0], "MatMul") || p->users[0]->input(0) != p ||
      !private_to(ctx, p, p->users[0]))
    return false;
  m->last = p->users[0];
  m->v = m->last->input(1);
  // Back from the scores Softmax reads: Mul/Div by scalars and at most one Add.
  Value* s = softmax->input(0);
  const Node* reader = softmax;
  bool scaled = false;  // a scaling between the mask's Add and Softmax would scale the mask too
  for (;;) {
    if (!s || !private_to(ctx, s, reader)) return false;
    Node* n = s->producer;
    if (!n || n->outputs.size() != 1) return false;
    double f;
    if (is_op(n, "MatMul")) {
      m->first = n;
      break;
    }
    Value* in = n->input(0);
    if (n->inputs.size() == 2 && n->input(1) && !n->input(1)->is_constant() && in &&
        in->is_constant())
      in = n->input(1);
    if (scales(n, in, &f) && in && !in->is_constant()) {
      m->scale *= f;
      scaled = true;
    } else if (is_op(n, "Add") && n->inputs.size() == 2 && !m->mask && !scaled) {
      // The scores come from the MatMul (or a scaling), have the sum's shape and feed only
      // the Add; the mask is the other operand.
      auto scores = [&](const Value* x) {
        const Node* from = x ? x->producer : nullptr;
        double unused;
        return from && private_to(ctx, x, n) && x->type.shape == s->type.shape &&
               (is_op(from, "MatMul") ||
                (from->inputs.size() == 2 &&
                 (scales(from, from->input(0), &unused) || scales(from, from->input(1), &unused))));
      };
      const bool first = scores(n->input(0));
      if (!first && !scores(n->input(1))) return false;
      in = n->input(first ? 0 : 1);
      m->mask = n->input(first ? 1 : 0);
      if (!m->mask) return false;
    } else {
      return false;
    }
    m->absorbed.push_back(n);
    reader = n;
    s = in;
  }
  m->q = unscaled(ctx, m->first->input(0), m->first, &m->scale, &m->absorbed);
  m->kt = unscaled(ctx, m->first->input(1), m->first, &m->scale, &m->absorbed);
  return true;
}

// The matched nodes again, in graph order, as a subgraph over the fused node's inputs
// (q, kt, v and the mask when there is one), their constants copied in.
std::shared_ptr<Graph> unfused_body(const Graph& g, const Match& m,
                                    const std::set<const Node*>& matched) {
  auto body = std::make_shared<Graph>();
  body->name = "unfused";
  body->opsets = g.opsets;
  std::map<const Value*, Value*> local;
  const char* names[] = {"q", "kt", "v", "mask"};
  const Value* ins[] = {m.q, m.kt, m.v, m.mask};
  for (size_t i = 0; i < 4; ++i)
    if (ins[i] && !local.count(ins[i])) local[ins[i]] = body->add_input(names[i], ins[i]->type);
  for (const auto& owner : g.nodes) {
    const Node* n = owner.get();
    if (!matched.count(n)) continue;
    std::vector<Value*> args;
    for (Value* in : n->inputs) {
      if (!in) {
        args.push_back(nullptr);
      } else if (local.count(in)) {
        args.push_back(local.at(in));
      } else {  // a scalar constant (the match reads no other outside value)
        args.push_back(local[in] = body->add_constant(in->name, in->data));
      }
    }
    Value* out = body->add_value("");
    local[n->outputs[0]] = out;
    Node* c = body->add_node(n->op_type, std::move(args), {out}, n->name);
    c->domain = n->domain;
    c->attrs = n->attrs;
  }
  body->add_output(local.at(m.last->outputs[0]));
  body->validate();
  return body;
}

// Every input of a matched node is another matched node's output, an input of the fused
// node or a constant.
bool closed(const Match& m, const std::set<const Node*>& matched) {
  for (const Node* n : matched)
    for (const Value* in : n->inputs) {
      if (!in || in->is_constant() || in == m.q || in == m.kt || in == m.v || in == m.mask)
        continue;
      if (!in->producer || !matched.count(in->producer)) return false;
    }
  return true;
}

}  // namespace

void fuse_attention(Graph& g) {
  Context ctx{captured_names(g), {g.outputs.begin(), g.outputs.end()}, g.opset("")};
  std::set<Node*> gone;
  std::vector<std::unique_ptr<Node>> fused;
  g.rebuild_uses();
  for (const auto& owner : g.nodes) {
    Node* softmax = owner.get();
    if (gone.count(softmax)) continue;
    Match m;
    if (!match_at(ctx, softmax, &m)) continue;
    std::set<const Node*> matched{m.first, m.last, softmax};
    matched.insert(m.absorbed.begin(), m.absorbed.end());
    if (!closed(m, matched)) continue;
    auto a = std::make_unique<Node>();
    a->op_type = "Attention";
    a->domain = kFerriteDomain;
    a->name = m.last->name;
    a->inputs = {m.q, m.kt, m.v};
    if (m.mask) a->inputs.push_back(m.mask);
    a->attrs["scale"] = attr_f(m.scale);
    Attribute body;
    body.kind = AttrKind::Graph;
    body.g = unfused_body(g, m, matched);
    a->attrs[kUnfusedAttr] = std::move(body);
    a->outputs = m.last->outputs;  // the fused node takes over the result
    for (const Node* n : matched) gone.insert(const_cast<Node*>(n));
    fused.push_back(std::move(a));
  }
  if (fused.empty()) return;
  erase_absorbed_nodes(g, gone);
  for (auto& a : fused) g.nodes.push_back(std::move(a));
  g.rebuild_uses();
  g.topo_sort();
  g.remove_dead();
}

}  // namespace ferrite
