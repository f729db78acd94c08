#include "bindings/engine/cut_node.h"

#include <cstring>

#include "bindings/engine/engine.h"
#include "compiler/plan/error.h"
#include "compiler/plan/resource_limits.h"
#include "compiler/plan/scalar_ops.h"

namespace ferrite {
namespace {

Tensor copy_of(const Tensor& t) {
  return Tensor(t.dtype(), t.shape(), t.data());
}

// A one-element tensor's value as int64 (a trip count) or bool (a condition).
int64_t scalar_i64(const std::string& what, const char* name, const Tensor& t) {
  if (t.elements() != 1 || dtype_is_float(t.dtype()) || t.dtype() == DType::Bool)
    fail(what, ": ", name, " must be one integer, got ", dtype_name(t.dtype()), " of ",
         t.elements(), " elements");
  return load_element(t.dtype(), t.data(), 0).i64;
}

bool scalar_bool(const std::string& what, const char* name, const Tensor& t) {
  if (t.elements() != 1 || t.dtype() != DType::Bool)
    fail(what, ": ", name, " must be one bool, got ", dtype_name(t.dtype()), " of ", t.elements(),
         " elements");
  return t.data()[0] != 0;
}

// The tensors of `parts` (one per iteration, all of one type) stacked along a new axis 0.
Tensor stack(const std::string& what, size_t output, const std::vector<Tensor>& parts) {
  std::vector<int64_t> shape = parts.front().shape();
  for (const Tensor& p : parts) {
    if (p.shape() != shape || p.dtype() != parts.front().dtype())
      fail(what, ": scan output ", output, " changes type between iterations (",
           dtype_name(parts.front().dtype()), " and ", dtype_name(p.dtype()), ", shapes of rank ",
           shape.size(), " and ", p.shape().size(), ")");
  }
  shape.insert(shape.begin(), static_cast<int64_t>(parts.size()));
  Tensor out(parts.front().dtype(), shape);
  uint8_t* dst = out.data();
  for (const Tensor& p : parts) {
    if (p.nbytes()) std::memcpy(dst, p.data(), p.nbytes());
    dst += p.nbytes();
  }
  return out;
}

}  // namespace

CutNode::CutNode(const ModelCut& cut, const EngineOptions& options)
    : cut_(cut), options_(std::make_unique<EngineOptions>(options)), parts_(cut.parts.size()) {}

CutNode::~CutNode() = default;

Engine& CutNode::part(size_t i) {
  if (!parts_[i]) parts_[i] = Engine::from_part(cut_.parts[i](), *options_);
  return *parts_[i];
}

std::vector<Tensor> CutNode::run_part(size_t i, const NamedValues& formal,
                                      const NamedValues& outer) {
  Engine& e = part(i);
  std::vector<std::pair<std::string, const Tensor*>> feeds;
  for (const IoInfo& in : e.inputs()) {
    auto f = formal.find(in.name);
    if (f != formal.end()) {
      if (!f->second)
        fail(cut_.node, ": its subgraph reads input '", in.name, "', which is omitted");
      feeds.emplace_back(in.name, f->second);
      continue;
    }
    auto o = outer.find(in.name);
    if (o == outer.end()) fail(cut_.node, ": value '", in.name, "' is not computed before it");
    feeds.emplace_back(in.name, o->second);
  }
  return e.run(feeds);
}

std::vector<Tensor> CutNode::run(const std::vector<const Tensor*>& in, const NamedValues& outer) {
  switch (cut_.kind) {
    case ModelCut::Kind::ValueSized:
      return cut_.run_node(in);
    case ModelCut::Kind::If:
      return run_if(in, outer);
    case ModelCut::Kind::Loop:
      return run_loop(in, outer);
    case ModelCut::Kind::Single:
      break;
  }
  return run_part(0, {}, outer);  // the node alone reads its inputs by name
}

std::vector<Tensor> CutNode::run_if(const std::vector<const Tensor*>& in,
                                    const NamedValues& outer) {
  if (in.empty() || !in[0]) fail(cut_.node, ": missing required input 0");
  const size_t branch = scalar_bool(cut_.node, "the condition", *in[0]) ? 0 : 1;
  std::vector<Tensor> out = run_part(branch, {}, outer);
  if (out.size() != cut_.node_outputs.size())
    fail(cut_.node, ": the ", branch == 0 ? "then" : "else", " branch gives ", out.size(),
         " outputs, the node has ", cut_.node_outputs.size());
  return out;
}

std::vector<Tensor> CutNode::run_loop(const std::vector<const Tensor*>& in,
                                      const NamedValues& outer) {
  const std::string& what = cut_.node;
  const std::vector<std::string>& names = cut_.part_inputs[0];
  const size_t carried = in.size() > 2 ? in.size() - 2 : 0;
  if (names.size() != 2 + carried)
    fail(what, ": body takes ", names.size(), " inputs, expected ", 2 + carried);
  const int64_t trips = in.size() > 0 && in[0] ? scalar_i64(what, "the trip count", *in[0]) : -1;
  bool cond = in.size() > 1 && in[1] ? scalar_bool(what, "the condition", *in[1]) : true;
  if (trips < 0 && !(in.size() > 1 && in[1]))
    fail(what, ": has neither a trip count nor a condition: it would never end");
  std::vector<Tensor> state;
  for (size_t k = 0; k < carried; ++k) {
    if (!in[2 + k]) fail(what, ": loop-carried input ", k + 2, " is missing");
    state.push_back(copy_of(*in[2 + k]));
  }
  std::vector<std::vector<Tensor>> scans;
  int64_t i = 0;
  for (; (trips < 0 || i < trips) && cond; ++i) {
    if (i >= kMaxIterations)
      throw LimitError(str_cat(what, ": more than ", kMaxIterations, " iterations"));
    const Tensor iter(DType::I64, {}, &i);
    const uint8_t c = 1;
    const Tensor cond_in(DType::Bool, {}, &c);
    NamedValues formal{{names[0], &iter}, {names[1], &cond_in}};
    for (size_t k = 0; k < carried; ++k) formal[names[2 + k]] = &state[k];
    std::vector<Tensor> out = run_part(0, formal, outer);
    if (out.size() < 1 + carried)
      fail(what, ": body gives ", out.size(), " outputs, expected at least ", 1 + carried);
    cond = scalar_bool(what, "the body's condition output", out[0]);
    for (size_t k = 0; k < carried; ++k) state[k] = std::move(out[1 + k]);
    scans.resize(out.size() - 1 - carried);
    for (size_t s = 0; s < scans.size(); ++s) scans[s].push_back(std::move(out[1 + carried + s]));
  }
  std::vector<Tensor> result = std::move(state);
  for (size_t s = 0; s < scans.size(); ++s) result.push_back(stack(what, s, scans[s]));
  if (result.size() < cut_.node_outputs.size()) {
    // No iteration ran: a scan output has no rows, and no element type a run showed.
    if (i == 0)
      fail(what, ": ran no iteration, so its scan outputs' type is unknown (not supported)");
    fail(what, ": has ", cut_.node_outputs.size(), " outputs, the body gives ", result.size());
  }
  result.resize(cut_.node_outputs.size());
  return result;
}

std::vector<std::pair<std::string, const Engine*>> CutNode::engines() const {
  std::vector<std::pair<std::string, const Engine*>> out;
  for (size_t i = 0; i < parts_.size(); ++i) {
    if (!parts_[i]) continue;
    const char* name = cut_.kind == ModelCut::Kind::If ? (i == 0 ? "then branch" : "else branch")
                       : cut_.kind == ModelCut::Kind::Loop ? "body"
                                                           : "the node alone";
    out.emplace_back(name, parts_[i].get());
  }
  return out;
}

int64_t CutNode::compiles() const {
  int64_t n = 0;
  for (const auto& e : parts_)
    if (e) n += e->compiles();
  return n;
}

double CutNode::compile_ms() const {
  double ms = 0;
  for (const auto& e : parts_)
    if (e) ms += e->compile_ms();
  return ms;
}

}  // namespace ferrite
