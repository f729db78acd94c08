// graph_to_string: the readable listing used by dumps (FERRITE_DUMP), `ferrite info` and test
// failure messages. One line per input, constant, capture, node and output; subgraphs are
// printed indented under the node that owns them.
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "compiler/graph/graph.h"
#include "compiler/plan/error.h"

namespace ferrite {

namespace {

constexpr int kMaxDepth = 64;
constexpr int64_t kPreviewElements = 8;

std::string fmt_double(double d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", d);
  return buf;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// The first few elements of a constant, e.g. "[1, 2, 3]" or "[1, 2, 3, ...]".
std::string preview(const TensorData& t) {
  try {
    int64_t n = t.elements();
    std::string s = "[";
    for (int64_t i = 0; i < n && i < kPreviewElements; ++i) {
      if (i) s += ", ";
      s += dtype_is_float(t.dtype) ? fmt_double(t.float_at(i)) : std::to_string(t.int_at(i));
    }
    return s + (n > kPreviewElements ? ", ...]" : "]");
  } catch (const Error&) {
    return "<invalid data>";
  }
}

std::string tensor_summary(const TensorData& t) {
  TensorType type;
  type.dtype = t.dtype;
  type.shape = t.shape;
  return "tensor " + type.to_string() + " " + preview(t);
}

std::string graph_summary(const std::shared_ptr<Graph>& g) {
  return g ? "graph '" + g->name + "'" : "graph <null>";
}

template <class T, class F>
std::string list(const std::vector<T>& items, F each) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + each(items[i]);
  return s + "]";
}

std::string attr_to_string(const Attribute& a) {
  switch (a.kind) {
    case AttrKind::Float:
      return fmt_double(a.f);
    case AttrKind::Int:
      return std::to_string(a.i);
    case AttrKind::String:
      return quoted(a.s);
    case AttrKind::Tensor:
      return a.t ? tensor_summary(*a.t) : "tensor <null>";
    case AttrKind::Graph:
      return graph_summary(a.g);
    case AttrKind::Floats:
      return list(a.floats, fmt_double);
    case AttrKind::Ints:
      return list(a.ints, [](int64_t v) { return std::to_string(v); });
    case AttrKind::Strings:
      return list(a.strings, quoted);
    case AttrKind::Tensors:
      return list(a.tensors, [](const std::shared_ptr<const TensorData>& t) {
        return t ? tensor_summary(*t) : std::string("tensor <null>");
      });
    case AttrKind::Graphs:
      return list(a.graphs, graph_summary);
    case AttrKind::Type:
      return "type " + a.type.to_string();
  }
  return "?";
}

std::string ref(const Value* v) {
  return v ? "%" + v->name : "_";
}

void print_graph(const Graph& g, const std::string& indent, int depth, std::ostringstream& os);

void print_node(const Node& n, const std::string& indent, int depth, std::ostringstream& os) {
  os << indent;
  for (size_t k = 0; k < n.outputs.size(); ++k) os << (k ? ", " : "") << ref(n.outputs[k]);
  os << (n.outputs.empty() ? "" : " = ") << (n.domain.empty() ? "" : n.domain + ".") << n.op_type
     << "(";
  for (size_t k = 0; k < n.inputs.size(); ++k) os << (k ? ", " : "") << ref(n.inputs[k]);
  os << ")";
  if (!n.attrs.empty()) {
    os << " {";
    bool first = true;
    for (const auto& kv : n.attrs) {
      os << (first ? "" : ", ") << kv.first << "=" << attr_to_string(kv.second);
      first = false;
    }
    os << "}";
  }
  bool typed = false;
  for (const Value* v : n.outputs) typed = typed || (v && v->type.dtype != DType::Undefined);
  if (typed) {
    os << " :";
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      os << (k ? ", " : " ") << (n.outputs[k] ? n.outputs[k]->type.to_string() : "_");
    }
  }
  os << "\n";
  for (const auto& kv : n.attrs) {
    std::vector<std::shared_ptr<Graph>> subs = kv.second.graphs;
    if (kv.second.g) subs.insert(subs.begin(), kv.second.g);
    for (const auto& sub : subs) {
      if (!sub) continue;
      os << indent << "  " << kv.first << ": ";
      if (depth >= kMaxDepth) {
        os << "graph '" << sub->name << "' (nested too deeply to print)\n";
      } else {
        print_graph(*sub, indent + "  ", depth + 1, os);
      }
    }
  }
}

void print_graph(const Graph& g, const std::string& indent, int depth, std::ostringstream& os) {
  os << "graph '" << g.name << "'";
  if (!g.opsets.empty()) {
    os << " (opset";
    for (const auto& kv : g.opsets)
      os << " " << (kv.first.empty() ? "ai.onnx" : kv.first) << "=" << kv.second;
    os << ")";
  }
  os << "\n";
  for (const Value* v : g.inputs) {
    if (v) os << indent << "  input %" << v->name << ": " << v->type.to_string() << "\n";
  }
  for (const Value* v : g.captures) {
    if (v) os << indent << "  capture %" << v->name << ": " << v->type.to_string() << "\n";
  }
  for (const auto& v : g.values) {
    bool captured = std::find(g.captures.begin(), g.captures.end(), v.get()) != g.captures.end();
    if (!v->is_constant() || v->producer || captured) continue;
    os << indent << "  const %" << v->name << ": " << v->type.to_string() << " = "
       << preview(*v->data) << "\n";
  }
  for (const auto& n : g.nodes) print_node(*n, indent + "  ", depth, os);
  for (const Value* v : g.outputs) {
    if (v) os << indent << "  output %" << v->name << ": " << v->type.to_string() << "\n";
  }
}

}  // namespace

std::string graph_to_string(const Graph& g) {
  std::ostringstream os;
  print_graph(g, "", 0, os);
  return os.str();
}

}  // namespace ferrite
