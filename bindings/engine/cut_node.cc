#include "bindings/engine/cut_node.h"

#include <cstring>

#include "bindings/engine/engine.h"
#include "compiler/plan/error.h"
#include "compiler/plan/resource_limits.h"
#include "compiler/plan/scalar_ops.h"

namespace ferrite {
namespace {

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

// Products of `shape`'s dims before and from `axis`.
std::pair<int64_t, int64_t> outer_inner(const std::vector<int64_t>& shape, size_t axis) {
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < shape.size(); ++d) (d < axis ? outer : inner) *= shape[d];
  return {outer, inner};
}

// Element `i` of `t` along `axis`, without that axis (a Scan's slice).
Tensor slice_at(const Tensor& t, size_t axis, int64_t i) {
  std::vector<int64_t> shape = t.shape();
  const int64_t dim = shape[axis];
  shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(axis));
  Tensor out(t.dtype(), shape);
  const auto [outer, inner] = outer_inner(shape, axis);
  const size_t row = static_cast<size_t>(inner) * dtype_size(t.dtype());
  for (int64_t o = 0; o < outer && row; ++o)
    std::memcpy(out.data() + static_cast<size_t>(o) * row,
                t.data() + static_cast<size_t>(o * dim + i) * row, row);
  return out;
}

// The tensors of `parts` (one per iteration, all of one type) stacked along a new axis
// `axis` (normalized against their rank + 1), last first when `reverse`.
Tensor stack(const std::string& what, size_t output,
             const std::vector<EngineValue::TensorRef>& parts, int64_t axis, bool reverse) {
  const std::vector<int64_t>& slice = parts.front()->shape();
  for (const EngineValue::TensorRef& p : parts) {
    if (p->shape() != slice || p->dtype() != parts.front()->dtype())
      fail(what, ": scan output ", output, " changes type between iterations (",
           dtype_name(parts.front()->dtype()), " and ", dtype_name(p->dtype()), ", shapes of rank ",
           slice.size(), " and ", p->shape().size(), ")");
  }
  const int64_t rank = static_cast<int64_t>(slice.size()) + 1;
  if (axis < -rank || axis >= rank)
    fail(what, ": scan output axis ", axis, " out of range for rank ", rank);
  const size_t at = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  std::vector<int64_t> shape = slice;
  const int64_t n = static_cast<int64_t>(parts.size());
  shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(at), n);
  Tensor out(parts.front()->dtype(), shape);
  const auto [outer, inner] = outer_inner(slice, at);
  const size_t row = static_cast<size_t>(inner) * dtype_size(out.dtype());
  for (int64_t k = 0; k < n && row; ++k) {
    const Tensor& p = *parts[static_cast<size_t>(reverse ? n - 1 - k : k)];
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(out.data() + static_cast<size_t>(o * n + k) * row,
                  p.data() + static_cast<size_t>(o) * row, row);
  }
  return out;
}

// A scan output of no rows: [0] and the slice shape the body declares (inserted at `axis`),
// when the body declares it static.
Tensor empty_scan_output(const std::string& what, const ModelCut& cut, size_t body_output,
                         int64_t axis) {
  if (body_output >= cut.body_outputs.size()) fail(what, ": no such body output ", body_output);
  const auto& [dtype, slice] = cut.body_outputs[body_output];
  bool known = dtype_size(dtype) != 0;
  for (int64_t d : slice) known = known && d >= 0;
  if (!known)
    fail(what, ": ran no iteration, and the body does not declare its scan output ", body_output,
         "'s type and shape, so neither is known");
  const int64_t rank = static_cast<int64_t>(slice.size()) + 1;
  if (axis < -rank || axis >= rank)
    fail(what, ": scan output axis ", axis, " out of range for rank ", rank);
  std::vector<int64_t> shape = slice;
  shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(axis < 0 ? axis + rank : axis), 0);
  return Tensor(dtype, shape);
}

// Attribute list `v` (one per item), or `count` zeros when absent.
std::vector<int64_t> per_item(const std::string& what, const char* key,
                              const std::vector<int64_t>& v, size_t count) {
  if (v.empty()) return std::vector<int64_t>(count, 0);
  if (v.size() != count)
    fail(what, ": attribute '", key, "' has ", v.size(), " values, expected ", count);
  return v;
}

}  // namespace

CutNode::CutNode(const ModelCut& cut, const EngineOptions& options)
    : cut_(cut),
      options_(std::make_unique<EngineOptions>(options)),
      parts_(cut.parts.size()),
      memory_limit_(memory_limit_or_default(options.session.memory_limit)) {}

void CutNode::keep(int64_t* kept, const Tensor& t, const char* what) const {
  // What is kept is stacked into one more tensor of its size at the end.
  *kept += static_cast<int64_t>(t.nbytes());
  check_memory_limit(*kept > INT64_MAX / 2 ? INT64_MAX : 2 * *kept, memory_limit_,
                     str_cat(cut_.node, ": its ", what));
}

CutNode::~CutNode() = default;

Engine& CutNode::part(size_t i) {
  if (!parts_[i]) parts_[i] = Engine::from_part(cut_.parts[i](), *options_);
  return *parts_[i];
}

std::vector<EngineValue> CutNode::run_part(size_t i, const NamedValues& formal,
                                           const NamedValues& outer) {
  Engine& e = part(i);
  std::vector<std::pair<std::string, const EngineValue*>> feeds;
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
  return e.run_values(feeds);
}

std::vector<EngineValue> CutNode::run(const std::vector<const EngineValue*>& in,
                                      const NamedValues& outer) {
  switch (cut_.kind) {
    case ModelCut::Kind::ValueSized:
      return cut_.run_node(in, memory_limit_);
    case ModelCut::Kind::If:
      return run_if(in, outer);
    case ModelCut::Kind::Loop:
      return run_loop(in, outer);
    case ModelCut::Kind::Scan:
      return run_scan(in, outer);
    case ModelCut::Kind::SequenceMap:
      return run_sequence_map(in, outer);
    case ModelCut::Kind::StringMover:
      return run_string_mover(in);
    case ModelCut::Kind::Single:
      break;
  }
  return run_part(0, {}, outer);  // the node alone reads its inputs by name
}

std::vector<EngineValue> CutNode::run_string_mover(const std::vector<const EngineValue*>& in) {
  const std::string& what = cut_.node;
  // The elements of every string input, one input after another; each such input is fed as
  // the positions of its elements there, and the node's outputs are positions to read back.
  std::vector<const std::string*> pool;
  std::vector<EngineValue> fed(in.size());
  NamedValues formal;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i]) continue;
    const std::string name = str_cat("in", i);
    if (i < cut_.string_inputs.size() && cut_.string_inputs[i]) {
      const Tensor& t = in[i]->tensor(str_cat(what, ": input ", i));
      if (t.dtype() != DType::String)
        fail(what, ": input ", i, " must be strings, got ", tensor_type_text(t));
      Tensor positions(DType::I64, t.shape());
      for (size_t k = 0; k < t.strings().size(); ++k) {
        positions.as<int64_t>()[k] = static_cast<int64_t>(pool.size());
        pool.push_back(&t.strings()[k]);
      }
      fed[i] = EngineValue::of(std::move(positions));
    } else {
      fed[i] = *in[i];
    }
    formal[name] = &fed[i];
  }
  std::vector<EngineValue> moved = run_part(0, formal, {});
  std::vector<EngineValue> out;
  int64_t kept = 0;
  for (size_t k = 0; k < moved.size(); ++k) {
    const Tensor& p = moved[k].tensor(str_cat(what, ": output ", k));
    if (p.dtype() != DType::I64) fail(what, ": output ", k, " is not the positions of strings");
    std::vector<std::string> strings;
    strings.reserve(static_cast<size_t>(p.elements()));
    for (int64_t e = 0; e < p.elements(); ++e) {
      const int64_t at = p.as<int64_t>()[e];
      if (at < 0 || static_cast<uint64_t>(at) >= pool.size())
        fail(what, ": output ", k, " reads no input element");  // a fill value, e.g. Pad's
      strings.push_back(*pool[static_cast<size_t>(at)]);
      kept += static_cast<int64_t>(strings.back().size() + sizeof(std::string));
    }
    check_memory_limit(kept, memory_limit_, str_cat(what, ": its outputs"));
    out.push_back(EngineValue::of(Tensor(p.shape(), std::move(strings))));
  }
  return out;
}

std::vector<EngineValue> CutNode::run_if(const std::vector<const EngineValue*>& in,
                                         const NamedValues& outer) {
  if (in.empty() || !in[0]) fail(cut_.node, ": missing required input 0");
  const size_t branch =
      scalar_bool(cut_.node, "the condition", in[0]->tensor(cut_.node + ": the condition")) ? 0 : 1;
  std::vector<EngineValue> out = run_part(branch, {}, outer);
  if (out.size() != cut_.node_outputs.size())
    fail(cut_.node, ": the ", branch == 0 ? "then" : "else", " branch gives ", out.size(),
         " outputs, the node has ", cut_.node_outputs.size());
  return out;
}

std::vector<EngineValue> CutNode::run_loop(const std::vector<const EngineValue*>& in,
                                           const NamedValues& outer) {
  const std::string& what = cut_.node;
  const std::vector<std::string>& names = cut_.part_inputs[0];
  const size_t carried = in.size() > 2 ? in.size() - 2 : 0;
  if (names.size() != 2 + carried)
    fail(what, ": body takes ", names.size(), " inputs, expected ", 2 + carried);
  const bool has_trips = in.size() > 0 && in[0], has_cond = in.size() > 1 && in[1];
  const int64_t trips =
      has_trips ? scalar_i64(what, "the trip count", in[0]->tensor(what + ": the trip count")) : -1;
  bool cond =
      has_cond ? scalar_bool(what, "the condition", in[1]->tensor(what + ": the condition")) : true;
  if (trips < 0 && !has_cond)
    fail(what, ": has neither a trip count nor a condition: it would never end");
  std::vector<EngineValue> state;
  for (size_t k = 0; k < carried; ++k) {
    if (!in[2 + k]) fail(what, ": loop-carried input ", k + 2, " is missing");
    state.push_back(*in[2 + k]);
  }
  std::vector<std::vector<EngineValue::TensorRef>> scans;
  int64_t kept = 0;
  int64_t i = 0;
  for (; (trips < 0 || i < trips) && cond; ++i) {
    if (i >= options_->max_iterations)
      throw LimitError(str_cat(what, ": more than ", options_->max_iterations, " iterations"));
    const Tensor iter(DType::I64, {}, &i);
    const uint8_t c = 1;
    const Tensor cond_in(DType::Bool, {}, &c);
    const EngineValue iter_v = EngineValue::borrowed(iter), cond_v = EngineValue::borrowed(cond_in);
    NamedValues formal{{names[0], &iter_v}, {names[1], &cond_v}};
    for (size_t k = 0; k < carried; ++k) formal[names[2 + k]] = &state[k];
    std::vector<EngineValue> out = run_part(0, formal, outer);
    if (out.size() < 1 + carried)
      fail(what, ": body gives ", out.size(), " outputs, expected at least ", 1 + carried);
    cond = scalar_bool(what, "the body's condition output",
                       out[0].tensor(what + ": the body's condition output"));
    for (size_t k = 0; k < carried; ++k) state[k] = std::move(out[1 + k]);
    scans.resize(out.size() - 1 - carried);
    for (size_t s = 0; s < scans.size(); ++s) {
      const EngineValue::TensorRef& t =
          out[1 + carried + s].tensor_ref(str_cat(what, ": scan output ", s));
      keep(&kept, *t, "scan outputs");
      scans[s].push_back(t);
    }
  }
  std::vector<EngineValue> result = std::move(state);
  for (size_t s = 0; s < scans.size(); ++s)
    result.push_back(EngineValue::of(stack(what, s, scans[s], 0, false)));
  // No iteration ran: the scan outputs have no rows, and the types the body declares.
  for (size_t k = result.size(); i == 0 && k < cut_.node_outputs.size(); ++k)
    result.push_back(EngineValue::of(empty_scan_output(what, cut_, 1 + k, 0)));
  if (result.size() < cut_.node_outputs.size())
    fail(what, ": has ", cut_.node_outputs.size(), " outputs, the body gives ", result.size());
  result.resize(cut_.node_outputs.size());
  return result;
}

std::vector<EngineValue> CutNode::run_scan(const std::vector<const EngineValue*>& values,
                                           const NamedValues& outer) {
  const std::string& what = cut_.node;
  for (size_t k = cut_.scan_batched ? 1 : 0; k < values.size(); ++k)
    if (!values[k]) fail(what, ": input ", k, " is missing");
  std::vector<const Tensor*> in(values.size());
  for (size_t k = 0; k < values.size(); ++k)
    in[k] = values[k] ? &values[k]->tensor(str_cat(what, ": input ", k)) : nullptr;
  if (!cut_.scan_batched) return scan_once(in, outer);
  // Scan-8: a leading sequence_lens and a batch axis 0 on every other input and output; each
  // batch entry is one Scan-9 (its scan axis 1 becomes 0), the results stacked on axis 0.
  if (in.empty()) fail(what, ": has no inputs");
  const std::vector<const Tensor*> rest(in.begin() + 1, in.end());
  int64_t batch = -1;
  for (const Tensor* t : rest) {
    if (t->shape().empty()) fail(what, ": inputs need a batch axis");
    if (batch >= 0 && t->shape()[0] != batch)
      fail(what, ": inputs differ in batch size: ", batch, " and ", t->shape()[0]);
    batch = t->shape()[0];
  }
  if (batch < 1) fail(what, ": an empty batch is not supported");
  const int64_t m = cut_.num_scan_inputs;
  if (m < 1 || static_cast<size_t>(m) > rest.size())
    fail(what, ": num_scan_inputs ", m, " does not fit ", rest.size(), " inputs");
  const Tensor& first_scan = *rest[rest.size() - static_cast<size_t>(m)];
  if (first_scan.shape().size() < 2) fail(what, ": scan inputs need batch and sequence axes");
  if (in[0]) {
    const Tensor& lens = *in[0];
    if (lens.elements() != batch || dtype_is_float(lens.dtype()) || lens.dtype() == DType::Bool)
      fail(what, ": sequence_lens must be ", batch, " integers");
    for (int64_t b = 0; b < batch; ++b) {
      if (load_element(lens.dtype(), lens.data(), static_cast<size_t>(b)).i64 !=
          first_scan.shape()[1])
        fail(what, ": sequence_lens shorter than the sequence axis are not supported");
    }
  }
  const int64_t steps = first_scan.shape()[1];
  if (steps > 0 && batch > options_->max_iterations / steps)
    throw LimitError(str_cat(what, ": ", batch, " batch entries of ", steps, " steps: more than ",
                             options_->max_iterations, " body runs"));
  std::vector<std::vector<EngineValue::TensorRef>> per_batch;
  int64_t kept = 0;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Tensor> entry;
    entry.reserve(rest.size());
    std::vector<const Tensor*> args;
    for (const Tensor* t : rest) {
      entry.push_back(slice_at(*t, 0, b));
      args.push_back(&entry.back());
    }
    std::vector<EngineValue> out = scan_once(args, outer);
    per_batch.resize(out.size());
    for (size_t k = 0; k < out.size(); ++k) {
      const EngineValue::TensorRef& t = out[k].tensor_ref(str_cat(what, ": output ", k));
      keep(&kept, *t, "outputs of every batch entry");
      per_batch[k].push_back(t);
    }
  }
  std::vector<EngineValue> result;
  for (size_t k = 0; k < per_batch.size(); ++k)
    result.push_back(EngineValue::of(stack(what, k, per_batch[k], 0, false)));
  return result;
}

std::vector<EngineValue> CutNode::scan_once(const std::vector<const Tensor*>& in,
                                            const NamedValues& outer) {
  const std::string& what = cut_.node;
  const std::vector<std::string>& names = cut_.part_inputs[0];
  const int64_t m = cut_.num_scan_inputs;
  if (m < 1 || static_cast<size_t>(m) > in.size())
    fail(what, ": num_scan_inputs ", m, " does not fit ", in.size(), " inputs");
  const size_t n_state = in.size() - static_cast<size_t>(m);
  if (names.size() != in.size())
    fail(what, ": body takes ", names.size(), " inputs, the node has ", in.size());
  const std::vector<int64_t> axes = per_item(what, "scan_input_axes", cut_.scan_input_axes, m);
  const std::vector<int64_t> dirs =
      per_item(what, "scan_input_directions", cut_.scan_input_directions, m);
  std::vector<EngineValue> state;
  for (size_t k = 0; k < n_state; ++k) state.push_back(EngineValue::of(Tensor::copy_of(*in[k])));
  std::vector<size_t> at(static_cast<size_t>(m));
  int64_t length = -1;
  for (size_t j = 0; j < at.size(); ++j) {
    const Tensor& x = *in[n_state + j];
    const int64_t rank = static_cast<int64_t>(x.shape().size());
    if (axes[j] < -rank || axes[j] >= rank)
      fail(what, ": scan input axis ", axes[j], " out of range for rank ", rank);
    at[j] = static_cast<size_t>(axes[j] < 0 ? axes[j] + rank : axes[j]);
    const int64_t len = x.shape()[at[j]];
    if (length >= 0 && len != length)
      fail(what, ": scan inputs have different lengths: ", length, " and ", len);
    length = len;
  }
  if (length > options_->max_iterations)
    throw LimitError(
        str_cat(what, ": ", length, " steps: more than ", options_->max_iterations, " body runs"));
  std::vector<std::vector<EngineValue::TensorRef>> scans;
  int64_t kept = 0;
  for (int64_t t = 0; t < length; ++t) {
    NamedValues formal;
    for (size_t k = 0; k < n_state; ++k) formal[names[k]] = &state[k];
    std::vector<EngineValue> slices;
    slices.reserve(at.size());
    for (size_t j = 0; j < at.size(); ++j) {
      slices.push_back(
          EngineValue::of(slice_at(*in[n_state + j], at[j], dirs[j] ? length - 1 - t : t)));
      formal[names[n_state + j]] = &slices.back();
    }
    std::vector<EngineValue> out = run_part(0, formal, outer);
    if (out.size() < n_state)
      fail(what, ": body gives ", out.size(), " outputs, fewer than its ", n_state, " states");
    for (size_t k = 0; k < n_state; ++k) state[k] = std::move(out[k]);
    scans.resize(out.size() - n_state);
    for (size_t s = 0; s < scans.size(); ++s) {
      const EngineValue::TensorRef& ref =
          out[n_state + s].tensor_ref(str_cat(what, ": scan output ", s));
      keep(&kept, *ref, "scan outputs");
      scans[s].push_back(ref);
    }
  }
  const size_t k_out = cut_.body_outputs.size() > n_state ? cut_.body_outputs.size() - n_state : 0;
  if (length > 0 && scans.size() != k_out)
    fail(what, ": body gives ", scans.size(), " scan outputs, declares ", k_out);
  const std::vector<int64_t> out_axes =
      per_item(what, "scan_output_axes", cut_.scan_output_axes, k_out);
  const std::vector<int64_t> out_dirs =
      per_item(what, "scan_output_directions", cut_.scan_output_directions, k_out);
  std::vector<EngineValue> result = std::move(state);
  for (size_t s = 0; s < k_out; ++s)
    result.push_back(
        EngineValue::of(length == 0 ? empty_scan_output(what, cut_, n_state + s, out_axes[s])
                                    : stack(what, s, scans[s], out_axes[s], out_dirs[s] != 0)));
  if (result.size() < cut_.node_outputs.size())
    fail(what, ": has ", cut_.node_outputs.size(), " outputs, the body gives ", result.size());
  result.resize(cut_.node_outputs.size());
  return result;
}

// SequenceMap: the body once per item of the first input, fed the items at that position of
// the inputs that are sequences (all of its length) and the others whole; each body output
// makes one sequence.
std::vector<EngineValue> CutNode::run_sequence_map(const std::vector<const EngineValue*>& in,
                                                   const NamedValues& outer) {
  const std::string& what = cut_.node;
  const std::vector<std::string>& names = cut_.part_inputs[0];
  if (names.size() != in.size())
    fail(what, ": body takes ", names.size(), " inputs, the node has ", in.size());
  for (size_t j = 0; j < in.size(); ++j)
    if (!in[j]) fail(what, ": input ", j, " is missing");
  const size_t n = in.empty() ? 0 : in[0]->items(what + ": input 0").size();
  for (size_t j = 1; j < in.size(); ++j) {
    if (in[j]->is_sequence() && in[j]->items("").size() != n)
      fail(what, ": input ", j, " has ", in[j]->items("").size(), " items, input 0 has ", n);
  }
  if (static_cast<int64_t>(n) > options_->max_iterations)
    throw LimitError(
        str_cat(what, ": ", n, " items: more than ", options_->max_iterations, " body runs"));
  std::vector<std::vector<EngineValue::TensorRef>> items(cut_.body_outputs.size());
  for (size_t i = 0; i < n; ++i) {
    std::vector<EngineValue> at(in.size());
    NamedValues formal;
    for (size_t j = 0; j < in.size(); ++j) {
      if (in[j]->is_sequence()) at[j] = EngineValue::of(in[j]->items("")[i]);
      formal[names[j]] = in[j]->is_sequence() ? &at[j] : in[j];
    }
    std::vector<EngineValue> out = run_part(0, formal, outer);
    if (out.size() != items.size())
      fail(what, ": body gives ", out.size(), " outputs, declares ", items.size());
    for (size_t k = 0; k < out.size(); ++k)
      items[k].push_back(out[k].tensor_ref(str_cat(what, ": body output ", k)));
  }
  std::vector<EngineValue> result;
  for (size_t k = 0; k < items.size(); ++k) {
    const DType elem = items[k].empty() ? cut_.body_outputs[k].first : items[k][0]->dtype();
    result.push_back(EngineValue::sequence(elem, std::move(items[k])));
  }
  result.resize(cut_.node_outputs.size());
  return result;
}

std::vector<std::pair<std::string, const Engine*>> CutNode::engines() const {
  std::vector<std::pair<std::string, const Engine*>> out;
  for (size_t i = 0; i < parts_.size(); ++i) {
    if (!parts_[i]) continue;
    const char* name = cut_.kind == ModelCut::Kind::If ? (i == 0 ? "then branch" : "else branch")
                       : cut_.kind == ModelCut::Kind::Single      ? "the node alone"
                       : cut_.kind == ModelCut::Kind::StringMover ? "the node on positions"
                                                                  : "body";
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
