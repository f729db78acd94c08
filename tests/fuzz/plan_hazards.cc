#include "tests/fuzz/plan_hazards.h"

#include <algorithm>
#include <vector>

#include "compiler/plan/error.h"

namespace ferrite::fuzz {
namespace {

constexpr int64_t kMaxPoints = int64_t{1} << 22;
// Points enumerated for one plan in all: a compiled Concat of 8,000 inputs has hundreds of
// stores of up to 2^22 points each, which took minutes under ASan.
constexpr int64_t kMaxPlanPoints = int64_t{1} << 21;

// Bytes of a buffer: temps share the pool (space -1), every other buffer is its own space.
struct Region {
  int64_t space, begin, end;
};

Region region_of(const Plan& p, int32_t id) {
  const PlanBuffer& b = p.buffers[static_cast<size_t>(id)];
  const int64_t n = b.nbytes();
  if (b.kind == BufferKind::Temp) return {-1, b.offset, b.offset + n};
  return {id, 0, n};
}

bool overlap(const Region& a, const Region& b) {
  return a.space == b.space && a.begin < a.end && b.begin < b.end && a.begin < b.end &&
         b.begin < a.end;
}

// The loop variables instruction i runs over: all of them in the body, the outer ones after.
int vars_of(const Kernel& k, size_t i) {
  return static_cast<int>(i) < k.post_begin ? static_cast<int>(k.ranges.size()) : k.num_outer();
}

// Whether `e` gives a different element at every point of the first `nvars` loop variables.
// Indices through loaded values, loops over kMaxPoints, and loops past what is left of the
// plan's `budget` of points are taken as one-to-one.
bool one_to_one(const Kernel& k, const IndexNode& e, int nvars, int64_t* budget) {
  if (index_uses_value(e)) return true;
  int64_t points = 1;
  for (int v = 0; v < nvars; ++v) {
    if (__builtin_mul_overflow(points, k.ranges[static_cast<size_t>(v)], &points) ||
        points > kMaxPoints) {
      return true;
    }
  }
  if (points > *budget) return true;
  *budget -= points;
  // Sorted rather than hashed: a set's node per point was most of the time under ASan.
  std::vector<int64_t> seen;
  seen.reserve(static_cast<size_t>(points));
  std::vector<int64_t> vars(k.ranges.size(), 0);
  for (int64_t n = 0; n < points; ++n) {
    seen.push_back(eval_index(e, vars.data(), nullptr));
    for (int v = nvars - 1; v >= 0 && ++vars[static_cast<size_t>(v)] == k.ranges[v]; --v) {
      vars[static_cast<size_t>(v)] = 0;
    }
  }
  std::sort(seen.begin(), seen.end());
  if (std::adjacent_find(seen.begin(), seen.end()) != seen.end()) return false;
  return true;
}

// The in-place rule of kernel.h for input arg `in` and output arg `out` on one memory.
bool in_place_ok(const Kernel& k, int32_t in, int32_t out, int64_t* budget) {
  if (k.num_reduce != 0) return false;
  const IndexNode* index = nullptr;
  size_t last_load = 0, first_store = k.code.size();
  for (size_t i = 0; i < k.code.size(); ++i) {
    const Instr& x = k.code[i];
    const bool load = x.op == Op::Load && x.arg == in, store = x.op == Op::Store && x.arg == out;
    if (!load && !store) continue;
    if (!index) index = x.index.get();
    if (!index_equal(*index, *x.index)) return false;
    if (load) last_load = i;
    if (store && i < first_store) first_store = i;
  }
  return !index || (last_load < first_store &&
                    one_to_one(k, *index, static_cast<int>(k.ranges.size()), budget));
}

std::string kernel_step_hazard(const Plan& p, const Step& s, int64_t* budget) {
  const Kernel& k = p.kernels[static_cast<size_t>(s.index)];
  for (size_t i = 0; i < s.buffers.size(); ++i) {
    for (size_t j = 0; j < s.buffers.size(); ++j) {
      if (i == j || !k.args[j].output || (k.args[i].output && i > j)) continue;
      if (!overlap(region_of(p, s.buffers[i]), region_of(p, s.buffers[j]))) continue;
      const bool same_start = region_of(p, s.buffers[i]).begin == region_of(p, s.buffers[j]).begin;
      if (k.args[i].output || !same_start ||
          !in_place_ok(k, static_cast<int32_t>(i), static_cast<int32_t>(j), budget)) {
        return str_cat("kernel '", k.name, "' args ", i, " and ", j,
                       " share memory outside the in-place rule");
      }
    }
  }
  for (size_t i = 0; i < k.code.size(); ++i) {
    const Instr& x = k.code[i];
    if (x.op == Op::Store && x.index && !one_to_one(k, *x.index, vars_of(k, i), budget)) {
      return str_cat("kernel '", k.name, "' stores to one element of arg ", x.arg,
                     " from two iteration points");
    }
  }
  return "";
}

std::string extern_step_hazard(const Plan& p, const Step& s) {
  const ExternCall& x = p.externs[static_cast<size_t>(s.index)];
  for (size_t o = 0; o < x.outputs.size(); ++o) {
    const Region out = region_of(p, x.outputs[o].buffer);
    for (const TensorRef& in : x.inputs) {
      if (overlap(region_of(p, in.buffer), out)) {
        return str_cat("extern ", extern_op_name(x.op), " reads the memory of its output ", o);
      }
    }
    for (size_t o2 = o + 1; o2 < x.outputs.size(); ++o2) {
      if (overlap(region_of(p, x.outputs[o2].buffer), out)) {
        return str_cat("extern ", extern_op_name(x.op), " outputs ", o, " and ", o2,
                       " share memory");
      }
    }
  }
  return "";
}

}  // namespace

std::string order_dependence(const Plan& plan) {
  int64_t budget = kMaxPlanPoints;
  for (const Step& s : plan.steps) {
    const std::string h = s.kind == StepKind::Kernel ? kernel_step_hazard(plan, s, &budget)
                                                     : extern_step_hazard(plan, s);
    if (!h.empty()) return h;
  }
  return "";
}

}  // namespace ferrite::fuzz
