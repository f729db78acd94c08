// Reshapes over the symbols (docs/shapes.md): a reshape of a value with sym sizes to sizes
// the lowering computed over the same symbols. The dims are grouped as PyTorch's view
// does (runs of old and new dims of equal products, compared as monomials over the
// symbols); within a group the new index is linearized and split into the old dims, with
// a division by a symbol where a symbolic dim is merged or split. A group of one old dim
// needs no division at all, so the common reshapes (a head split [B, S, 256] -> [B, S, 4,
// 64], an added or dropped size-1 dim, a flatten of trailing static dims) keep their
// indices affine, and their strides over the symbols when the old dims of each group are
// contiguous among themselves.
#include "compiler/loopir/checked_int.h"
#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

// Old dims and new dims (size-1 dims left out) of equal products.
struct Group {
  std::vector<int> from, to;
};

bool is_one(const Index& d) {
  return sym_is_const(d, 1);
}

// Groups `from` into `to`, or false when their dims do not line up as products.
bool group_dims(const std::vector<Index>& from, const std::vector<Index>& to,
                std::vector<Group>* out) {
  std::vector<SymMonomial> a, b;
  for (const Index& d : from) {
    auto m = sym_monomial(d);
    if (!m || m->coeff <= 0) return false;
    a.push_back(*m);
  }
  for (const Index& d : to) {
    auto m = sym_monomial(d);
    if (!m || m->coeff <= 0) return false;
    b.push_back(*m);
  }
  size_t i = 0, j = 0;
  auto skip = [](const std::vector<Index>& dims, size_t* k) {
    while (*k < dims.size() && is_one(dims[*k])) ++*k;
  };
  for (;;) {
    skip(from, &i);
    skip(to, &j);
    if (i == a.size() || j == b.size()) return i == a.size() && j == b.size();
    Group g;
    SymMonomial pa = a[i], pb = b[j];
    g.from.push_back(static_cast<int>(i++));
    g.to.push_back(static_cast<int>(j++));
    while (!monomial_equal(pa, pb)) {
      if (monomial_div(pa, pb)) {  // the new dims so far divide the old: take another new
        skip(to, &j);
        if (j == b.size()) return false;
        pb = monomial_mul(pb, b[j]);
        g.to.push_back(static_cast<int>(j++));
      } else if (monomial_div(pb, pa)) {
        skip(from, &i);
        if (i == a.size()) return false;
        pa = monomial_mul(pa, a[i]);
        g.from.push_back(static_cast<int>(i++));
      } else {
        return false;
      }
    }
    out->push_back(std::move(g));
  }
}

// The product of dims[k] for k in `dims` after position `pos` (a stride within a group).
Index inner_product(const std::vector<Index>& sizes, const std::vector<int>& dims, size_t pos) {
  Index p = ix_const(1);
  for (size_t k = pos + 1; k < dims.size(); ++k)
    p = sym_mul(p, sizes[static_cast<size_t>(dims[k])]);
  return p;
}

int64_t inner_hint(const std::vector<int64_t>& sizes, const std::vector<int>& dims, size_t pos) {
  int64_t p = 1;
  for (size_t k = pos + 1; k < dims.size(); ++k)
    p = checked_mul(p, sizes[static_cast<size_t>(dims[k])], "a reshape's stride");
  return p;
}

// The view's strides over the storage, in hints and over the symbols, when the old dims of
// each group are contiguous among themselves.
bool group_strides(const TensorBox& t, const std::vector<int64_t>& new_size,
                   const std::vector<Index>& new_sym, const std::vector<Group>& groups,
                   StridedView* out) {
  if (!t.strided || !t.strided->sym_offset) return false;
  const StridedView& s = *t.strided;
  out->strides.assign(new_size.size(), 0);
  out->sym_strides.assign(new_size.size(), ix_const(0));
  out->offset = s.offset;
  out->sym_offset = s.sym_offset;
  for (const Group& g : groups) {
    for (size_t k = 0; k + 1 < g.from.size(); ++k) {
      const size_t p = static_cast<size_t>(g.from[k]), q = static_cast<size_t>(g.from[k + 1]);
      auto outer = sym_monomial(s.sym_strides[p]);
      auto inner = sym_monomial(sym_mul(s.sym_strides[q], (*t.sym)[q]));
      if (!outer || !inner || !monomial_equal(*outer, *inner)) return false;
    }
    const size_t last = static_cast<size_t>(g.from.back());
    for (size_t k = 0; k < g.to.size(); ++k) {
      const size_t o = static_cast<size_t>(g.to[k]);
      out->strides[o] = checked_mul(s.strides[last], inner_hint(new_size, g.to, k), "a stride");
      out->sym_strides[o] = sym_mul(s.sym_strides[last], inner_product(new_sym, g.to, k));
    }
  }
  return true;
}

}  // namespace

TensorBoxPtr reshape_view_sym(const TensorBoxPtr& t, const std::vector<int64_t>& new_size,
                              const std::optional<std::vector<Index>>& new_sym) {
  std::vector<Group> groups;
  if (!t->sym || !new_sym || new_sym->size() != new_size.size() ||
      !group_dims(*t->sym, *new_sym, &groups)) {
    // Not symbolic from here: the view holds no sym sizes (a reshape to t's own hint sizes
    // is t itself, whose sym sizes may not be the reshape's at other sizes).
    auto v = std::make_shared<TensorBox>(*reshape_view(t, new_size));
    v->sym.reset();
    if (v->strided) {
      v->strided->sym_strides.clear();
      v->strided->sym_offset = nullptr;
    }
    return v;
  }
  const std::vector<Index> old_sym = *t->sym, to_sym = *new_sym;
  Reindex re = [old_sym, to_sym, groups](const std::vector<Index>& idx) {
    std::vector<Index> out(old_sym.size(), ix_const(0));
    for (const Group& g : groups) {
      Index lin = ix_const(0);
      for (size_t k = 0; k < g.to.size(); ++k)
        lin =
            ix_add(lin, sym_mul(idx[static_cast<size_t>(g.to[k])], inner_product(to_sym, g.to, k)));
      for (size_t k = 0; k < g.from.size(); ++k) {
        const size_t d = static_cast<size_t>(g.from[k]);
        Index v = g.from.size() == 1 ? lin : sym_floordiv(lin, inner_product(old_sym, g.from, k));
        if (k > 0) v = sym_mod(v, old_sym[d]);  // the outermost old dim needs no mod
        out[d] = v;
      }
    }
    return out;
  };
  TensorBoxPtr v = make_view(t, new_size, re);
  v->sym = to_sym;
  StridedView s;
  if (group_strides(*t, new_size, to_sym, groups, &s)) {
    v->strided = std::move(s);
  } else if (v->strided) {
    v->strided->sym_strides.clear();  // hint strides only: an extern copies it
    v->strided->sym_offset = nullptr;
  }
  return v;
}

}  // namespace ferrite
