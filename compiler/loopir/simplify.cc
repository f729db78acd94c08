#include "compiler/loopir/simplify.h"

#include <algorithm>
#include <string>

#include "compiler/loopir/checked_int.h"
#include "compiler/plan/error.h"

namespace ferrite {
namespace {

// A canonical sum: constant + sum(coeff * atom). Atoms are Var, Value, and the div, mod
// and product nodes the rules could not remove; `key` identifies an atom structurally.
struct Term {
  int64_t coeff;
  Index atom;
  std::string key;
};

struct Lin {
  int64_t c = 0;
  std::vector<Term> terms;
};

// Coefficients and constants are products and sums of a lowering's strides, offsets and
// steps: one past int64 is an Error rather than a wrapped index.
constexpr const char* kCoeff = "internal: an index coefficient";

void add_term(Lin* x, int64_t coeff, const Index& atom, std::string key) {
  if (coeff == 0) return;
  for (auto& t : x->terms) {
    if (t.key == key) {
      t.coeff = checked_add(t.coeff, coeff, kCoeff);
      return;
    }
  }
  x->terms.push_back({coeff, atom, std::move(key)});
}

void add_term(Lin* x, int64_t coeff, const Index& atom) {
  if (coeff != 0) add_term(x, coeff, atom, index_to_string(*atom));
}

void add_lin(Lin* x, const Lin& y, int64_t scale) {
  x->c = checked_add(x->c, checked_mul(y.c, scale, kCoeff), kCoeff);
  for (const auto& t : y.terms) add_term(x, checked_mul(t.coeff, scale, kCoeff), t.atom, t.key);
}

// Appends the factors of a product atom (a Mul of non-constant factors), or the atom itself.
void factors(const Index& e, std::vector<std::pair<std::string, Index>>* out) {
  if (e->kind == IndexKind::Mul && e->a->kind != IndexKind::Const &&
      e->b->kind != IndexKind::Const) {
    factors(e->a, out);
    factors(e->b, out);
    return;
  }
  out->emplace_back(index_to_string(*e), e);
}

// The product of two atoms as one atom, its factors in key order: s1*i0 and i0*s1 are the
// same term.
Index product(const Index& a, const Index& b) {
  std::vector<std::pair<std::string, Index>> f;
  factors(a, &f);
  factors(b, &f);
  std::stable_sort(f.begin(), f.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  Index out = f[0].second;
  for (size_t i = 1; i < f.size(); ++i) out = ix_binary(IndexKind::Mul, out, f[i].second);
  return out;
}

Index from_lin(Lin x) {
  x.terms.erase(
      std::remove_if(x.terms.begin(), x.terms.end(), [](const Term& t) { return t.coeff == 0; }),
      x.terms.end());
  std::sort(x.terms.begin(), x.terms.end(),
            [](const Term& a, const Term& b) { return a.key < b.key; });
  Index out;
  for (const auto& t : x.terms) {
    Index term = t.coeff == 1 ? t.atom : ix_binary(IndexKind::Mul, t.atom, ix_const(t.coeff));
    out = out ? ix_binary(IndexKind::Add, out, term) : term;
  }
  if (!out) return ix_const(x.c);
  if (x.c != 0) out = ix_binary(IndexKind::Add, out, ix_const(x.c));
  return out;
}

}  // namespace

class SimplifyImpl {
 public:
  explicit SimplifyImpl(const IndexSimplifier& s) : s_(s) {}

  Lin lin(const Index& e) const {
    Lin out;
    switch (e->kind) {
      case IndexKind::Const:
        out.c = e->c;
        return out;
      case IndexKind::Var:
      case IndexKind::Value:
      case IndexKind::Sym:
        add_term(&out, 1, e);
        return out;
      case IndexKind::Add:
        add_lin(&out, lin(e->a), 1);
        add_lin(&out, lin(e->b), 1);
        recombine(&out);
        return out;
      case IndexKind::Mul: {
        Lin a = lin(e->a), b = lin(e->b);
        if (b.terms.empty()) {
          add_lin(&out, a, b.c);
        } else if (a.terms.empty()) {
          add_lin(&out, b, a.c);
        } else {  // (a.c + sum a_i) * (b.c + sum b_j), distributed: a polynomial of atoms
          out.c = checked_mul(a.c, b.c, kCoeff);
          for (const Term& t : a.terms) add_term(&out, checked_mul(t.coeff, b.c, kCoeff), t.atom);
          for (const Term& t : b.terms) add_term(&out, checked_mul(t.coeff, a.c, kCoeff), t.atom);
          for (const Term& ta : a.terms)
            for (const Term& tb : b.terms)
              add_term(&out, checked_mul(ta.coeff, tb.coeff, kCoeff), product(ta.atom, tb.atom));
        }
        return out;
      }
      case IndexKind::FloorDiv:
      case IndexKind::Mod: {
        Lin a = lin(e->a), b = lin(e->b);
        if (!b.terms.empty() || b.c <= 0) {
          add_term(&out, 1, ix_binary(e->kind, from_lin(a), from_lin(b)));
          return out;
        }
        return e->kind == IndexKind::FloorDiv ? div(a, b.c) : mod(a, b.c);
      }
    }
    return out;
  }

  std::optional<IndexRange> range_lin(const Lin& x) const {
    IndexRange r{x.c, x.c};
    for (const auto& t : x.terms) {
      auto a = range_atom(t.atom);
      if (!a) return std::nullopt;
      int64_t p, q;
      // A range past int64 proves nothing: no bound, rather than a wrapped one.
      if (__builtin_mul_overflow(t.coeff, a->lo, &p) ||
          __builtin_mul_overflow(t.coeff, a->hi, &q) ||
          __builtin_add_overflow(r.lo, std::min(p, q), &r.lo) ||
          __builtin_add_overflow(r.hi, std::max(p, q), &r.hi))
        return std::nullopt;
    }
    return r;
  }

  std::optional<IndexRange> range_atom(const Index& e) const {
    switch (e->kind) {
      case IndexKind::Const:
        return IndexRange{e->c, e->c};
      case IndexKind::Var:
        if (e->id < 0 || e->id >= static_cast<int>(s_.extent_.size())) return std::nullopt;
        return IndexRange{0, std::max<int64_t>(0, s_.extent_[e->id] - 1)};
      case IndexKind::Value: {
        auto it = s_.value_size_.find(e->id);
        if (it == s_.value_size_.end()) return std::nullopt;
        return IndexRange{0, std::max<int64_t>(0, it->second - 1)};
      }
      case IndexKind::Sym: {
        auto it = s_.symbol_range_.find(e->id);
        if (it == s_.symbol_range_.end()) return s_.default_symbol_range_;
        return it->second;
      }
      case IndexKind::Mul: {  // a product the rules kept (of two non-constant factors)
        auto a = range_lin(lin(e->a)), b = range_lin(lin(e->b));
        if (!a || !b) return std::nullopt;
        int64_t p[4];
        if (__builtin_mul_overflow(a->lo, b->lo, &p[0]) ||
            __builtin_mul_overflow(a->lo, b->hi, &p[1]) ||
            __builtin_mul_overflow(a->hi, b->lo, &p[2]) ||
            __builtin_mul_overflow(a->hi, b->hi, &p[3]))
          return std::nullopt;
        return IndexRange{*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
      }
      case IndexKind::FloorDiv: {
        auto a = range_lin(lin(e->a));
        if (!a || e->b->kind != IndexKind::Const || e->b->c <= 0) return std::nullopt;
        return IndexRange{floordiv64(a->lo, e->b->c), floordiv64(a->hi, e->b->c)};
      }
      case IndexKind::Mod: {
        if (e->b->kind != IndexKind::Const || e->b->c <= 0) return std::nullopt;
        auto a = range_lin(lin(e->a));
        if (a && a->lo >= 0 && a->hi < e->b->c) return a;
        return IndexRange{0, e->b->c - 1};
      }
      default:
        return range_lin(lin(e));
    }
  }

 private:
  // k*d*(y // d) + k*(y % d) → k*y: undoes the div/mod pairs a reshape introduces.
  void recombine(Lin* x) const {
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = 0; i < x->terms.size() && !changed; ++i) {
        const Index atom = x->terms[i].atom;
        const int64_t k = x->terms[i].coeff;
        if (atom->kind != IndexKind::Mod || atom->b->kind != IndexKind::Const || atom->b->c <= 0) {
          continue;
        }
        const int64_t d = atom->b->c;
        Lin y = lin(atom->a);
        Lin q = div(y, d);
        if (q.c != 0 || q.terms.size() != 1 || q.terms[0].coeff != 1) continue;
        for (size_t j = 0; j < x->terms.size(); ++j) {
          if (j == i || x->terms[j].key != q.terms[0].key || x->terms[j].coeff != k * d) continue;
          x->terms.erase(x->terms.begin() + std::max(i, j));
          x->terms.erase(x->terms.begin() + std::min(i, j));
          add_lin(x, y, k);
          changed = true;
          break;
        }
      }
    }
  }

  // Splits x into d * quotient + rest, pulling out every term whose coefficient d divides.
  void split(const Lin& x, int64_t d, Lin* quot, Lin* rest) const {
    quot->c = floordiv64(x.c, d);
    rest->c = mod64(x.c, d);
    for (const auto& t : x.terms) {
      if (t.coeff % d == 0) {
        add_term(quot, t.coeff / d, t.atom, t.key);
      } else {
        add_term(rest, t.coeff, t.atom, t.key);
      }
    }
  }

  Lin div(const Lin& x, int64_t d) const {
    if (d == 1) return x;
    Lin q, r;
    split(x, d, &q, &r);
    auto rr = range_lin(r);
    if (rr && rr->lo >= 0 && rr->hi < d) return q;  // rest // d == 0
    int64_t ad;
    if (r.c == 0 && r.terms.size() == 1 && r.terms[0].coeff == 1 &&
        r.terms[0].atom->kind == IndexKind::FloorDiv &&
        r.terms[0].atom->b->kind == IndexKind::Const && r.terms[0].atom->b->c > 0 &&
        !__builtin_mul_overflow(r.terms[0].atom->b->c, d, &ad)) {
      // (y // a) // d → y // (a*d)
      add_lin(&q, div(lin(r.terms[0].atom->a), ad), 1);
      return q;
    }
    add_term(&q, 1, ix_binary(IndexKind::FloorDiv, from_lin(r), ix_const(d)));
    return q;
  }

  Lin mod(const Lin& x, int64_t d) const {
    Lin out;
    if (d == 1) return out;
    Lin q, r;
    split(x, d, &q, &r);
    auto rr = range_lin(r);
    if (rr && rr->lo >= 0 && rr->hi < d) return r;
    if (r.c == 0 && r.terms.size() == 1 && r.terms[0].coeff == 1) {
      const Index& a = r.terms[0].atom;
      int64_t kd;
      if (a->kind == IndexKind::FloorDiv && a->b->kind == IndexKind::Const && a->b->c > 0 &&
          !__builtin_mul_overflow(a->b->c, d, &kd)) {
        // (y // k) % d == y // k when y < k*d
        auto yr = range_lin(lin(a->a));
        if (yr && yr->lo >= 0 && yr->hi < kd) return r;
      }
      if (a->kind == IndexKind::Mod && a->b->kind == IndexKind::Const && a->b->c > 0 &&
          a->b->c % d == 0) {
        return mod(lin(a->a), d);  // (y % (k*d)) % d → y % d
      }
    }
    add_term(&out, 1, ix_binary(IndexKind::Mod, from_lin(r), ix_const(d)));
    return out;
  }

  const IndexSimplifier& s_;
};

void IndexSimplifier::set_value_range(int id, int64_t size) {
  value_size_.emplace(id, size);  // the first range declared for an id holds
}

void IndexSimplifier::set_symbol_range(int id, int64_t lo, int64_t hi) {
  symbol_range_[id] = IndexRange{lo, hi};
}

Index IndexSimplifier::simplify(const Index& e) const {
  SimplifyImpl impl(*this);
  return from_lin(impl.lin(e));
}

std::optional<IndexRange> IndexSimplifier::range(const Index& e) const {
  SimplifyImpl impl(*this);
  return impl.range_lin(impl.lin(e));
}

Index ix_add(Index a, Index b) {
  if (a->kind == IndexKind::Const && b->kind == IndexKind::Const)
    return ix_const(checked_add(a->c, b->c, "internal: an index constant"));
  if (a->kind == IndexKind::Const && a->c == 0) return b;
  if (b->kind == IndexKind::Const && b->c == 0) return a;
  return ix_binary(IndexKind::Add, std::move(a), std::move(b));
}

Index ix_mul(Index a, int64_t c) {
  if (c == 0) return ix_const(0);
  if (c == 1) return a;
  if (a->kind == IndexKind::Const)
    return ix_const(checked_mul(a->c, c, "internal: an index constant"));
  return ix_binary(IndexKind::Mul, std::move(a), ix_const(c));
}

Index ix_floordiv(Index a, int64_t c) {
  if (c <= 0) fail("internal: an index divided by ", c);
  if (c == 1) return a;
  if (a->kind == IndexKind::Const) return ix_const(floordiv64(a->c, c));
  return ix_binary(IndexKind::FloorDiv, std::move(a), ix_const(c));
}

Index ix_mod(Index a, int64_t c) {
  if (c <= 0) fail("internal: an index modulo ", c);
  if (c == 1) return ix_const(0);
  if (a->kind == IndexKind::Const) return ix_const(mod64(a->c, c));
  return ix_binary(IndexKind::Mod, std::move(a), ix_const(c));
}

}  // namespace ferrite
