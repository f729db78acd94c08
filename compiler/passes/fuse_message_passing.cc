#include "compiler/passes/fuse_message_passing.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/passes/captured_names.h"

namespace ferrite {
namespace {

bool onnx_op(const Node* n, const char* op) {
  return n && (n->domain.empty() || n->domain == "ai.onnx") && n->op_type == op;
}

const Node* producer(const Value* v) {
  return v ? v->producer : nullptr;
}

// The ints of a constant value, or false.
bool constant_ints(const Value* v, std::vector<int64_t>* out) {
  if (!v || !v->is_constant()) return false;
  const TensorData& d = *v->data;
  if (d.dtype != DType::I64 && d.dtype != DType::I32) return false;
  out->clear();
  for (int64_t i = 0; i < d.elements(); ++i) out->push_back(d.int_at(i));
  return true;
}

// v [E] as a column: Unsqueeze(v, axes [1] or [-1]) -> [E, 1], then (`expanded`)
// Expand(..., shape) -> [E, F] (the lowering checks the shape).
struct Column {
  const Node *unsqueeze = nullptr, *expand = nullptr;
  Value *v = nullptr, *shape = nullptr;
};

bool match_column(Value* idx, int64_t opset, bool expanded, Column* c) {
  const Node* e = producer(idx);
  if (expanded) {
    if (!onnx_op(e, "Expand") || e->inputs.size() != 2 || !e->inputs[1]) return false;
    c->expand = e;
    c->shape = e->inputs[1];
    idx = e->inputs[0];
  }
  const Node* u = producer(idx);
  if (!onnx_op(u, "Unsqueeze") || !u->input(0)) return false;
  std::vector<int64_t> axes;
  if (opset >= 13) {
    if (!constant_ints(u->input(1), &axes)) return false;
  } else {
    axes = u->attr_ints("axes");
  }
  if (axes != std::vector<int64_t>{1} && axes != std::vector<int64_t>{-1}) return false;
  c->unsqueeze = u;
  c->v = u->inputs[0];
  return true;
}

struct Match {
  const Node *scatter = nullptr, *gather = nullptr, *mul = nullptr;
  Column gather_idx, scatter_idx;  // gather_idx: GatherElements only
  Value *x = nullptr, *weight = nullptr, *data = nullptr;
};

// Gather(x, src, axis 0), or GatherElements(x, src as an expanded column, axis 0); then
// optionally Mul by a per-edge weight, in either order.
bool match_updates(Value* u, int64_t opset, Match* m) {
  const Node* p = producer(u);
  auto gathers = [](const Node* n) { return onnx_op(n, "Gather") || onnx_op(n, "GatherElements"); };
  if (onnx_op(p, "Mul") && p->inputs.size() == 2) {
    for (int side = 0; side < 2; ++side) {
      const Node* g = producer(p->inputs[side]);
      if (gathers(g)) {
        m->mul = p;
        m->weight = p->inputs[1 - side];
        p = g;
        break;
      }
    }
  }
  if (!gathers(p) || p->inputs.size() != 2 || p->attr_int("axis", 0) != 0 || !p->inputs[0] ||
      !p->inputs[1] || (m->mul && !m->weight))
    return false;
  m->gather = p;
  m->x = p->inputs[0];
  if (p->op_type == "Gather") {
    m->gather_idx.v = p->inputs[1];
    return true;
  }
  return match_column(p->inputs[1], opset, true, &m->gather_idx);
}

// ScatterElements(data, dst as an expanded column, m, axis 0), or ScatterND(data, dst as
// a column, m); reduction add, max or min.
bool match_scatter(const Node* n, int64_t opset, Match* m) {
  const bool elements = onnx_op(n, "ScatterElements");
  if ((!elements && !onnx_op(n, "ScatterND")) || n->inputs.size() != 3 || !n->outputs[0] ||
      !n->inputs[0] || !n->inputs[1] || !n->inputs[2])
    return false;
  if (elements && n->attr_int("axis", 0) != 0) return false;
  const std::string reduction = n->attr_string("reduction", "none");
  if (reduction != "add" && reduction != "max" && reduction != "min") return false;
  m->scatter = n;
  m->data = n->inputs[0];
  return match_column(n->inputs[1], opset, elements, &m->scatter_idx) &&
         match_updates(n->inputs[2], opset, m);
}

// The matched nodes again, as a subgraph whose inputs are the fused node's non-null ones,
// in order.
std::shared_ptr<Graph> unfused_body(const Graph& g, const Match& m,
                                    const std::vector<Value*>& node_inputs) {
  auto body = std::make_shared<Graph>();
  body->name = "unfused";
  body->opsets = g.opsets;
  std::map<const Value*, Value*> local;
  static const char* kNames[] = {"x",    "src",           "dst",         "weight",
                                 "data", "scatter_shape", "gather_shape"};
  for (size_t i = 0; i < node_inputs.size(); ++i)
    if (node_inputs[i]) local[node_inputs[i]] = body->add_input(kNames[i], node_inputs[i]->type);
  auto clone = [&](const Node* n, std::vector<Value*> ins) {
    Value* out = body->add_value("");
    Node* c = body->add_node(n->op_type, std::move(ins), {out}, n->name);
    c->domain = n->domain;
    c->attrs = n->attrs;
    return out;
  };
  auto column = [&](const Column& c) {
    std::vector<Value*> ins{local.at(c.v)};
    if (c.unsqueeze->input(1))
      ins.push_back(body->add_constant("axes", c.unsqueeze->input(1)->data));
    Value* col = clone(c.unsqueeze, ins);
    return c.expand ? clone(c.expand, {col, local.at(c.shape)}) : col;
  };
  Value* gather_index =
      m.gather->op_type == "Gather" ? local.at(m.gather_idx.v) : column(m.gather_idx);
  Value* msg = clone(m.gather, {local.at(m.x), gather_index});
  if (m.mul) {
    Value* w = local.at(m.weight);
    msg = m.mul->inputs[0] == m.weight ? clone(m.mul, {w, msg}) : clone(m.mul, {msg, w});
  }
  body->add_output(clone(m.scatter, {local.at(m.data), column(m.scatter_idx), msg}));
  body->validate();
  return body;
}

}  // namespace

void fuse_message_passing(Graph& g) {
  g.rebuild_uses();
  const std::set<std::string> captured = captured_names(g);
  std::vector<std::unique_ptr<Node>> fused;
  for (const auto& n : g.nodes) {
    Match m;
    if (!match_scatter(n.get(), g.opset(""), &m)) continue;
    // A value a subgraph reads by name must keep its producer.
    if (captured.count(n->outputs[0]->name)) continue;
    auto s = std::make_unique<Node>();
    s->op_type = "SegmentReduce";
    s->domain = kFerriteDomain;
    s->name = n->name;
    s->inputs = {m.x,    m.gather_idx.v,      m.scatter_idx.v,   m.weight,
                 m.data, m.scatter_idx.shape, m.gather_idx.shape};
    s->attrs["reduction"] = attr_s(n->attr_string("reduction", "none"));
    Attribute body;
    body.kind = AttrKind::Graph;
    body.g = unfused_body(g, m, s->inputs);
    s->attrs[kUnfusedAttr] = std::move(body);
    // The fused node takes over the scatter's output value.
    s->outputs = n->outputs;
    n->outputs.clear();
    fused.push_back(std::move(s));
  }
  if (fused.empty()) return;
  for (auto& s : fused) g.nodes.push_back(std::move(s));
  g.rebuild_uses();
  g.topo_sort();
  g.remove_dead();
}

}  // namespace ferrite
