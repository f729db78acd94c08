// Control flow: If, Loop and Scan. Their subgraphs are lowered inline
// (GraphLowering::lower_subgraph), so their bodies fuse and fold like any other code.
// - If with a compile-time condition lowers only the branch taken. Otherwise both
//   branches are lowered under run-time guards (a skipped branch does no work and raises
//   no errors) and each output is a select between the two branches' results; the
//   branches must then agree on each output's dtype and shape, since plans have static
//   shapes. When they do not, or a branch cannot be lowered for these shapes (a model
//   whose branches are shaped for different sample rates), the If runs at run time on
//   its own (NeedsCutError: the engine cuts the model there, bindings/engine/cut_node.h),
//   and only the branch taken is compiled, for its own shapes; its errors are reported,
//   the other branch's never are.
// - Loop and Scan are unrolled: every iteration is lowered with its iteration number as a
//   constant, which lets shapes and slices that depend on it (test_loop11's
//   Slice(x, i, i+1)) fold, within the compile's unrolling budget (unroll_budget.h). A Loop's
//   trip count must be a compile-time constant (or a folded value) unless the condition is. A
//   condition computed at run time is handled like If: the iterations after it run under a guard on
//   the running condition, and each loop-carried value is a select between the new and the old
//   value. A Loop that cannot be unrolled (a trip count computed at run time or fed, past the
//   budget, a run-time condition without a bound or with scan outputs, a loop-carried value
//   changing shape under one) runs at run time instead, its body a graph of its own run per
//   iteration (NeedsCutError). So does a Scan past the budget (Scan-8: its batch entries
//   times its steps), its body run once per step (per batch entry and step for Scan-8).
#include <algorithm>
#include <cstdint>
#include <string>

#include "compiler/lower/lowering.h"
#include "compiler/lower/unroll_budget.h"
#include "compiler/plan/resource_limits.h"

namespace ferrite {
namespace {

const Graph& subgraph(const LowerCtx& c, const char* key) {
  auto it = c.node.attrs.find(key);
  if (it == c.node.attrs.end() || it->second.kind != AttrKind::Graph || !it->second.g)
    c.error("missing graph attribute '", key, "'");
  return *it->second.g;
}

TensorBoxPtr scalar_constant(GraphLowering& gl, DType dtype, int64_t v) {
  auto d = std::make_shared<TensorData>();
  d->dtype = dtype;
  d->bytes.assign(dtype_size(dtype), 0);
  uint8_t* b = d->bytes.mutable_data();
  if (dtype == DType::Bool) {
    b[0] = v != 0;
  } else {
    for (size_t i = 0; i < d->bytes.size(); ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
  }
  return constant_box(gl, d, "");
}

// A rank-0 view of a one-element tensor.
TensorBoxPtr as_scalar(const TensorBoxPtr& t) {
  return t->size.empty() ? t : reshape_view(t, {});
}

std::string type_text(const TensorBoxPtr& t) {
  return TensorType{t->dtype, t->size, {}, true}.to_string();
}

// cond ? a : b elementwise, with `cond` a bool scalar (the merge of two guarded paths).
TensorBoxPtr select(const LowerCtx& c, const TensorBoxPtr& cond, const TensorBoxPtr& a,
                    const TensorBoxPtr& b) {
  return make_pointwise(c, {cond, a, b}, a->dtype, [](KernelBuilder& kb, const std::vector<V>& v) {
    return kb.where(v[0], v[1], v[2]);
  });
}

std::vector<TensorBoxPtr> lower_both_branches(LowerCtx& c, const Graph& then_g, const Graph& else_g,
                                              const TensorBoxPtr& cond);

std::vector<TensorBoxPtr> lower_if(LowerCtx& c) {
  const Graph& then_g = subgraph(c, "then_branch");
  const Graph& else_g = subgraph(c, "else_branch");
  const TensorBoxPtr& cond = c.input(0);
  if (cond->dtype != DType::Bool || cond->elements() != 1)
    c.error("condition must be a single bool, got ", type_text(cond));
  const size_t n = c.node.outputs.size();
  if (then_g.outputs.size() != n || else_g.outputs.size() != n)
    c.error("the branches have ", then_g.outputs.size(), " and ", else_g.outputs.size(),
            " outputs, the node ", n);
  if (auto d = c.gl.constant_data(cond)) {
    return c.gl.lower_subgraph(d->int_at(0) != 0 ? then_g : else_g, {}, c.node);
  }
  try {
    return lower_both_branches(c, then_g, else_g, cond);
  } catch (const NeedsInputValueError&) {
    throw;  // a branch needs an input's value itself: the same request
  } catch (const LimitError&) {
    throw;
  } catch (const Error& e) {
    throw NeedsCutError(str_cat(c.node.describe(), ": only the branch taken can be compiled (",
                                e.what(), "): it runs on its own, at run time"));
  }
}

// Both branches under run-time guards on `cond`, each output a select between them.
std::vector<TensorBoxPtr> lower_both_branches(LowerCtx& c, const Graph& then_g, const Graph& else_g,
                                              const TensorBoxPtr& cond) {
  const size_t n = c.node.outputs.size();
  // Values the branches read from outside are computed unconditionally, before either.
  c.gl.realize_captures(then_g);
  c.gl.realize_captures(else_g);
  auto branch = [&](const Graph& g, bool value) {
    c.gl.push_guard(cond, value);
    std::vector<TensorBoxPtr> outs = c.gl.lower_subgraph(g, {}, c.node);
    for (const TensorBoxPtr& t : outs) c.gl.realize(t);
    c.gl.pop_guard();
    return outs;
  };
  std::vector<TensorBoxPtr> a = branch(then_g, true), b = branch(else_g, false);
  std::vector<TensorBoxPtr> result;
  TensorBoxPtr flag = as_scalar(cond);
  for (size_t i = 0; i < n; ++i) {
    if (a[i]->dtype != b[i]->dtype || a[i]->size != b[i]->size) {
      c.unsupported("output ", i, " is ", type_text(a[i]), " from then_branch and ",
                    type_text(b[i]),
                    " from else_branch; a shape chosen at run time is not supported");
    }
    result.push_back(select(c, flag, a[i], b[i]));
  }
  return result;
}

// Stacks per-iteration values along a new axis; `reverse` stacks the last iteration first.
TensorBoxPtr stack(const LowerCtx& c, std::vector<TensorBoxPtr> parts, int axis, bool reverse) {
  if (reverse) std::reverse(parts.begin(), parts.end());
  for (const TensorBoxPtr& p : parts) {
    if (p->size != parts[0]->size || p->dtype != parts[0]->dtype)
      c.unsupported("scan output changes from ", type_text(parts[0]), " to ", type_text(p),
                    " between iterations");
  }
  // Along the first axis each part is one contiguous slice of the result: its own kernel (a
  // copy, for a value already stored or a view) writes the slice in place, as Inductor's
  // ConcatKernel does, where a concatenation would load every part under a mask at each
  // element (hundreds of parts: seconds for a few MB).
  const int64_t n = parts[0]->elements();
  if (axis == 0 && parts.size() > 1 && n > 0) {
    std::vector<int64_t> size = parts[0]->size;
    size.insert(size.begin(), static_cast<int64_t>(parts.size()));
    Buffer* owner = c.gl.new_buffer("", parts[0]->dtype, size, BufferOrigin::Assembled);
    for (size_t i = 0; i < parts.size(); ++i) {
      TensorBoxPtr p = parts[i];
      if (p->storage->realized() || !p->is_identity_view())
        p = make_pointwise_box(p->dtype, p->size, p->loader(), c.origin());
      c.gl.realize_into(p, owner, static_cast<int64_t>(i) * n);
    }
    return make_buffer_box(owner);
  }
  std::vector<TensorBoxPtr> ins;
  for (const TensorBoxPtr& p : parts) {
    std::vector<int64_t> s = p->size;
    s.insert(s.begin() + axis, 1);
    ins.push_back(reshape_view(p, s));
  }
  return concat_values(c.gl, std::move(ins), axis, c.origin());
}

// The empty result of a scan output when the loop runs no iteration: its element type and
// shape come from the body's declaration.
TensorBoxPtr empty_scan_output(const LowerCtx& c, const Value* body_out) {
  const TensorType& t = body_out->type;
  if (!t.is_static() || t.dtype == DType::Undefined)
    c.unsupported("the loop runs no iteration and scan output '", body_out->name,
                  "' has no static type");
  auto d = std::make_shared<TensorData>();
  d->dtype = t.dtype;
  d->shape = t.shape;
  d->shape.insert(d->shape.begin(), 0);
  return constant_box(c.gl, d, "");
}

// Charges `iterations` of `body` to the unrolling budget: its nodes, plus one for each
// iteration itself (its states are realized, a kernel each, even when the body is empty).
void count_unrolled(const LowerCtx& c, const Graph& body, int64_t iterations,
                    const std::string& what) {
  const int64_t per = static_cast<int64_t>(body.nodes.size()) + 1;
  int64_t nodes;
  if (__builtin_mul_overflow(iterations, per, &nodes)) nodes = INT64_MAX;
  charge_unrolled(c, nodes, what);
}

std::vector<TensorBoxPtr> unroll_loop(LowerCtx& c);

// A loop that cannot be unrolled for these shapes (a trip count computed at run time, past
// the unrolling budget, a run-time condition without a bound or with scan outputs, a
// loop-carried value whose shape changes under a run-time condition) runs at run time
// instead, its body a graph of its own run once per iteration (NeedsCutError).
std::vector<TensorBoxPtr> lower_loop(LowerCtx& c) {
  // A trip count computed at run time (a model input included: no plan per trip count,
  // unrolled anew for each) runs at run time.
  if (c.has(0)) {
    auto d = c.gl.constant_data(c.input(0));
    if (!d)
      throw NeedsCutError(str_cat(c.node.describe(), ": its trip count is computed at run time"));
    if (d->elements() == 1 && unrolls_too_much(subgraph(c, "body"), d->int_at(0)))
      throw NeedsCutError(str_cat(c.node.describe(), ": ", d->int_at(0),
                                  " iterations would unroll more than ", kUnrollAtMost,
                                  " nodes: it runs at run time"));
  }
  try {
    return unroll_loop(c);
  } catch (const NeedsInputValueError&) {
    throw;  // the engine may have the value
  } catch (const NeedsCutError&) {
    throw;
  } catch (const UnrollLimitError& e) {
    throw NeedsCutError(str_cat(c.node.describe(), ": runs at run time: ", e.what()));
  } catch (const UnsupportedError& e) {
    throw NeedsCutError(str_cat(c.node.describe(), ": runs at run time: ", e.what()));
  }
}

std::vector<TensorBoxPtr> unroll_loop(LowerCtx& c) {
  const Graph& body = subgraph(c, "body");
  const size_t carried = c.in.size() > 2 ? c.in.size() - 2 : 0;
  if (body.inputs.size() != 2 + carried)
    c.error("body takes ", body.inputs.size(), " inputs, expected ", 2 + carried);
  if (body.outputs.size() < 1 + carried)
    c.error("body has ", body.outputs.size(), " outputs, expected at least ", 1 + carried);
  const size_t scans = body.outputs.size() - 1 - carried;
  if (c.node.outputs.size() > carried + scans)
    c.error("has ", c.node.outputs.size(), " outputs, the body gives ", carried + scans);
  int64_t trips = -1;  // none: run while the condition holds
  if (c.has(0)) {
    std::vector<int64_t> m = c.const_ints(0);
    if (m.size() != 1) c.error("trip count must have one element");
    trips = m[0];
  }
  std::vector<TensorBoxPtr> state(c.in.begin() + 2, c.in.end());
  for (size_t k = 0; k < carried; ++k) {
    if (!state[k]) c.error("loop-carried input ", k + 2, " is missing");
  }
  // The condition is a compile-time bool (`known`) until it depends on run-time data; from
  // then on `live` holds it, and each later iteration runs under a guard on it.
  bool known = true;
  TensorBoxPtr live;
  auto go_live = [&](const TensorBoxPtr& cond, const char* what) {
    if (cond->dtype != DType::Bool || cond->elements() != 1)
      c.error(what, " must be a single bool, got ", type_text(cond));
    if (trips < 0)
      c.unsupported(what, " is computed at run time and there is no trip count: loops are ",
                    "unrolled at compile time, so they need a bound");
    if (scans > 0)
      c.unsupported(what, " is computed at run time, so the number of scan outputs' rows ",
                    "would be too");
    live = as_scalar(cond);
  };
  if (c.has(1)) {
    if (auto d = c.gl.constant_data(c.input(1))) {
      known = d->int_at(0) != 0;
    } else {
      go_live(c.input(1), "the initial condition");
    }
  }
  std::vector<std::vector<TensorBoxPtr>> scan_parts(scans);
  for (int64_t i = 0; (trips < 0 || i < trips) && known; ++i) {
    // One at a time: a condition known at compile time may end the loop long before a
    // trip count of INT64_MAX (how while loops export).
    count_unrolled(
        c, body, 1,
        trips >= 0 ? str_cat("iteration ", i + 1, " of ", trips) : str_cat("iteration ", i + 1));
    const TensorBoxPtr guard = live;  // this iteration runs only when it holds
    if (guard) {
      // Whatever the guarded body reads, and the states the select below reads, are
      // computed unconditionally.
      for (const TensorBoxPtr& t : state) c.gl.realize(t);
      c.gl.realize_captures(body);
      c.gl.push_guard(guard, true);
    }
    std::vector<TensorBoxPtr> args = {scalar_constant(c.gl, DType::I64, i),
                                      scalar_constant(c.gl, DType::Bool, 1)};
    args.insert(args.end(), state.begin(), state.end());
    std::vector<TensorBoxPtr> outs = c.gl.lower_subgraph(body, args, c.node);
    if (guard) {
      for (const TensorBoxPtr& t : outs) c.gl.realize(t);
      c.gl.pop_guard();
    }
    for (size_t k = 0; k < carried; ++k) {
      const TensorBoxPtr& next = outs[1 + k];
      if (next->dtype != state[k]->dtype || (guard && next->size != state[k]->size))
        c.unsupported("loop-carried value ", k, " changes from ", type_text(state[k]), " to ",
                      type_text(next), guard ? " in a loop with a run-time condition" : "");
      state[k] = guard ? select(c, guard, next, state[k]) : next;
      // One buffer per iteration keeps the unrolled code linear in the trip count.
      c.gl.realize(state[k]);
    }
    for (size_t k = 0; k < scans; ++k) scan_parts[k].push_back(outs[1 + carried + k]);
    auto d = c.gl.constant_data(outs[0]);
    if (d && d->elements() == 1 && d->int_at(0) == 0) {
      known = false;  // no later iteration can run
    } else if (guard) {
      if (outs[0]->dtype != DType::Bool || outs[0]->elements() != 1)
        c.error("the body's condition output must be a single bool, got ", type_text(outs[0]));
      // A skipped iteration left its condition output unwritten; And with false ignores it.
      live = make_pointwise(c, {guard, as_scalar(outs[0])}, DType::Bool,
                            [](KernelBuilder& kb, const std::vector<V>& v) {
                              return kb.binary(Op::And, v[0], v[1]);
                            });
      c.gl.realize(live);
    } else if (!d) {
      go_live(outs[0], "the body's condition output");
    }
  }
  std::vector<TensorBoxPtr> result = state;
  for (size_t k = 0; k < scans; ++k) {
    result.push_back(scan_parts[k].empty() ? empty_scan_output(c, body.outputs[1 + carried + k])
                                           : stack(c, scan_parts[k], 0, false));
  }
  return result;
}

// Element `i` of `t` along `axis`, without that axis.
TensorBoxPtr select_view(const TensorBoxPtr& t, int axis, int64_t i) {
  std::vector<int64_t> size = t->size;
  size.erase(size.begin() + axis);
  return make_view(t, size, [axis, i](const std::vector<Index>& idx) {
    std::vector<Index> out = idx;
    out.insert(out.begin() + axis, ix_const(i));
    return out;
  });
}

struct ScanSpec {
  std::vector<int> in_axes;  // per scan input, normalized
  std::vector<int64_t> in_dirs, out_axes, out_dirs;
};

// One Scan over `state` and `scan_in` (Scan-9 semantics); returns the final states, then
// the scan outputs.
std::vector<TensorBoxPtr> scan_once(const LowerCtx& c, const Graph& body,
                                    std::vector<TensorBoxPtr> state,
                                    const std::vector<TensorBoxPtr>& scan_in, const ScanSpec& sp) {
  const size_t n_state = state.size(), m = scan_in.size();
  const size_t k_out = body.outputs.size() - n_state;
  int64_t length = -1;
  for (size_t j = 0; j < m; ++j) {
    int64_t len = scan_in[j]->size[sp.in_axes[j]];
    if (length >= 0 && len != length)
      c.error("scan inputs have different lengths: ", length, " and ", len);
    length = len;
  }
  // Every iteration at once, before any: a scan's length is its inputs'.
  count_unrolled(c, body, std::max<int64_t>(length, 0), str_cat("a scan of ", length, " steps"));
  std::vector<std::vector<TensorBoxPtr>> parts(k_out);
  for (int64_t t = 0; t < length; ++t) {
    std::vector<TensorBoxPtr> args = state;
    for (size_t j = 0; j < m; ++j) {
      int64_t at = sp.in_dirs[j] ? length - 1 - t : t;
      args.push_back(select_view(scan_in[j], sp.in_axes[j], at));
    }
    std::vector<TensorBoxPtr> outs = c.gl.lower_subgraph(body, args, c.node);
    for (size_t k = 0; k < n_state; ++k) {
      state[k] = outs[k];
      c.gl.realize(state[k]);
    }
    for (size_t k = 0; k < k_out; ++k) parts[k].push_back(outs[n_state + k]);
  }
  std::vector<TensorBoxPtr> result = state;
  for (size_t k = 0; k < k_out; ++k) {
    if (parts[k].empty()) {
      result.push_back(empty_scan_output(c, body.outputs[n_state + k]));
      continue;
    }
    int axis = c.axis(sp.out_axes[k], parts[k][0]->size.size() + 1);
    result.push_back(stack(c, parts[k], axis, sp.out_dirs[k] != 0));
  }
  return result;
}

std::vector<TensorBoxPtr> lower_scan(LowerCtx& c) {
  const Graph& body = subgraph(c, "body");
  // Scan-8 has a leading sequence_lens input and a batch axis 0 on every input and output.
  const bool batched = c.opset < 9;
  const size_t first = batched ? 1 : 0;
  const int64_t m = c.node.attr_int("num_scan_inputs", -1);
  if (m < 1 || static_cast<size_t>(m) + first > c.in.size())
    c.error("num_scan_inputs ", m, " does not fit ", c.in.size(), " inputs");
  const size_t n_state = c.in.size() - first - static_cast<size_t>(m);
  if (body.inputs.size() != n_state + static_cast<size_t>(m))
    c.error("body takes ", body.inputs.size(), " inputs, the node has ", n_state + m);
  if (body.outputs.size() < n_state)
    c.error("body has ", body.outputs.size(), " outputs, fewer than its ", n_state, " states");
  const size_t k_out = body.outputs.size() - n_state;
  auto attr_list = [&](const char* key, size_t count, int64_t dflt) {
    std::vector<int64_t> v = c.node.attr_ints(key, std::vector<int64_t>(count, dflt));
    if (v.size() != count)
      c.error("attribute '", key, "' has ", v.size(), " values, expected ", count);
    return v;
  };
  ScanSpec sp;
  sp.in_dirs = attr_list(batched ? "directions" : "scan_input_directions", m, 0);
  sp.out_axes = attr_list("scan_output_axes", batched ? 0 : k_out, 0);
  sp.out_dirs = attr_list("scan_output_directions", batched ? 0 : k_out, 0);
  std::vector<int64_t> axes = attr_list("scan_input_axes", batched ? 0 : m, 0);
  std::vector<TensorBoxPtr> state, scan_in;
  for (size_t k = 0; k < n_state; ++k) state.push_back(c.input(first + k));
  for (int64_t j = 0; j < m; ++j) {
    scan_in.push_back(c.input(first + n_state + j));
    if (!batched) sp.in_axes.push_back(c.axis(axes[j], scan_in.back()->size.size()));
  }
  if (!batched) {
    const int64_t length = scan_in.empty() || scan_in[0]->size.empty()
                               ? 0
                               : scan_in[0]->size[static_cast<size_t>(sp.in_axes[0])];
    if (unrolls_too_much(body, length))
      throw NeedsCutError(str_cat(c.node.describe(), ": ", length, " steps would unroll more than ",
                                  kUnrollAtMost, " nodes: it runs at run time"));
    try {
      return scan_once(c, body, state, scan_in, sp);
    } catch (const UnrollLimitError& e) {
      // Past the budget, the Scan runs at run time, its body once per step.
      throw NeedsCutError(str_cat(c.node.describe(), ": runs at run time: ", e.what()));
    }
  }

  // Scan-8: one Scan-9 per batch entry (scan axis 1 becomes 0), results stacked on axis 0.
  sp.in_axes.assign(m, 0);
  sp.out_axes.assign(k_out, 0);
  sp.out_dirs.assign(k_out, 0);
  int64_t batch = -1;
  for (const TensorBoxPtr& t : c.in) {
    if (!t || t == c.in[0]) continue;
    if (t->size.size() < 1) c.error("inputs need a batch axis");
    if (batch >= 0 && t->size[0] != batch) c.error("inputs differ in batch size");
    batch = t->size[0];
  }
  for (const TensorBoxPtr& t : scan_in) {
    if (t->size.size() < 2) c.error("scan inputs need batch and sequence axes");
  }
  if (batch < 1) c.unsupported("an empty batch");
  if (c.has(0)) {
    std::vector<int64_t> lens = c.const_ints(0);
    for (int64_t len : lens) {
      if (len != scan_in[0]->size[1]) c.unsupported("sequence_lens shorter than the sequence axis");
    }
  }
  int64_t steps = 0;
  if (__builtin_mul_overflow(batch, scan_in[0]->size[1], &steps) || unrolls_too_much(body, steps))
    throw NeedsCutError(str_cat(c.node.describe(), ": ", batch, " batch entries of ",
                                scan_in[0]->size[1], " steps would unroll more than ",
                                kUnrollAtMost, " nodes: it runs at run time"));
  std::vector<std::vector<TensorBoxPtr>> per_batch(n_state + k_out);
  try {
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<TensorBoxPtr> st, sc;
      for (const TensorBoxPtr& t : state) st.push_back(select_view(t, 0, b));
      for (const TensorBoxPtr& t : scan_in) sc.push_back(select_view(t, 0, b));
      std::vector<TensorBoxPtr> outs = scan_once(c, body, st, sc, sp);
      for (size_t k = 0; k < outs.size(); ++k) per_batch[k].push_back(outs[k]);
    }
  } catch (const UnrollLimitError& e) {
    throw NeedsCutError(str_cat(c.node.describe(), ": runs at run time: ", e.what()));
  }
  std::vector<TensorBoxPtr> result;
  for (auto& parts : per_batch) result.push_back(stack(c, parts, 0, false));
  return result;
}

}  // namespace

void register_control_flow_ops(LoweringTable& t) {
  t.add("If", lower_if);
  t.add("Loop", lower_loop);
  t.add("Scan", lower_scan);
}

}  // namespace ferrite
