// The proof behind masked_index_range: facts from the comparisons a mask is the conjunction
// of, as bounds of affine functions of the loop variables, then the index bounded as a
// combination of those functions plus a remainder bounded by (narrowed) variable ranges.
#include "jit/mask_bounds.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "jit/analysis_rules.h"

namespace ferrite {
namespace jit {

using namespace ranges;  // NOLINT: the interval arithmetic reads best unqualified

Range FormBounds::form(const LinearForm& f) const {
  Range r = known(f.offset, f.offset);
  for (size_t v = 0; v < f.coeff.size(); ++v)
    if (f.coeff[v] != 0) r = add(r, scale(vars_[v], f.coeff[v]));
  for (const LinearTerm& t : f.terms) r = add(r, scale(term(t), t.factor));
  return r;
}

Range FormBounds::term(const LinearTerm& t) const {
  if (t.kind == IndexKind::Value) return value_(t.id);
  const Range a = form(t.operands[0]);
  const Range b = form(t.operands[1]);
  if (t.kind == IndexKind::Mul) return mul(a, b);
  if (!b.known || b.lo != b.hi || b.lo <= 0) return Range();
  if (t.kind == IndexKind::Mod) return known(0, b.lo - 1);
  if (!a.known) return Range();
  return known(floordiv64(a.lo, b.lo), floordiv64(a.hi, b.lo));
}

std::vector<Range> loop_ranges(const Kernel& k) {
  std::vector<Range> r;
  for (int64_t n : k.ranges) r.push_back(n > 0 ? known(0, n - 1) : Range());
  return r;
}

namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int kMaxDepth = 64;  // of the expressions and conjunctions looked through

// offset + sum(coeff[v] * var_v), exact.
struct Affine {
  bool ok = false;
  int64_t offset = 0;
  std::vector<int64_t> coeff;
};

int64_t clamp64(__int128 v) {
  return v < kMin ? kMin : v > kMax ? kMax : static_cast<int64_t>(v);
}

__int128 floor_div(__int128 a, __int128 b) {
  __int128 q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

__int128 ceil_div(__int128 a, __int128 b) {
  return -floor_div(-a, b);
}

class Prover {
 public:
  Prover(const Kernel& k, const std::vector<Range>& values)
      : k_(k), values_(values), vars_(loop_ranges(k)), full_(vars_), memo_(), narrowed_() {}

  Range run(int mask, const LinearForm& index) {
    if (!conjuncts(mask, 0)) return known(1, 0);  // the mask is never true
    // Each bounded value, with every fact on it intersected: a bound of its variable, or of
    // an affine function of several.
    for (int id : bounded_) {
      const Range r = narrowed(id);
      if (r.lo > r.hi) return known(1, 0);
      const Affine& g = affine(id, 0);
      if (!g.ok) continue;
      int vars = 0, v = -1;
      for (size_t i = 0; i < g.coeff.size(); ++i)
        if (g.coeff[i] != 0) ++vars, v = static_cast<int>(i);
      if (vars == 1) narrow_var(v, g.coeff[v], g.offset, r.lo, r.hi);
      if (vars > 1 && r.lo != kMin && r.hi != kMax) multi_.push_back({g, r});
    }
    for (const Range& v : vars_)
      if (v.known && v.lo > v.hi) return known(1, 0);
    const FormBounds bounds(vars_, [&](int id) { return value(id); });
    // index = sum(m_j * G_j) + rest, with each G_j bounded by the mask: keep a G_j when it
    // narrows the bound.
    LinearForm rest = index;
    Range sum = known(0, 0);
    Range best = bounds.form(rest);
    for (const auto& [g, r] : multi_) {
      LinearForm left = rest;
      int64_t m = 0;
      if (!subtract(g, &left, &m)) continue;
      const Range with = add(add(sum, scale(r, m)), bounds.form(left));
      if (with.known && (!best.known || with.hi - with.lo < best.hi - best.lo)) {
        sum = add(sum, scale(r, m));
        rest = std::move(left);
        best = with;
      }
    }
    return best;
  }

 private:
  Range value(int id) const {
    const Range n = narrowed(id);
    return n.known ? n : values_[id];
  }

  Range narrowed(int id) const {
    auto it = narrowed_.find(id);
    return it == narrowed_.end() ? Range() : it->second;
  }

  // Collects the facts of the conjunction `id`; false when it is the constant false.
  bool conjuncts(int id, int depth) {
    const Instr& in = k_.code[id];
    if (depth > kMaxDepth) return true;
    if (in.op == Op::Const) return in.iimm != 0;
    if (in.op == Op::And) return conjuncts(in.a, depth + 1) && conjuncts(in.b, depth + 1);
    if (op_is_compare(in.op) && k_.code[in.a].type == ScalarType::I64) compare(in);
    return true;
  }

  // a op b, both I64: each side bounded by the other's range.
  void compare(const Instr& in) {
    const Range ra = value(in.a), rb = value(in.b);
    const __int128 one = 1;
    switch (in.op) {
      case Op::Lt:
        if (rb.known) bound(in.a, kMin, rb.hi - one);
        if (ra.known) bound(in.b, ra.lo + one, kMax);
        break;
      case Op::Le:
        if (rb.known) bound(in.a, kMin, rb.hi);
        if (ra.known) bound(in.b, ra.lo, kMax);
        break;
      case Op::Gt:
        if (rb.known) bound(in.a, rb.lo + one, kMax);
        if (ra.known) bound(in.b, kMin, ra.hi - one);
        break;
      case Op::Ge:
        if (rb.known) bound(in.a, rb.lo, kMax);
        if (ra.known) bound(in.b, kMin, ra.hi);
        break;
      case Op::Eq:
        if (rb.known) bound(in.a, rb.lo, rb.hi);
        if (ra.known) bound(in.b, ra.lo, ra.hi);
        break;
      default:
        break;
    }
  }

  // Value `id` lies in [lo, hi] where the mask holds.
  void bound(int id, __int128 lo128, __int128 hi128) {
    int64_t lo = clamp64(lo128), hi = clamp64(hi128);
    const Range cur = value(id);
    if (cur.known) {
      lo = std::max(lo, cur.lo);
      hi = std::min(hi, cur.hi);
    }
    if (!narrowed(id).known) bounded_.push_back(id);
    narrowed_[id] = known(lo, hi);
  }

  // a * var + offset in [lo, hi] (kMin / kMax: no bound on that side).
  void narrow_var(int v, int64_t a, int64_t offset, int64_t lo, int64_t hi) {
    Range& r = vars_[v];
    if (!r.known) return;
    __int128 vlo = r.lo, vhi = r.hi;
    const __int128 l = static_cast<__int128>(lo) - offset, h = static_cast<__int128>(hi) - offset;
    if (a > 0) {
      if (lo != kMin) vlo = std::max(vlo, ceil_div(l, a));
      if (hi != kMax) vhi = std::min(vhi, floor_div(h, a));
    } else {
      if (hi != kMax) vlo = std::max(vlo, ceil_div(h, a));
      if (lo != kMin) vhi = std::min(vhi, floor_div(l, a));
    }
    r = known(clamp64(vlo), clamp64(vhi));
  }

  // The affine form of I64 value `id`, when it is one whose exact value fits int64 at every
  // point (then the wrapping arithmetic the backends use computes exactly that value).
  const Affine& affine(int id, int depth) {
    auto it = memo_.find(id);
    if (it != memo_.end()) return it->second;
    Affine f;
    if (depth <= kMaxDepth) f = build(k_.code[id], depth);
    if (f.ok && !fits(f)) f = Affine();
    return memo_[id] = std::move(f);  // unordered_map: references stay valid as it grows
  }

  bool fits(const Affine& f) const {
    Range r = known(f.offset, f.offset);
    for (size_t v = 0; v < f.coeff.size(); ++v)
      if (f.coeff[v] != 0) r = add(r, scale(full_[v], f.coeff[v]));
    return r.known;
  }

  Affine build(const Instr& in, int depth) {
    Affine f;
    f.coeff.assign(k_.ranges.size(), 0);
    if (in.type != ScalarType::I64) return f;
    switch (in.op) {
      case Op::Const:
        f.offset = in.iimm;
        f.ok = true;
        return f;
      case Op::LoopVar:
        f.coeff[static_cast<size_t>(in.arg)] = 1;
        f.ok = true;
        return f;
      case Op::Neg:
        return scaled(affine(in.a, depth + 1), -1);
      case Op::Add:
      case Op::Sub:
        return sum(affine(in.a, depth + 1), affine(in.b, depth + 1), in.op == Op::Sub ? -1 : 1);
      case Op::Mul: {
        const Affine& a = affine(in.a, depth + 1);
        const Affine& b = affine(in.b, depth + 1);
        if (constant(a)) return scaled(b, a.offset);
        if (constant(b)) return scaled(a, b.offset);
        return f;
      }
      default:
        return f;
    }
  }

  static bool constant(const Affine& f) {
    if (!f.ok) return false;
    for (int64_t c : f.coeff)
      if (c != 0) return false;
    return true;
  }

  static Affine scaled(const Affine& a, int64_t s) {
    Affine f = a;
    if (!f.ok) return f;
    bool ovf = __builtin_mul_overflow(f.offset, s, &f.offset);
    for (int64_t& c : f.coeff) ovf = ovf || __builtin_mul_overflow(c, s, &c);
    f.ok = !ovf;
    return f;
  }

  static Affine sum(const Affine& a, const Affine& b, int64_t sign) {
    Affine f = scaled(b, sign);
    if (!a.ok || !f.ok) return Affine();
    bool ovf = __builtin_add_overflow(f.offset, a.offset, &f.offset);
    for (size_t v = 0; v < f.coeff.size(); ++v)
      ovf = ovf || __builtin_add_overflow(f.coeff[v], a.coeff[v], &f.coeff[v]);
    f.ok = !ovf;
    return f;
  }

  // f -= m * g for the m that cancels one of g's variables in f.
  static bool subtract(const Affine& g, LinearForm* f, int64_t* m) {
    size_t v = 0;
    while (v < g.coeff.size() &&
           (g.coeff[v] == 0 || f->coeff[v] == 0 || f->coeff[v] % g.coeff[v] != 0))
      ++v;
    if (v == g.coeff.size()) return false;
    *m = f->coeff[v] / g.coeff[v];
    int64_t t;
    bool ovf = __builtin_mul_overflow(*m, g.offset, &t) ||
               __builtin_sub_overflow(f->offset, t, &f->offset);
    for (size_t u = 0; u < g.coeff.size(); ++u)
      ovf = ovf || __builtin_mul_overflow(*m, g.coeff[u], &t) ||
            __builtin_sub_overflow(f->coeff[u], t, &f->coeff[u]);
    return !ovf;
  }

  const Kernel& k_;
  const std::vector<Range>& values_;
  std::vector<Range> vars_;        // narrowed by the mask
  const std::vector<Range> full_;  // over every point
  // Per value, only for those the mask reaches: a Prover runs once per masked load, and a
  // kernel may hold thousands of them among tens of thousands of values (a wide Concat).
  std::unordered_map<int, Affine> memo_;
  std::unordered_map<int, Range> narrowed_;      // a value's bound where the mask holds
  std::vector<int> bounded_;                     // the values narrowed_ holds a bound for
  std::vector<std::pair<Affine, Range>> multi_;  // facts on functions of several variables
};

}  // namespace

Range masked_index_range(const Kernel& validated, const std::vector<Range>& values, int mask,
                         const LinearForm& index) {
  return Prover(validated, values).run(mask, index);
}

}  // namespace jit
}  // namespace ferrite
