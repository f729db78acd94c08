#include "compiler/plan/outer_order.h"

#include <algorithm>
#include <cstdlib>

#include "compiler/plan/loop_dims.h"

namespace ferrite {
namespace {

// The elements of one arg that the accesses of a single outer point can touch: the
// offsets plus the reduction dims' spans, over every access of the arg.
struct Footprint {
  bool first = true;
  std::vector<int64_t> outer_coeff;
  int64_t lo = 0, hi = 0;
};

// Adds an affine access to fp; false when its outer coefficients differ from the earlier
// accesses' or the span overflows.
bool add_access(const Kernel& k, const LinearForm& f, Footprint* fp) {
  const int outer = k.num_outer();
  std::vector<int64_t> oc(f.coeff.begin(), f.coeff.begin() + outer);
  int64_t lo = f.offset, hi = f.offset;
  for (size_t d = outer; d < f.coeff.size(); ++d) {
    int64_t span;
    if (__builtin_mul_overflow(f.coeff[d], k.ranges[d] - 1, &span)) return false;
    int64_t* end = span < 0 ? &lo : &hi;
    if (__builtin_add_overflow(*end, span, end)) return false;
  }
  if (fp->first) {
    fp->first = false;
    fp->outer_coeff = oc;
    fp->lo = lo;
    fp->hi = hi;
    return true;
  }
  fp->lo = std::min(fp->lo, lo);
  fp->hi = std::max(fp->hi, hi);
  return fp->outer_coeff == oc;
}

// Do distinct outer points touch disjoint elements? With strides sorted by size, each must
// step over everything the smaller ones and one point's footprint can reach.
bool outer_points_apart(const Kernel& k, const Footprint& fp) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // |stride|, range
  for (int d = 0; d < k.num_outer(); ++d) {
    if (k.ranges[d] == 1) continue;
    if (fp.outer_coeff[d] == INT64_MIN) return false;
    dims.push_back({std::llabs(fp.outer_coeff[d]), k.ranges[d]});
  }
  std::sort(dims.begin(), dims.end());
  int64_t reach;  // the largest distance between two elements reachable so far
  if (__builtin_sub_overflow(fp.hi, fp.lo, &reach)) return false;
  for (const auto& [stride, range] : dims) {
    int64_t span;
    if (stride <= reach) return false;
    if (__builtin_mul_overflow(stride, range - 1, &span) ||
        __builtin_add_overflow(reach, span, &reach))
      return false;
  }
  return true;
}

}  // namespace

bool outer_points_commute(const Kernel& k) {
  for (int64_t r : k.ranges)
    if (r == 0) return false;  // nothing runs: nothing to gain
  const std::vector<LinearForm> forms = index_forms(k);
  std::vector<bool> stored(k.args.size(), false);
  for (const Instr& in : k.code) {
    if (in.op == Op::CheckIndex) return false;
    if (in.op == Op::Store) stored[in.arg] = true;
  }
  std::vector<Footprint> fp(k.args.size());
  for (size_t i = 0; i < k.code.size(); ++i) {
    const Instr& in = k.code[i];
    if ((in.op != Op::Load && in.op != Op::Store) || !stored[in.arg]) continue;
    if (!forms[i].terms.empty() || !add_access(k, forms[i], &fp[in.arg])) return false;
  }
  for (size_t a = 0; a < k.args.size(); ++a)
    if (stored[a] && !outer_points_apart(k, fp[a])) return false;
  return true;
}

Kernel permute_outer_dims(const Kernel& k, const std::vector<int>& order) {
  const int dims = static_cast<int>(k.ranges.size());
  DimMap m;
  m.num_reduce = k.num_reduce;
  m.coeff.resize(dims);
  m.loop_var.resize(dims);
  std::vector<int> pos(dims);
  for (int d = 0; d < dims; ++d) pos[d] = d < k.num_outer() ? -1 : d;
  for (size_t p = 0; p < order.size(); ++p) pos[order[p]] = static_cast<int>(p);
  for (int d = 0; d < dims; ++d) {
    m.coeff[d] = {{pos[d], 1}};
    m.loop_var[d] = pos[d];
  }
  for (int p = 0; p < dims; ++p) m.ranges.push_back(k.ranges[p < k.num_outer() ? order[p] : p]);
  return remap_dims(k, m);
}

}  // namespace ferrite
