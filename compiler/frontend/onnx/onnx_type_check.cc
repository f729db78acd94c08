// Element types against the schemas' type constraints, as onnx.checker's full check does
// with type inference: each node's inputs must have types its constraints allow, inputs
// (and outputs) sharing a type variable must agree, and a declared output type must be the
// one the node computes. Types come from graph inputs, initializers, constants and
// value_info, and flow through nodes whose output type a constraint fixes (a variable bound
// by an input, a single allowed type, Cast's `to`); a subgraph sees its enclosing graphs'
// types. Values of unknown type (sequences and optionals, unnamed, untyped) are not checked.
#include <cstring>
#include <map>
#include <set>

#include "compiler/frontend/onnx/onnx_check.h"
#include "compiler/frontend/onnx/onnx_schemas.h"
#include "compiler/plan/error.h"

namespace ferrite::onnx {

namespace {

// ONNX's names for TensorProto.DataType numbers (as the schemas write them).
const char* onnx_type_name(int t) {
  static const char* const kNames[] = {
      "undefined",      "float",    "uint8",        "int8",           "uint16",
      "int16",          "int32",    "int64",        "string",         "bool",
      "float16",        "double",   "uint32",       "uint64",         "complex64",
      "complex128",     "bfloat16", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2",
      "float8e5m2fnuz", "uint4",    "int4",         "float4e2m1",     "float8e8m0",
      "uint2",          "int2"};
  return t >= 0 && t < 27 ? kNames[t] : "unknown";
}

std::string allowed_types(uint64_t mask) {
  std::string s;
  for (int t = 1; t < 32; ++t) {
    if (mask >> t & 1) s += (s.empty() ? "" : ", ") + std::string(onnx_type_name(t));
  }
  if (mask & ~kTensorBits) s += s.empty() ? "non-tensor types" : ", non-tensor types";
  return s;
}

bool allows(const SchemaConstraint& c, DType t) {
  return c.mask >> static_cast<int>(t) & 1;
}

// The single tensor type a constraint allows, if it allows exactly one and nothing else.
DType only_type(const SchemaConstraint& c) {
  uint64_t m = c.mask;
  if (!m || (m & (m - 1))) return DType::Undefined;
  DType t;
  return m & kTensorBits && dtype_from_onnx(__builtin_ctzll(m), &t) ? t : DType::Undefined;
}

class TypeChecker {
 public:
  TypeChecker(const Graph& g, const TypeChecker* outer) : g_(g), outer_(outer) {
    captures_.insert(g.captures.begin(), g.captures.end());
  }

  void run() {
    for (const auto& n : g_.nodes) check(*n);
  }

 private:
  // A node's type variables (by constraint index) as its inputs and outputs bind them, with
  // what bound each, for the message.
  struct Binding {
    DType type = DType::Undefined;
    std::string from;
  };
  using Bindings = std::map<uint16_t, Binding>;

  DType type_by_name(const std::string& name) const {
    if (const Value* v = g_.find(name)) return type_of(v);
    return outer_ ? outer_->type_by_name(name) : DType::Undefined;
  }

  DType type_of(const Value* v) const {
    if (captures_.count(v) && outer_) return outer_->type_by_name(v->name);
    auto it = inferred_.find(v);
    if (it != inferred_.end()) return it->second;
    if (v->data) return v->data->dtype;
    return declared_type(v);
  }

  // A sequence's or optional's dtype is its tensors', which no constraint here describes:
  // such values are not checked.
  static DType declared_type(const Value* v) {
    return v->type.container == Container::Tensor ? v->type.dtype : DType::Undefined;
  }

  void check_param(const Node& n, const OpSchema& s, const SchemaParam& p, const char* what,
                   size_t i, DType t, Bindings* b) {
    const SchemaConstraint& c = p.types();
    std::string who =
        str_cat("onnx: node ", n.describe(), ": ", what, " ", i, " ('", p.name(), "')");
    if (!allows(c, t)) {
      // A type variable is named; a literal type ("tensor(int64)") says it all.
      bool variable = std::strchr(c.name(), '(') == nullptr;
      fail(who, " is ", onnx_type_name(static_cast<int>(t)), ", but ", s.describe(),
           " allows only ", allowed_types(c.mask), variable ? " for " : "",
           variable ? c.name() : "");
    }
    if (!p.homogeneous) return;
    Binding& bound = (*b)[p.constraint];
    if (bound.type == DType::Undefined) {
      bound = {t, str_cat(what, " ", i, " ('", p.name(), "')")};
    } else if (bound.type != t) {
      fail(who, " is ", onnx_type_name(static_cast<int>(t)), ", but ", bound.from, " is ",
           onnx_type_name(static_cast<int>(bound.type)), " and ", s.describe(),
           " needs both of one type ", c.name());
    }
  }

  // The type the node gives an output, where its schema determines it.
  DType computed(const Node& n, const SchemaParam& p, const Bindings& b) const {
    if (n.domain.empty()) {
      DType t;
      if (chosen_by_attribute(n, &t)) return t;
    }
    DType only = only_type(p.types());
    if (only != DType::Undefined) return only;
    auto it = b.find(p.constraint);
    return p.homogeneous && it != b.end() ? it->second.type : DType::Undefined;
  }

  // Ops whose output type an attribute chooses (their schemas allow many types).
  bool chosen_by_attribute(const Node& n, DType* t) const {
    const std::string& op = n.op_type;
    DType input = n.input(0) ? type_of(n.input(0)) : DType::Undefined;
    if (op == "Cast") return attr_dtype(n, "to", DType::Undefined, t);
    if (op == "RandomNormal" || op == "RandomUniform") return attr_dtype(n, "dtype", DType::F32, t);
    if (op == "Multinomial") return attr_dtype(n, "dtype", DType::I32, t);
    if (op == "EyeLike" || op == "RandomNormalLike" || op == "RandomUniformLike" ||
        op == "Bernoulli") {
      return attr_dtype(n, "dtype", input, t);
    }
    if (op == "ConstantOfShape") {
      auto it = n.attrs.find("value");
      *t = it == n.attrs.end() ? DType::F32 : it->second.t ? it->second.t->dtype : DType::Undefined;
      return true;
    }
    return false;
  }

  static bool attr_dtype(const Node& n, const char* key, DType dflt, DType* t) {
    auto it = n.attrs.find(key);
    if (it == n.attrs.end()) {
      *t = dflt;
    } else if (it->second.kind != AttrKind::Int || !dtype_from_onnx(it->second.i, t)) {
      *t = DType::Undefined;
    }
    return true;
  }

  void check(const Node& n) {
    for (const auto& kv : n.attrs) {
      if (kv.second.g) TypeChecker(*kv.second.g, this).run();
      for (const auto& sub : kv.second.graphs) TypeChecker(*sub, this).run();
    }
    const OpSchema* s = find_schema(n.domain, n.op_type, g_.opset(n.domain));
    if (!s || s->deprecated()) return;
    Bindings b;
    for (size_t i = 0; i < n.inputs.size() && s->n_inputs; ++i) {
      DType t = n.inputs[i] ? type_of(n.inputs[i]) : DType::Undefined;
      if (t == DType::Undefined) continue;
      check_param(n, *s, s->input(std::min<size_t>(i, s->n_inputs - 1)), "input", i, t, &b);
    }
    for (size_t i = 0; i < n.outputs.size() && s->n_outputs; ++i) {
      const SchemaParam& p = s->output(std::min<size_t>(i, s->n_outputs - 1));
      const Value* v = n.outputs[i];
      DType declared = declared_type(v), t = computed(n, p, b);
      if (v->type.container != Container::Tensor) continue;
      if (declared != DType::Undefined && t != DType::Undefined && declared != t) {
        fail("onnx: node ", n.describe(), ": output ", i, " ('", v->name, "') is declared ",
             onnx_type_name(static_cast<int>(declared)), ", but ", s->describe(), " computes ",
             onnx_type_name(static_cast<int>(t)));
      }
      if (t == DType::Undefined) t = declared;
      if (t == DType::Undefined) continue;
      check_param(n, *s, p, "output", i, t, &b);
      inferred_[v] = t;
    }
  }

  const Graph& g_;
  const TypeChecker* outer_;
  std::set<const Value*> captures_;
  std::map<const Value*, DType> inferred_;
};

}  // namespace

void check_types(const Graph& g) {
  TypeChecker(g, nullptr).run();
}

}  // namespace ferrite::onnx
