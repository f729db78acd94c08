#include "compiler/passes/fold_qdq_pairs.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler/graph/ferrite_ops.h"
#include "compiler/passes/captured_names.h"
#include "compiler/passes/qdq_match.h"

namespace ferrite {
namespace {

// A per-tensor parameter pair with constant values: the scale's float32 and the zero point.
struct QParams {
  DType type = DType::Undefined;
  float scale = 0;
  int64_t zero = 0;

  bool operator==(const QParams& o) const {
    return type == o.type && std::memcmp(&scale, &o.scale, sizeof scale) == 0 && zero == o.zero;
  }
};

bool params_of(const Node* n, const Value* tensor, QParams* p) {
  if (!per_tensor(n)) return false;
  const Value *s = n->input(1), *z = n->input(2);
  if (!s->is_constant() || (z && !z->is_constant())) return false;
  p->type = quantized_type(n, tensor);
  p->scale = static_cast<float>(s->data->float_at(0));
  p->zero = z ? z->data->int_at(0) : 0;
  // Normal and positive: (q - z) * s / s rounds back to q - z, and Q is increasing.
  return p->type != DType::Undefined && std::isfinite(p->scale) &&
         p->scale >= std::numeric_limits<float>::min() &&
         p->scale <= std::numeric_limits<float>::max() / 512;
}

struct TypeRange {
  int64_t lo, hi;
};
TypeRange range_of(DType t) {
  return t == DType::U8 ? TypeRange{0, 255} : TypeRange{-128, 127};
}

// QuantizeLinear of one float32 value, as the lowering computes it (the division in float32,
// rounded half to even, saturated).
int64_t quantize(float x, const QParams& p) {
  const TypeRange r = range_of(p.type);
  const double q = std::nearbyint(static_cast<double>(x / p.scale)) + static_cast<double>(p.zero);
  if (std::isnan(q)) return p.zero;
  return static_cast<int64_t>(
      std::fmin(std::fmax(q, static_cast<double>(r.lo)), static_cast<double>(r.hi)));
}

// A constant float32 scalar input, or `dflt` when omitted; false when it is not a constant.
bool scalar_bound(const Node* n, size_t i, float dflt, float* out) {
  const Value* v = n->input(i);
  if (!v) {
    *out = dflt;
    return true;
  }
  if (!v->is_constant() || v->data->dtype != DType::F32 || v->data->elements() != 1) return false;
  *out = static_cast<float>(v->data->float_at(0));
  return !std::isnan(*out);
}

// Relu / Clip's bounds (attributes before opset 11, inputs after).
bool clip_bounds(const Graph& g, const Node* f, float* lo, float* hi) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  if (f->op_type == "Relu") {
    *lo = 0;
    *hi = inf;
    return true;
  }
  if (g.opset() < 11) {
    *lo = static_cast<float>(f->attr_float("min", -inf));
    *hi = static_cast<float>(f->attr_float("max", inf));
    return !std::isnan(*lo) && !std::isnan(*hi);
  }
  return scalar_bound(f, 1, -inf, lo) && scalar_bound(f, 2, inf, hi);
}

// Ops whose input 0 only moves (or, a max, picks) elements: the other inputs are shapes,
// indices or attributes, which stay.
bool moves_data(const Node* f) {
  static const char* const kOps[] = {"Reshape",   "Transpose",    "Flatten",      "Squeeze",
                                     "Unsqueeze", "Slice",        "Gather",       "Expand",
                                     "Tile",      "DepthToSpace", "SpaceToDepth", "GlobalMaxPool"};
  for (const char* op : kOps)
    if (is_onnx_op(f, op)) return true;
  return is_onnx_op(f, "MaxPool") && (f->outputs.size() == 1 || !f->outputs[1]);
}

Value* int_constant(Graph& g, const std::string& name, DType t, int64_t v) {
  auto data = std::make_shared<TensorData>();
  data->dtype = t;
  data->shape = {};
  const uint8_t byte = static_cast<uint8_t>(static_cast<int8_t>(v));
  data->bytes.assign(1, byte);
  return g.add_constant(name, data);
}

// Rewrites the QuantizeLinear q (reading f's output, f reading DQ(xs[0]), or a Concat
// reading DQ(xs[i]) at each input) into f on the xs; false when f is none of the ops above.
bool rewrite(Graph& g, Node* q, const Node* f, const std::vector<Value*>& xs, const QParams& p) {
  std::vector<Value*> ins = xs;
  std::string op = "Identity";
  std::map<std::string, Attribute> attrs;
  if (f && (is_onnx_op(f, "Relu") || is_onnx_op(f, "Clip"))) {
    float lo, hi;
    if (!clip_bounds(g, f, &lo, &hi)) return false;
    const TypeRange r = range_of(p.type);
    const int64_t qlo = quantize(lo, p), qhi = quantize(hi, p);
    if (qlo > r.lo || qhi < r.hi) {
      op = "Clip";
      if (g.opset() < 11) {
        attrs["min"] = attr_f(static_cast<double>(qlo));
        attrs["max"] = attr_f(static_cast<double>(qhi));
      } else {
        ins.push_back(int_constant(g, q->name + "_min", p.type, qlo));
        ins.push_back(int_constant(g, q->name + "_max", p.type, qhi));
      }
    }
  } else if (f && is_onnx_op(f, "Concat")) {
    op = f->op_type;
    attrs = f->attrs;
  } else if (f) {
    if (!moves_data(f)) return false;
    op = f->op_type;
    attrs = f->attrs;
    for (size_t i = 1; i < f->inputs.size(); ++i) ins.push_back(f->inputs[i]);
  }
  forget_reader(q);
  q->op_type = op;
  q->domain.clear();
  q->attrs = attrs;
  q->inputs = ins;
  for (Value* v : ins)
    if (v) add_reader(v, q);
  return true;
}

// The DequantizeLinear of `v` with parameters `p`; null otherwise.
const Node* matching_dequantize(const Value* v, const QParams& p) {
  const Node* d = dequantize_of(v);
  QParams dp;
  if (!d || !params_of(d, d->input(0), &dp) || !(dp == p)) return nullptr;
  return d;
}

// Absorbs the integer Clip or Identity `n` (one the rewrite made) into the QLinearConv /
// QLinearMatMul computing its input, when nothing else reads that.
bool absorb(Node* n, const std::set<const Value*>& outputs, const std::set<std::string>& captured) {
  Value* x = n->input(0);
  Node* p = x ? x->producer : nullptr;
  if (!p || !(is_onnx_op(p, "QLinearConv") || is_onnx_op(p, "QLinearMatMul")) ||
      p->has_attr(kSaturateAttr) || x->users.size() != 1 || outputs.count(x) ||
      captured.count(x->name))
    return false;
  if (n->op_type == "Clip") {
    int64_t lo, hi;
    if (n->has_attr("min")) {
      lo = static_cast<int64_t>(n->attr_float("min", 0));
      hi = static_cast<int64_t>(n->attr_float("max", 0));
    } else {
      lo = n->input(1)->data->int_at(0);
      hi = n->input(2)->data->int_at(0);
    }
    p->attrs[kSaturateAttr] = attr_is({lo, hi});
  }
  Value* out = n->outputs[0];
  x->producer = nullptr;
  p->outputs[0] = out;
  out->producer = p;
  out->output_index = 0;
  n->inputs.clear();
  n->outputs.clear();
  return true;
}

// A float value f computed from DQ(x) exactly as DQ(f(x)) would be (f moves or picks
// elements: the dequantization is increasing and elementwise), and the QuantizeLinear that
// now computes f(x) with its parameters.
struct Twin {
  Value* y;
  Node* q;
  Value *scale, *zero;
};

// Every other reader of each twin's float value reads DQ(f(x)) instead, so that f is no
// longer computed in float too (resnet18's max pool feeds a QLinearConv and, in float, the
// residual Add: the pool ran twice, once dequantizing every tap).
void read_twins(Graph& g, const std::vector<Twin>& twins) {
  const std::set<std::string> captured = captured_names(g);
  bool added = false;
  for (const Twin& t : twins) {
    if (t.y->users.empty() || captured.count(t.y->name)) continue;
    Value* out = g.add_value(t.y->name + "_dq", t.y->type);
    std::vector<Value*> ins = {t.q->outputs[0], t.scale};
    if (t.zero) ins.push_back(t.zero);
    const std::vector<Node*> users = t.y->users;
    Node* dq = g.add_node("DequantizeLinear", ins, {out}, t.q->name + "_dq");
    for (Node* u : users)
      for (Value*& in : u->inputs)
        if (in == t.y && u != dq) in = out;
    added = true;
  }
  if (added) g.topo_sort();
}

}  // namespace

void fold_qdq_pairs(Graph& g) {
  g.rebuild_uses();
  std::set<const Node*> rewritten;
  std::vector<Twin> twins;
  for (const auto& owner : g.nodes) {
    Node* q = owner.get();
    if (!is_onnx_op(q, "QuantizeLinear") || q->outputs.size() != 1 || !q->outputs[0]) continue;
    QParams p;
    if (!params_of(q, nullptr, &p)) continue;
    const Value* y = q->input(0);
    Node* f = y->producer;
    std::vector<Value*> xs;
    if (const Node* d = matching_dequantize(y, p)) {
      f = nullptr;
      xs.push_back(d->input(0));
    } else if (f && !f->outputs.empty() && f->outputs[0] == y && !f->inputs.empty()) {
      // f's data input; every input of a Concat.
      const size_t n = is_onnx_op(f, "Concat") ? f->inputs.size() : 1;
      for (size_t i = 0; i < n; ++i) {
        const Node* d = matching_dequantize(f->input(i), p);
        if (!d) break;
        xs.push_back(d->input(0));
      }
      if (xs.size() != n) continue;
    } else {
      continue;
    }
    Value *scale = q->input(1), *zero = q->input(2);
    if (!rewrite(g, q, f, xs, p)) continue;
    rewritten.insert(q);
    if (f && (moves_data(f) || is_onnx_op(f, "Concat")))
      twins.push_back({f->outputs[0], q, scale, zero});
  }
  if (rewritten.empty()) return;
  read_twins(g, twins);
  g.remove_dead();
  g.rebuild_uses();
  const std::set<std::string> captured = captured_names(g);
  const std::set<const Value*> outputs(g.outputs.begin(), g.outputs.end());
  std::set<Node*> absorbed;
  for (const auto& owner : g.nodes) {  // the rewritten nodes that remove_dead kept
    Node* n = owner.get();
    if (rewritten.count(n) && (n->op_type == "Clip" || n->op_type == "Identity") &&
        absorb(n, outputs, captured))
      absorbed.insert(n);
  }
  if (!absorbed.empty()) erase_absorbed_nodes(g, absorbed);
}

}  // namespace ferrite
