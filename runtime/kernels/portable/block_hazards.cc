// hazard_loads (declared in block_program.h): the loads of a kernel that may see one of the
// kernel's own stores in another order once the interpreter runs blocks of lanes.
//
// The reference runs each phase (an inner loop, or the post phase) point by point, every
// instruction of a point before the next point. The block interpreter runs each instruction
// over a whole block of points first, so a load and a store of one phase that may touch the
// same element can see each other in another order: such a load is a hazard. Phases run
// one after the other for each outer point in both, so a load and a store of different
// phases keep their order, as long as a block holds one outer point (lanes-inner; pointwise
// kernels have one phase). With lanes on an outer dim a block runs each phase for several
// outer points before the next phase, which is still the reference's order when each lane
// touches only elements no other lane of its block touches (lanes_apart). A layer norm
// that stores t[k, j] in one loop and reloads it in the next, with lanes on j, is such a
// case: one index, one element per point (one_to_one).
#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "runtime/kernels/portable/block_program.h"

namespace ferrite {
namespace portable {
namespace {

struct Access {
  int instr = 0;
  int phase = 0;  // inner loop, or num_loops for the post phase
  bool affine = false;
  AffineIndex form;
  int64_t lo = 0, hi = 0;  // elements an affine access can touch (affine: in range)
};

// The values offset + sum(coeff[v] * var_v) takes over vars [from, to); false on overflow.
bool span(const Kernel& k, const AffineIndex& f, int from, int to, int64_t* lo, int64_t* hi) {
  *lo = *hi = f.offset;
  for (int v = from; v < to; ++v) {
    int64_t s;
    if (__builtin_mul_overflow(f.coeff[v], std::max<int64_t>(0, k.ranges[v] - 1), &s) ||
        __builtin_add_overflow(*lo, std::min<int64_t>(0, s), lo) ||
        __builtin_add_overflow(*hi, std::max<int64_t>(0, s), hi))
      return false;
  }
  return true;
}

// f reaches every point of (lane var, reduction vars) at a distinct element: ordered by
// |coefficient|, each exceeds the span of the smaller terms (mixed radix).
bool one_to_one(const Kernel& k, int lane, const AffineIndex& f) {
  std::vector<std::pair<int64_t, int64_t>> terms;  // |coeff|, range - 1
  for (int v = lane; v < static_cast<int>(k.ranges.size()); ++v) {
    if (k.ranges[v] <= 1) continue;
    const int64_t c = f.coeff[v];
    if (c == 0 || c == std::numeric_limits<int64_t>::min()) return false;
    terms.push_back({c < 0 ? -c : c, k.ranges[v] - 1});
  }
  std::sort(terms.begin(), terms.end());
  int64_t reach = 0;
  for (const auto& [c, steps] : terms) {
    int64_t s;
    if (c <= reach || __builtin_mul_overflow(c, steps, &s) ||
        __builtin_add_overflow(reach, s, &reach))
      return false;
  }
  return true;
}

// Lanes on outer dim `lane` (the innermost outer dim; the other outer vars are fixed within
// a block): can two lanes of a block reach one element, one through a and one through b?
// Lane j reaches X + c*j + D(r), D holding the offset and the reduction terms. Not when
// the outer coefficients are equal and either |c| exceeds the spread of D over both, or a
// and b are one index that reaches each point at its own element.
bool lanes_apart(const Kernel& k, int lane, const Access& a, const Access& b) {
  const int outer = k.num_outer(), dims = static_cast<int>(k.ranges.size());
  if (!a.affine || !b.affine) return false;
  for (int v = 0; v < outer; ++v)
    if (a.form.coeff[v] != b.form.coeff[v]) return false;
  if (a.form.offset == b.form.offset && a.form.coeff == b.form.coeff && one_to_one(k, lane, a.form))
    return true;
  int64_t alo, ahi, blo, bhi, spread;
  if (!span(k, a.form, outer, dims, &alo, &ahi) || !span(k, b.form, outer, dims, &blo, &bhi) ||
      __builtin_sub_overflow(std::max(ahi, bhi), std::min(alo, blo), &spread))
    return false;
  const int64_t c = a.form.coeff[lane];
  return c != std::numeric_limits<int64_t>::min() && (c < 0 ? -c : c) > spread;
}

bool may_overlap(const Access& a, const Access& b) {
  return !a.affine || !b.affine || (a.lo <= b.hi && b.lo <= a.hi);
}

}  // namespace

std::vector<bool> hazard_loads(const Kernel& k, bool lanes_outer) {
  lanes_outer = lanes_outer && k.num_outer() > 0;  // no outer dim to put them on otherwise
  const int dims = static_cast<int>(k.ranges.size()), post = k.num_loops();
  // Without lanes on an outer dim, the post phase of a reduction runs as scalars.
  const bool scalar_post = k.num_reduce > 0 && !lanes_outer;
  std::vector<std::vector<Access>> stores(k.args.size());
  std::vector<Access> loads;
  for (int i = 0; i < static_cast<int>(k.code.size()); ++i) {
    const Instr& in = k.code[i];
    if (in.op != Op::Load && in.op != Op::Store) continue;
    Access a;
    a.instr = i;
    a.phase = i < k.post_begin ? k.loop_of(i) : post;
    a.affine = as_affine(*in.index, dims, &a.form) && span(k, a.form, 0, dims, &a.lo, &a.hi);
    (in.op == Op::Store ? stores[in.arg] : loads).push_back(std::move(a));
  }
  std::vector<bool> hazard(k.code.size(), false);
  for (const Access& ld : loads) {
    for (const Access& st : stores[k.code[ld.instr].arg]) {
      if (!may_overlap(ld, st)) continue;
      bool ordered;
      if (ld.phase == st.phase) {
        ordered = scalar_post && ld.phase == post;
      } else {
        ordered = !lanes_outer || lanes_apart(k, k.num_outer() - 1, ld, st);
      }
      if (!ordered) hazard[ld.instr] = true;
    }
  }
  return hazard;
}

}  // namespace portable
}  // namespace ferrite
