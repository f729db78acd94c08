#include "compiler/passes/fuse_extern_epilogues.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "compiler/graph/ferrite_ops.h"
#include "compiler/graph/post_op_attrs.h"
#include "compiler/passes/captured_names.h"

namespace ferrite {
namespace {

constexpr size_t kMaxPostOps = 8;

// What one match absorbs: post-ops (a binary one's `input` indexes `operands`), the nodes
// it removes, and the value the extern produces afterwards.
struct Match {
  std::vector<PostOp> ops;
  std::vector<Value*> operands;
  std::vector<Node*> nodes;
  Value* out = nullptr;
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

  // Types are not known before lowering: the lowering attaches what fits (float32, operands
  // that broadcast to the extern's output) and applies the rest as pointwise ops.
  bool takes_post_ops(const Node& n) const {
    if (!n.domain.empty() && n.domain != "ai.onnx" && n.domain != kFerriteDomain) return false;
    if (own_inputs(n) == 0 || n.outputs.size() != 1 || !n.outputs[0]) return false;
    return n.inputs.size() <= own_inputs(n);  // not fused before
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

  // Clip's bound (attribute before opset 11, optional constant input since): false when it
  // is not a constant.
  bool clip_bound(const Node& u, size_t input, const char* attr, float dflt, float* out) const {
    if (g_.opset("") < 11) {
      *out = static_cast<float>(u.attr_float(attr, dflt));
      return true;
    }
    const Value* c = u.input(input);
    if (!c) {
      *out = dflt;
      return true;
    }
    if (!c->is_constant() || c->data->dtype != DType::F32 || c->data->elements() != 1) return false;
    *out = static_cast<float>(c->data->float_at(0));
    return true;
  }

  bool match_unary(Node* u, Value* v, Match* m) const {
    if (!single_output(*u) || u->input(0) != v) return false;
    const std::string& op = u->op_type;
    PostOp p;
    constexpr float inf = std::numeric_limits<float>::infinity();
    if (op == "Relu" && u->inputs.size() == 1) {
      p.kind = PostOpKind::Relu;
    } else if (op == "LeakyRelu") {
      p = PostOp{PostOpKind::LeakyRelu, static_cast<float>(u->attr_float("alpha", 0.01))};
    } else if (op == "Elu") {
      p = PostOp{PostOpKind::Elu, static_cast<float>(u->attr_float("alpha", 1.0))};
    } else if (op == "Sigmoid") {
      p.kind = PostOpKind::Sigmoid;
    } else if (op == "Tanh") {
      p.kind = PostOpKind::Tanh;
    } else if (op == "HardSwish") {
      p.kind = PostOpKind::HardSwish;
    } else if (op == "HardSigmoid") {
      p = PostOp{PostOpKind::HardSigmoid, static_cast<float>(u->attr_float("alpha", 0.2)),
                 static_cast<float>(u->attr_float("beta", 0.5))};
    } else if (op == "Gelu") {
      const std::string approx = u->attr_string("approximate", "none");
      if (approx != "none" && approx != "tanh") return false;
      p.kind = approx == "tanh" ? PostOpKind::GeluTanh : PostOpKind::GeluErf;
    } else if (op == "Clip") {
      p.kind = PostOpKind::Clip;
      if (!clip_bound(*u, 1, "min", -inf, &p.alpha) || !clip_bound(*u, 2, "max", inf, &p.beta))
        return false;
    } else {
      return false;
    }
    m->ops.push_back(p);
    m->nodes.push_back(u);
    m->out = u->outputs[0];
    return true;
  }

  bool match_binary(Node* u, Value* v, Match* m) const {
    static const std::pair<const char*, PostOpKind> kinds[] = {
        {"Add", PostOpKind::Add}, {"Sum", PostOpKind::Add}, {"Sub", PostOpKind::Sub},
        {"Mul", PostOpKind::Mul}, {"Div", PostOpKind::Div}, {"Max", PostOpKind::Max},
        {"Min", PostOpKind::Min}};
    if (!single_output(*u)) return false;
    const auto* k = std::find_if(std::begin(kinds), std::end(kinds),
                                 [&](const auto& e) { return u->op_type == e.first; });
    Value* t = other(*u, v);
    if (k == std::end(kinds) || !t) return false;
    PostOp p{k->second, 0, 0, static_cast<int32_t>(m->operands.size())};
    if (u->input(1) == v) {  // t op y
      if (p.kind == PostOpKind::Div) return false;
      if (p.kind == PostOpKind::Sub) {  // t - y = (-y) + t
        m->ops.push_back(PostOp{PostOpKind::Linear, -1.0f, 0.0f});
        p.kind = PostOpKind::Add;
      }
    }
    m->ops.push_back(p);
    m->operands.push_back(t);
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
      m->ops.push_back(PostOp{PostOpKind::Silu});
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
      m->ops.push_back(PostOp{PostOpKind::GeluErf});
      m->nodes = {d, e, a, m1, m2};
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

  void fuse_into(Node* n) {
    if (absorbed_.count(n) || !takes_post_ops(*n)) return;
    std::vector<PostOp> post;
    for (;;) {
      Match m;
      if (!match(n->outputs[0], &m) || post.size() + m.ops.size() > kMaxPostOps) break;
      if (post.empty()) n->inputs.resize(own_inputs(*n), nullptr);
      for (PostOp p : m.ops) {
        if (post_op_is_binary(p.kind)) {
          n->inputs.push_back(m.operands[static_cast<size_t>(p.input)]);
          p.input = static_cast<int32_t>(n->inputs.size() - 1);
        }
        post.push_back(p);
      }
      for (Node* u : m.nodes) {
        forget_reader(u);
        u->inputs.clear();
        u->outputs.clear();
        absorbed_.insert(u);
      }
      for (Value* t : m.operands) add_reader(t, n);
      n->outputs[0] = m.out;  // the extern now produces what the last absorbed node did
      m.out->producer = n;
      m.out->output_index = 0;
    }
    if (!post.empty()) write_post_op_attrs(n, post);
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
