#include "compiler/passes/fuse_message_passing.h"

#include <algorithm>
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

struct Match {
  const Node *scatter = nullptr, *gather = nullptr, *mul = nullptr, *unsqueeze = nullptr,
             *expand = nullptr;
  Value *x = nullptr, *src = nullptr, *dst = nullptr, *weight = nullptr, *data = nullptr,
        *shape = nullptr;
};

bool match_updates(Value* u, Match* m) {
  const Node* p = producer(u);
  if (onnx_op(p, "Mul") && p->inputs.size() == 2) {
    for (int side = 0; side < 2; ++side) {
      const Node* g = producer(p->inputs[side]);
      if (onnx_op(g, "Gather")) {
        m->mul = p;
        m->weight = p->inputs[1 - side];
        p = g;
        break;
      }
    }
  }
  if (!onnx_op(p, "Gather") || p->inputs.size() != 2 || p->attr_int("axis", 0) != 0) return false;
  m->gather = p;
  m->x = p->inputs[0];
  m->src = p->inputs[1];
  return m->x && m->src && (!m->mul || m->weight);
}

bool match_index(Value* idx, int64_t opset, Match* m) {
  const Node* e = producer(idx);
  if (!onnx_op(e, "Expand") || e->inputs.size() != 2 || !e->inputs[1]) return false;
  const Node* u = producer(e->inputs[0]);
  if (!onnx_op(u, "Unsqueeze") || !u->input(0)) return false;
  std::vector<int64_t> axes;
  if (opset >= 13) {
    if (!constant_ints(u->input(1), &axes)) return false;
  } else {
    axes = u->attr_ints("axes");
  }
  if (axes != std::vector<int64_t>{1} && axes != std::vector<int64_t>{-1}) return false;
  m->expand = e;
  m->unsqueeze = u;
  m->dst = u->inputs[0];
  m->shape = e->inputs[1];
  return true;
}

// The matched nodes again, as a subgraph over the fused node's inputs.
std::shared_ptr<Graph> unfused_body(const Graph& g, const Match& m) {
  auto body = std::make_shared<Graph>();
  body->name = "unfused";
  body->opsets = g.opsets;
  auto in = [&](const Value* v, const char* name) {
    return body->add_input(name, v ? v->type : TensorType{});
  };
  Value* x = in(m.x, "x");
  Value* src = in(m.src, "src");
  Value* dst = in(m.dst, "dst");
  Value* w = m.weight ? in(m.weight, "weight") : nullptr;
  Value* data = in(m.data, "data");
  Value* shape = in(m.shape, "shape");
  auto clone = [&](const Node* n, std::vector<Value*> ins) {
    Value* out = body->add_value("");
    Node* c = body->add_node(n->op_type, std::move(ins), {out}, n->name);
    c->domain = n->domain;
    c->attrs = n->attrs;
    return out;
  };
  Value* msg = clone(m.gather, {x, src});
  if (m.mul) msg = m.mul->inputs[0] == m.weight ? clone(m.mul, {w, msg}) : clone(m.mul, {msg, w});
  std::vector<Value*> unsqueeze_in{dst};
  if (m.unsqueeze->input(1))
    unsqueeze_in.push_back(body->add_constant("axes", m.unsqueeze->input(1)->data));
  Value* idx = clone(m.expand, {clone(m.unsqueeze, unsqueeze_in), shape});
  body->add_output(clone(m.scatter, {data, idx, msg}));
  body->validate();
  return body;
}

}  // namespace

void fuse_message_passing(Graph& g) {
  g.rebuild_uses();
  const std::set<std::string> captured = captured_names(g);
  std::vector<std::unique_ptr<Node>> fused;
  for (const auto& n : g.nodes) {
    if (!onnx_op(n.get(), "ScatterElements") || n->inputs.size() != 3 || !n->outputs[0]) continue;
    if (n->attr_int("axis", 0) != 0) continue;
    const std::string reduction = n->attr_string("reduction", "none");
    if (reduction != "add" && reduction != "max" && reduction != "min") continue;
    Match m;
    m.scatter = n.get();
    m.data = n->inputs[0];
    if (!m.data || !match_updates(n->inputs[2], &m) || !match_index(n->inputs[1], g.opset(""), &m))
      continue;
    // A value a subgraph reads by name must keep its producer.
    if (captured.count(n->outputs[0]->name)) continue;
    auto s = std::make_unique<Node>();
    s->op_type = "SegmentReduce";
    s->domain = kFerriteDomain;
    s->name = n->name;
    s->inputs = {m.x, m.src, m.dst, m.weight, m.data, m.shape};
    s->attrs["reduction"] = attr_s(reduction);
    Attribute body;
    body.kind = AttrKind::Graph;
    body.g = unfused_body(g, m);
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
