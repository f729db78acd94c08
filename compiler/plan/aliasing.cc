// in_place_kernel_refusal: the in-place rule checked on one kernel.
#include "compiler/plan/aliasing.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "compiler/plan/error.h"

namespace ferrite {
namespace {

// True when `e` is affine and maps distinct points of `ranges` to distinct elements: with
// the used dims sorted by |coefficient|, each coefficient exceeds the largest offset the
// smaller ones can reach together (a mixed-radix numbering). A sufficient test; an index
// it cannot prove one-to-one is refused.
bool one_to_one(const IndexNode& e, const std::vector<int64_t>& ranges) {
  const int n = static_cast<int>(ranges.size());
  AffineIndex f;
  if (!as_affine(e, n, &f)) return false;
  std::vector<std::pair<int64_t, int64_t>> dims;  // (|coeff|, range)
  for (int v = 0; v < n; ++v) {
    if (ranges[v] == 0) return true;  // no points at all
    if (ranges[v] == 1) continue;
    if (f.coeff[v] == 0 || f.coeff[v] == std::numeric_limits<int64_t>::min()) return false;
    dims.emplace_back(std::llabs(f.coeff[v]), ranges[v]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t reach = 0;  // the largest |offset| the dims so far can add up to
  for (const auto& d : dims) {
    if (d.first <= reach) return false;
    int64_t span;
    if (__builtin_mul_overflow(d.first, d.second - 1, &span) ||
        __builtin_add_overflow(reach, span, &reach))
      return false;
  }
  return true;
}

// Whether `e` (no Value leaves) gives two points of the first `nvars` of `ranges` one
// element: a used dim whose coefficient is 0 proves it at once; otherwise, for an index the
// mixed-radix test cannot prove one-to-one, its values at every point are compared when
// there are at most kMaxEnumerated points. Above that, an unproven index is let through:
// backends stay in bounds either way, only the result would depend on their order.
constexpr int64_t kMaxEnumerated = int64_t{1} << 20;

bool stores_collide(const IndexNode& e, const std::vector<int64_t>& ranges, int nvars) {
  const std::vector<int64_t> dom(ranges.begin(), ranges.begin() + nvars);
  if (one_to_one(e, dom)) return false;
  int64_t points = 1;
  for (int64_t r : dom) {
    if (r == 0) return false;
    if (__builtin_mul_overflow(points, r, &points)) return false;
  }
  AffineIndex f;
  if (as_affine(e, nvars, &f)) {
    for (int v = 0; v < nvars; ++v)
      if (dom[v] > 1 && f.coeff[v] == 0) return true;
  } else {
    for (int v = 0; v < nvars; ++v)
      if (dom[v] > 1 && !index_uses_var(e, v)) return true;
  }
  if (points > kMaxEnumerated) return false;
  std::vector<int64_t> seen;
  seen.reserve(static_cast<size_t>(points));
  std::vector<int64_t> vars(ranges.size(), 0);
  for (int64_t n = 0; n < points; ++n) {
    seen.push_back(eval_index(e, vars.data(), nullptr));
    for (int v = nvars - 1; v >= 0 && ++vars[v] == dom[v]; --v) vars[v] = 0;
  }
  std::sort(seen.begin(), seen.end());
  return std::adjacent_find(seen.begin(), seen.end()) != seen.end();
}

// The code positions and index trees of the loads (or stores) of `args`.
struct Accesses {
  std::vector<const IndexNode*> index;
  int first = -1, last = -1;
};

Accesses accesses(const Kernel& k, const std::vector<int>& args, bool store) {
  std::vector<bool> of(k.args.size(), false);
  for (int a : args) of[static_cast<size_t>(a)] = true;
  Accesses a;
  for (size_t i = 0; i < k.code.size(); ++i) {
    const Instr& in = k.code[i];
    if (in.op != (store ? Op::Store : Op::Load)) continue;
    if (!of[static_cast<size_t>(in.arg)]) continue;
    a.index.push_back(in.index.get());
    if (a.first < 0) a.first = static_cast<int>(i);
    a.last = static_cast<int>(i);
  }
  return a;
}

}  // namespace

std::string in_place_kernel_refusal(const Kernel& k, const std::vector<int>& in_args, int out_arg) {
  if (k.num_reduce != 0) return "the kernel has reduction dims";
  for (int a : in_args)
    if (k.args[a].output) return str_cat("the input is bound to output arg ", a);
  if (!k.args[out_arg].output) return "the output is bound to an input arg";
  const Accesses loads = accesses(k, in_args, false);
  const Accesses stores = accesses(k, {out_arg}, true);
  if (stores.index.empty()) return "the kernel does not store the output";
  const IndexNode& st = *stores.index[0];
  for (const IndexNode* s : stores.index)
    if (!index_equal(*s, st)) return "the output is stored at different indices";
  for (const IndexNode* l : loads.index)
    if (!index_equal(*l, st))
      return str_cat("the input is loaded at ", index_to_string(*l), ", the output stored at ",
                     index_to_string(st));
  if (loads.last > stores.first)
    return str_cat("instr %", loads.last, " loads the input after the store %", stores.first);
  if (!one_to_one(st, k.ranges)) return "the store index is not provably one-to-one";
  return "";
}

namespace {

// An operand's bytes: a range in the pool (space -1) or a whole other buffer (its own space).
struct Extent {
  int64_t space, begin, end;
  int operand;
  bool writes;
};

std::vector<Extent> extents(const Plan& p, const std::vector<std::pair<int32_t, bool>>& ops) {
  std::vector<Extent> out;
  for (size_t i = 0; i < ops.size(); ++i) {
    const PlanBuffer& b = p.buffers[static_cast<size_t>(ops[i].first)];
    const int64_t n = b.nbytes();
    if (n == 0) continue;  // touches nothing
    const bool temp = b.kind == BufferKind::Temp;
    out.push_back(Extent{temp ? -1 : ops[i].first, temp ? b.offset : 0, temp ? b.offset + n : n,
                         static_cast<int>(i), ops[i].second});
  }
  std::sort(out.begin(), out.end(), [](const Extent& a, const Extent& b) {
    if (a.space != b.space) return a.space < b.space;
    return a.begin != b.begin ? a.begin < b.begin : a.operand < b.operand;
  });
  return out;
}

// Calls f(cluster) on each maximal group of operands whose bytes overlap one another
// (connected through overlaps), of two or more operands, one of which writes.
template <class F>
void for_each_written_overlap(const std::vector<Extent>& e, F f) {
  size_t first = 0;
  while (first < e.size()) {
    size_t last = first + 1;
    int64_t end = e[first].end;
    bool writes = e[first].writes;
    while (last < e.size() && e[last].space == e[first].space && e[last].begin < end) {
      end = std::max(end, e[last].end);
      writes = writes || e[last].writes;
      ++last;
    }
    if (last - first > 1 && writes)
      f(std::vector<Extent>(e.begin() + static_cast<std::ptrdiff_t>(first),
                            e.begin() + static_cast<std::ptrdiff_t>(last)));
    first = last;
  }
}

void check_kernel_step(const Plan& p, size_t s, const Step& st) {
  const Kernel& k = p.kernels[static_cast<size_t>(st.index)];
  std::vector<std::pair<int32_t, bool>> ops;
  for (size_t i = 0; i < st.buffers.size(); ++i) ops.push_back({st.buffers[i], k.args[i].output});
  for_each_written_overlap(extents(p, ops), [&](const std::vector<Extent>& c) {
    const std::string where = str_cat("plan: step ", s, " (kernel '", k.name, "') ");
    int out = -1;
    std::vector<int> ins;
    for (const Extent& x : c) {
      if (x.begin != c[0].begin || x.end != c[0].end)
        fail(where, "binds args ", c[0].operand, " and ", x.operand,
             " to overlapping but different bytes");
      if (dtype_size(k.args[x.operand].dtype) != dtype_size(k.args[c[0].operand].dtype))
        fail(where, "binds args ", c[0].operand, " and ", x.operand,
             " of different element sizes to the same bytes");
      if (!x.writes) {
        ins.push_back(x.operand);
      } else if (out >= 0) {
        fail(where, "writes the same bytes through args ", out, " and ", x.operand);
      } else {
        out = x.operand;
      }
    }
    const std::string why = in_place_kernel_refusal(k, ins, out);
    if (!why.empty())
      fail(where, "writes output arg ", out, " in place of arg ", ins[0],
           ", which it may not: ", why);
  });
}

void check_extern_step(const Plan& p, size_t s, const Step& st) {
  const ExternCall& x = p.externs[static_cast<size_t>(st.index)];
  std::vector<std::pair<int32_t, bool>> ops;
  for (const TensorRef& r : x.inputs) ops.push_back({r.buffer, false});
  for (const TensorRef& r : x.outputs) ops.push_back({r.buffer, true});
  for_each_written_overlap(extents(p, ops), [&](const std::vector<Extent>& c) {
    auto name = [&](int i) {
      const size_t n = x.inputs.size();
      return static_cast<size_t>(i) < n ? str_cat("input ", i) : str_cat("output ", i - n);
    };
    fail("plan: step ", s, " (extern ", extern_op_name(x.op), ") ", name(c[0].operand), " and ",
         name(c[1].operand), " share bytes (an extern's outputs are distinct memory)");
  });
}

}  // namespace

void check_step_overlaps(const Plan& p, size_t s) {
  const Step& st = p.steps[s];
  if (st.kind == StepKind::Kernel) return check_kernel_step(p, s, st);
  check_extern_step(p, s, st);
}

void check_store_collisions(const Kernel& k) {
  for (size_t i = 0; i < k.code.size(); ++i) {
    const Instr& x = k.code[i];
    if (x.op != Op::Store || !x.index || index_uses_value(*x.index)) continue;
    const int nvars =
        static_cast<int>(i) < k.post_begin ? static_cast<int>(k.ranges.size()) : k.num_outer();
    if (stores_collide(*x.index, k.ranges, nvars)) {
      fail("kernel '", k.name, "': instr %", i, " (Store): index ", index_to_string(*x.index),
           " writes one element of arg ", x.arg,
           " from several iteration points (the result would depend on their order)");
    }
  }
}

}  // namespace ferrite
