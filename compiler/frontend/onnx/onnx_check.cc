// Opset imports, node structure and attributes, checked as onnx.checker checks them
// (onnx/checker.cc: check_model, check_node, check_attribute; OpSchema::Verify).
#include "compiler/frontend/onnx/onnx_check.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <set>
#include <vector>

#include "compiler/frontend/onnx/onnx_schemas.h"
#include "compiler/plan/error.h"

namespace ferrite::onnx {

namespace {

template <class... Args>
[[noreturn]] void unsupported(Args&&... args) {
  throw UnsupportedError(str_cat(std::forward<Args>(args)...));
}

std::string canonical_domain(const std::string& d) {
  return d == "ai.onnx" ? "" : d;
}

std::string domain_name(const std::string& d) {
  return d.empty() ? "ai.onnx" : d;
}

const char* attr_type_name(int t) {
  static const char* const kNames[] = {
      "undefined",      "float",      "int",        "string",  "tensor", "graph",
      "floats",         "ints",       "strings",    "tensors", "graphs", "sparse tensor",
      "sparse tensors", "type proto", "type protos"};
  return t >= 0 && t < 15 ? kNames[t] : "an unknown type";
}

// "takes 1", "takes 2 to 3", "takes at least 1".
std::string count_range(int64_t lo, int64_t hi) {
  if (hi == INT64_MAX) return str_cat("at least ", lo);
  if (lo == hi) return str_cat(lo);
  return str_cat(lo, " to ", hi);
}

// "1 or 3" from bit set {1, 3}.
std::string listed_counts(uint16_t bits) {
  std::string s;
  for (int n = 0; n < 16; ++n) {
    if (bits >> n & 1) s += (s.empty() ? "" : " or ") + std::to_string(n);
  }
  return s;
}

void check_params(const NodeProto& n, const OpSchema& s, bool inputs, const std::string& who) {
  const auto& names = inputs ? n.inputs : n.outputs;
  const char* what = inputs ? "input" : "output";
  size_t formal = inputs ? s.n_inputs : s.n_outputs;
  int64_t lo = inputs ? s.min_inputs() : s.min_outputs();
  int64_t hi = inputs ? s.max_inputs() : s.max_outputs();
  int64_t count = static_cast<int64_t>(names.size());
  if (count < lo || count > hi) {
    fail(who, ": ", count, " ", what, "s, but ", s.describe(), " takes ", count_range(lo, hi));
  }
  if (!inputs && s.output_counts && !(count < 16 && s.output_counts >> count & 1)) {
    fail(who, ": ", count, " outputs, but ", s.describe(), " gives ",
         listed_counts(s.output_counts));
  }
  for (size_t i = 0; i < names.size() && formal; ++i) {
    size_t f = std::min(i, formal - 1);
    const SchemaParam& p = inputs ? s.input(f) : s.output(f);
    if (i >= formal && p.opt() != ParamOption::Variadic) {
      fail(who, ": ", count, " ", what, "s, but ", s.describe(), " declares ", formal);
    }
    if (names[i].empty() && i < formal && p.opt() == ParamOption::Single) {
      fail(who, ": ", what, " ", i, " ('", p.name(), "') of ", s.describe(),
           " is required but its name is empty");
    }
  }
}

void check_attrs(const NodeProto& n, const OpSchema& s, int64_t ir_version,
                 const std::string& who) {
  std::set<std::string> seen;
  for (const AttributeProto& a : n.attributes) {
    if (!seen.insert(a.name).second) fail(who, ": attribute '", a.name, "' is given twice");
  }
  for (const AttributeProto& a : n.attributes) {
    // Names starting "__" are implementation details that onnx.checker ignores too.
    if (a.name.compare(0, 2, "__") == 0) continue;
    const SchemaAttr* sa = s.find_attr(a.name);
    if (!sa && s.allows_unchecked_attrs()) continue;
    if (!sa) fail(who, ": ", s.describe(), " has no attribute '", a.name, "'");
    int type =
        a.type != AttributeProto::kUndefined || ir_version >= 2 ? a.type : attribute_field_type(a);
    if (type != sa->type) {
      fail(who, ": attribute '", a.name, "' is ", attr_type_name(type), ", but ", s.describe(),
           " takes ", attr_type_name(sa->type));
    }
  }
  for (size_t i = 0; i < s.n_attrs; ++i) {
    const SchemaAttr& sa = s.attr(i);
    if (sa.required && !seen.count(sa.name())) {
      fail(who, ": ", s.describe(), " needs attribute '", sa.name(), "' (", attr_type_name(sa.type),
           ")");
    }
  }
}

// The value fields an attribute sets; onnx.checker wants at most one, matching `type`.
void check_attribute_fields(const AttributeProto& a, int64_t ir_version, const std::string& who) {
  int used = a.has_f + a.has_i + a.has_s + (a.t != nullptr) + (a.g != nullptr) + !a.floats.empty() +
             !a.ints.empty() + !a.strings.empty() + !a.tensors.empty() + !a.graphs.empty() +
             (a.sparse_count > 0) + (a.type_proto_count > 0);
  if (a.name.empty()) fail(who, ": an attribute has no name");
  if (used > 1) fail(who, ": attribute '", a.name, "' sets ", used, " value fields (one allowed)");
  if (a.type == AttributeProto::kUndefined) {
    if (ir_version >= 2) fail(who, ": attribute '", a.name, "' has no type");
    return;
  }
  int field = attribute_field_type(a);
  bool sparse =
      (a.type == AttributeProto::kSparseTensor || a.type == AttributeProto::kSparseTensors);
  bool type_proto = (a.type == AttributeProto::kTypeProto || a.type == AttributeProto::kTypeProtos);
  bool same = field == a.type || (sparse && a.sparse_count) || (type_proto && a.type_proto_count);
  if (used == 1 && !same) {
    fail(who, ": attribute '", a.name, "' is declared ", attr_type_name(a.type), " but holds ",
         attr_type_name(field));
  }
}

const GraphProto* graph_attr(const NodeProto& n, const char* key) {
  for (const AttributeProto& a : n.attributes) {
    if (a.name == key) return a.g.get();
  }
  return nullptr;
}

// A body's inputs and outputs against the node's (the schemas count only the node's):
// If's branches give its outputs; Loop's body takes (iteration, condition, carried...) and
// gives (condition, carried..., scan outputs...); Scan's body takes the states and scan
// inputs (Scan-8's node has sequence_lens first) and gives the states and scan outputs.
void check_body_arity(const NodeProto& n, const OpSchema& s, const std::string& who) {
  struct Body {
    const char* attr;
    size_t ins, outs;
  };
  std::vector<Body> bodies;
  size_t in = n.inputs.size(), out = n.outputs.size(), any = SIZE_MAX;
  if (n.op_type == "If") bodies = {{"then_branch", any, out}, {"else_branch", any, out}};
  if (n.op_type == "Loop") bodies = {{"body", in, out + 1}};
  if (n.op_type == "Scan") bodies = {{"body", s.since >= 9 ? in : in - 1, out}};
  for (const Body& b : bodies) {
    const GraphProto* g = graph_attr(n, b.attr);
    if (!g) continue;  // required attributes are checked already
    if (b.ins != any && g->inputs.size() != b.ins) {
      fail(who, ": its ", b.attr, " has ", g->inputs.size(), " inputs, ", s.describe(), " with ",
           in, " inputs needs ", b.ins);
    }
    if (g->outputs.size() != b.outs) {
      fail(who, ": its ", b.attr, " has ", g->outputs.size(), " outputs, ", s.describe(), " with ",
           out, " outputs needs ", b.outs);
    }
  }
}

}  // namespace

std::string describe_node(const NodeProto& n) {
  if (!n.name.empty()) return n.op_type + " '" + n.name + "'";
  if (!n.outputs.empty()) return n.op_type + " (output '" + n.outputs[0] + "')";
  return n.op_type + " (unnamed)";
}

int attribute_field_type(const AttributeProto& a) {
  if (a.g) return AttributeProto::kGraph;
  if (a.t) return AttributeProto::kTensor;
  if (a.has_s) return AttributeProto::kString;
  if (a.has_f) return AttributeProto::kFloat;
  if (a.has_i) return AttributeProto::kInt;
  if (!a.graphs.empty()) return AttributeProto::kGraphs;
  if (!a.tensors.empty()) return AttributeProto::kTensors;
  if (!a.strings.empty()) return AttributeProto::kStrings;
  if (!a.floats.empty()) return AttributeProto::kFloats;
  if (!a.ints.empty()) return AttributeProto::kInts;
  if (a.sparse_count) return AttributeProto::kSparseTensor;
  if (a.type_proto_count) return AttributeProto::kTypeProto;
  return AttributeProto::kUndefined;
}

Opsets check_opset_imports(const ModelProto& m) {
  Opsets opsets;
  if (m.ir_version < 1) fail("onnx: the model has no IR version (ir_version ", m.ir_version, ")");
  for (const auto& op : m.opset_imports) {
    std::string d = canonical_domain(op.first);
    if (op.second < 1 || op.second > INT_MAX) {
      fail("onnx: opset import of ", domain_name(d), " has version ", op.second);
    }
    if (!opsets.emplace(d, op.second).second) {
      fail("onnx: the model imports ", domain_name(d), " twice (opsets ", opsets[d], " and ",
           op.second, ")");
    }
    int64_t newest = newest_opset(d);
    if (newest && op.second > newest) {
      unsupported("onnx: opset ", op.second, " of ", domain_name(d),
                  " is not supported (the newest this build knows is ", newest, ")");
    }
  }
  if (opsets.empty()) {
    if (m.ir_version >= 3) fail("onnx: the model imports no opset (IR version ", m.ir_version, ")");
    opsets[""] = 1;  // IR 1 and 2 models: the first opset
  }
  return opsets;
}

void check_node(const NodeProto& n, const Opsets& opsets, int64_t ir_version) {
  std::string who = "onnx: node " + describe_node(n);
  if (n.inputs.empty() && n.outputs.empty()) fail(who, ": has no inputs and no outputs");
  for (const AttributeProto& a : n.attributes) check_attribute_fields(a, ir_version, who);
  std::string d = canonical_domain(n.domain);
  auto it = opsets.find(d);
  if (it == opsets.end())
    fail(who, ": the model imports no opset of domain '", domain_name(d), "'");
  if (!newest_opset(d)) return;  // a domain the table lacks: lowering decides
  const OpSchema* s = find_schema(d, n.op_type, it->second);
  if (!s) {
    if (const OpSchema* first = first_schema(d, n.op_type)) {
      fail(who, ": ", n.op_type, " is not in opset ", it->second, " of ", domain_name(d),
           " (it first appears in opset ", int{first->since}, ")");
    }
    return;  // not an ONNX op: lowering reports it unsupported
  }
  if (s->deprecated()) {
    fail(who, ": ", n.op_type, " is deprecated in opset ", it->second, " of ", domain_name(d),
         " (since ", int{s->since}, ")");
  }
  check_params(n, *s, true, who);
  check_params(n, *s, false, who);
  check_attrs(n, *s, ir_version, who);
  if (d.empty()) check_body_arity(n, *s, who);
}

}  // namespace ferrite::onnx
