#include "compiler/passes/fuse_extern_epilogues.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler/graph/ferrite_ops.h"
#include "compiler/passes/captured_names.h"
#include "compiler/plan/error.h"

namespace ferrite {
namespace {

constexpr size_t kMaxSteps = 8;

// What one match absorbs: the nodes, cloned into the epilogue in order, or, for torch's
// exported exact gelu, replaced by one Gelu node (`gelu`); and the value the extern produces
// afterwards.
struct Match {
  std::vector<Node*> nodes;
  bool gelu = false;
  Value* out = nullptr;
};

// The epilogue subgraph being built: inputs y and the operands, values by outer value.
struct Body {
  std::shared_ptr<Graph> g;
  std::map<const Value*, Value*> local;
  std::vector<Value*> operands;  // outer values of inputs 1, 2, ...
};

class Fuser {
 public:
  explicit Fuser(Graph& g) : g_(g), captured_(captured_names(g)) {}

  void run() {
    g_.rebuild_uses();
    for (const auto& owner : g_.nodes) fuse_into(owner.get());
    if (absorbed_.empty()) return;
    erase_absorbed_nodes(g_, absorbed_);
    g_.topo_sort();  // an operand may come after the extern in the old order
    g_.remove_dead();
  }

 private:
  static size_t own_inputs(const Node& n) {
    if (n.domain == kFerriteDomain) return n.op_type == "SegmentReduce" ? 7 : 0;
    if (n.op_type == "MatMul") return 2;
    if (n.op_type == "Conv" || n.op_type == "ConvTranspose" || n.op_type == "Gemm") return 3;
    return 0;
  }

  bool takes_epilogue(const Node& n) const {
    if (!n.domain.empty() && n.domain != "ai.onnx" && n.domain != kFerriteDomain) return false;
    if (own_inputs(n) == 0 || n.outputs.size() != 1 || !n.outputs[0]) return false;
    return n.inputs.size() <= own_inputs(n) && !n.has_attr(kEpilogueAttr);  // not fused before
  }

  // Whether a value may disappear into an extern: read only by `readers` (all absorbed by
  // the match), not a graph output, not read by a subgraph.
  bool private_to(const Value* v, std::initializer_list<const Node*> readers) const {
    if (captured_.count(v->name) || outputs_.count(v)) return false;
    if (v->users.size() != readers.size()) return false;
    for (const Node* u : v->users)
      if (std::find(readers.begin(), readers.end(), u) == readers.end()) return false;
    return true;
  }

  static bool scalar_near(const Value* c, double want) {
    if (!c || !c->is_constant() || c->data->dtype != DType::F32 || c->data->elements() != 1)
      return false;
    return std::fabs(c->data->float_at(0) - want) <= 1e-6 * std::fabs(want);
  }

  // The other operand of a two-input node one of whose operands is `v` (null otherwise).
  static Value* other(const Node& n, const Value* v) {
    if (n.inputs.size() != 2 || n.input(0) == n.input(1)) return nullptr;
    if (n.input(0) == v) return n.input(1);
    if (n.input(1) == v) return n.input(0);
    return nullptr;
  }

  static bool single_output(const Node& n) {
    return n.outputs.size() == 1 && n.outputs[0] != nullptr &&
           (n.domain.empty() || n.domain == "ai.onnx");
  }

  // The activations oneDNN and the portable tiles apply as post-ops; what they compute is
  // their lowering's (lower/pointwise_ops.cc).
  bool match_unary(Node* u, Value* v, Match* m) const {
    static const std::set<std::string> kOps{"Relu",      "LeakyRelu",   "Elu",  "Sigmoid", "Tanh",
                                            "HardSwish", "HardSigmoid", "Gelu", "Clip"};
    if (!single_output(*u) || u->input(0) != v || !kOps.count(u->op_type)) return false;
    for (size_t i = 1; i < u->inputs.size(); ++i)  // Clip's bounds: constants
      if (u->input(i) && !u->input(i)->is_constant()) return false;
    m->nodes.push_back(u);
    m->out = u->outputs[0];
    return true;
  }

  // y op t, and t op y for the commutative ops: t a bias, a scale or a residual.
  bool match_binary(Node* u, Value* v, Match* m) const {
    static const std::set<std::string> kOps{"Add", "Sum", "Sub", "Mul", "Div", "Max", "Min"};
    if (!single_output(*u) || !kOps.count(u->op_type) || !other(*u, v)) return false;
    if (u->input(1) == v && (u->op_type == "Sub" || u->op_type == "Div")) return false;
    m->nodes.push_back(u);
    m->out = u->outputs[0];
    return true;
  }

  // y * sigmoid(y): v read by Sigmoid and by the Mul of v and the sigmoid.
  bool match_silu(Value* v, Match* m) const {
    if (v->users.size() != 2) return false;
    for (int i = 0; i < 2; ++i) {
      Node *s = v->users[i], *mul = v->users[1 - i];
      if (s->op_type != "Sigmoid" || !single_output(*s) || mul->op_type != "Mul" ||
          !single_output(*mul) || other(*mul, v) != s->outputs[0] ||
          !private_to(s->outputs[0], {mul}))
        continue;
      m->nodes = {s, mul};
      m->out = mul->outputs[0];
      return true;
    }
    return false;
  }

  // torch's exported exact gelu: ((y * (erf(y / sqrt 2) + 1)) * 0.5), with the Div also
  // written as a Mul by 1/sqrt 2 and each commutative op's operands in either order.
  bool match_gelu(Value* v, Match* m) const {
    if (v->users.size() != 2) return false;
    for (int i = 0; i < 2; ++i) {
      Node *d = v->users[i], *m1 = v->users[1 - i];
      if (!single_output(*d) || !single_output(*m1) || m1->op_type != "Mul") continue;
      const bool div = d->op_type == "Div" && d->input(0) == v && scalar_near(d->input(1), M_SQRT2);
      const bool mul = d->op_type == "Mul" && scalar_near(other(*d, v), M_SQRT1_2);
      if (!div && !mul) continue;
      Value* dv = d->outputs[0];
      if (dv->users.size() != 1) continue;
      Node* e = dv->users[0];
      if (e->op_type != "Erf" || !single_output(*e) || e->input(0) != dv) continue;
      Value* ev = e->outputs[0];
      if (ev->users.size() != 1) continue;
      Node* a = ev->users[0];
      if (a->op_type != "Add" || !single_output(*a) || !scalar_near(other(*a, ev), 1.0)) continue;
      Value* av = a->outputs[0];
      if (other(*m1, v) != av) continue;
      Value* m1v = m1->outputs[0];
      if (m1v->users.size() != 1) continue;
      Node* m2 = m1v->users[0];
      if (m2->op_type != "Mul" || !single_output(*m2) || !scalar_near(other(*m2, m1v), 0.5))
        continue;
      if (!private_to(dv, {e}) || !private_to(ev, {a}) || !private_to(av, {m1}) ||
          !private_to(m1v, {m2}))
        continue;
      m->nodes = {d, e, a, m1, m2};
      m->gelu = true;
      m->out = m2->outputs[0];
      return true;
    }
    return false;
  }

  bool match(Value* v, Match* m) const {
    if (captured_.count(v->name) || outputs_.count(v)) return false;
    if (v->users.size() == 1)
      return match_unary(v->users[0], v, m) || match_binary(v->users[0], v, m);
    return match_silu(v, m) || match_gelu(v, m);
  }

  // The body's value for outer value x: y or an operand seen before, a constant (copied),
  // or a new operand (an input of the body and of the extern).
  Value* local(Body* b, Node* n, Value* x) {
    auto it = b->local.find(x);
    if (it != b->local.end()) return it->second;
    Value* l = x->is_constant() ? b->g->add_constant(x->name, x->data)
                                : b->g->add_input(str_cat("in", b->operands.size() + 1), x->type);
    if (!x->is_constant()) {
      b->operands.push_back(x);
      n->inputs.push_back(x);
      add_reader(x, n);
    }
    b->local[x] = l;
    return l;
  }

  void absorb(Body* b, Node* n, const Match& m) {
    if (m.gelu) {  // the five nodes of torch's exact gelu are ONNX's Gelu
      Value* out = b->g->add_value(m.out->name);
      b->g->add_node("Gelu", {local(b, n, n->outputs[0])}, {out}, m.nodes.back()->name);
      b->local[m.out] = out;
    } else {
      for (Node* u : m.nodes) {
        std::vector<Value*> ins;
        for (Value* x : u->inputs) ins.push_back(x ? local(b, n, x) : nullptr);
        Value* out = b->g->add_value(u->outputs[0]->name);
        Node* c = b->g->add_node(u->op_type, std::move(ins), {out}, u->name);
        c->attrs = u->attrs;
        b->local[u->outputs[0]] = out;
      }
    }
    for (Node* u : m.nodes) {
      forget_reader(u);
      u->inputs.clear();
      u->outputs.clear();
      absorbed_.insert(u);
    }
    n->outputs[0] = m.out;  // the extern now produces what the last absorbed node did
    m.out->producer = n;
    m.out->output_index = 0;
  }

  void fuse_into(Node* n) {
    if (absorbed_.count(n) || !takes_epilogue(*n)) return;
    Body b;
    size_t steps = 0;
    for (;;) {
      Match m;
      if (steps == kMaxSteps || !match(n->outputs[0], &m)) break;
      if (!b.g) {
        n->inputs.resize(own_inputs(*n), nullptr);
        b.g = std::make_shared<Graph>();
        b.g->name = "epilogue";
        b.g->opsets = g_.opsets;
        b.local[n->outputs[0]] = b.g->add_input("y", n->outputs[0]->type);
      }
      absorb(&b, n, m);
      ++steps;
    }
    if (!b.g) return;
    b.g->add_output(b.local.at(n->outputs[0]));
    b.g->validate();
    Attribute body;
    body.kind = AttrKind::Graph;
    body.g = std::move(b.g);
    n->attrs[kEpilogueAttr] = std::move(body);
  }

  Graph& g_;
  std::set<std::string> captured_;
  std::set<const Value*> outputs_{g_.outputs.begin(), g_.outputs.end()};
  std::set<Node*> absorbed_;
};

}  // namespace

void fuse_extern_epilogues(Graph& g) {
  Fuser(g).run();
}

}  // namespace ferrite
