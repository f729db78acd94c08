#include "compiler/loopir/shape_env.h"

#include <algorithm>
#include <map>

#include "compiler/loopir/checked_int.h"
#include "compiler/loopir/simplify.h"

namespace ferrite {

ShapeEnv ShapeEnv::for_inputs(const std::vector<TensorType>& declared,
                              const std::vector<TensorType>& fed) {
  if (declared.size() != fed.size())
    fail("symbolic compile: ", declared.size(), " inputs declared, ", fed.size(), " fed");
  ShapeEnv env;
  std::map<std::string, int64_t> specialized;  // dim name -> the 0 or 1 it was fed
  for (size_t i = 0; i < declared.size(); ++i) {
    const TensorType& d = declared[i];
    const std::vector<int64_t>& shape = fed[i].shape;
    if (!d.rank_known || d.shape.size() != shape.size())
      fail("symbolic compile: input ", i, " is fed rank ", shape.size());
    std::vector<Index> sizes;
    for (size_t k = 0; k < shape.size(); ++k) {
      if (d.shape[k] >= 0) {
        if (shape[k] != d.shape[k])
          fail("symbolic compile: input ", i, " dim ", k, " is ", d.shape[k], ", fed ", shape[k]);
        sizes.push_back(ix_const(shape[k]));
        continue;
      }
      if (shape[k] < 0 || shape[k] > kMaxSize)
        fail("symbolic compile: input ", i, " dim ", k, " is fed ", shape[k]);
      const std::string name = k < d.dim_names.size() ? d.dim_names[k] : "";
      auto sp = specialized.find(name);
      if (shape[k] < kMinHint || sp != specialized.end()) {
        // 0 and 1 are specialized (a lowering that reads a hint of 1 broadcasts it): the
        // dim is that constant in this plan, as Inductor does.
        const bool symbol = std::any_of(env.symbols.begin(), env.symbols.end(),
                                        [&](const ShapeSymbol& s) { return s.name == name; });
        if (!name.empty() && (symbol || (sp != specialized.end() && sp->second != shape[k])))
          fail("symbolic compile: dim '", name, "' is fed two sizes");
        if (!name.empty()) specialized[name] = shape[k];
        sizes.push_back(ix_const(shape[k]));
        continue;
      }
      int found = -1;
      for (size_t s = 0; s < env.symbols.size() && !name.empty(); ++s)
        if (env.symbols[s].name == name) found = static_cast<int>(s);
      if (found >= 0 && env.symbols[static_cast<size_t>(found)].hint != shape[k])
        fail("symbolic compile: dim '", name, "' is fed two sizes");
      if (found < 0) {
        found = static_cast<int>(env.symbols.size());
        env.symbols.push_back(
            ShapeSymbol{name, static_cast<int>(i), static_cast<int>(k), shape[k]});
      }
      sizes.push_back(ix_sym(found));
    }
    env.input_sizes.push_back(std::move(sizes));
  }
  return env;
}

bool ShapeEnv::values_for(const std::vector<std::vector<int64_t>>& shapes,
                          std::vector<int64_t>* values) const {
  if (shapes.size() != input_sizes.size()) return false;
  values->assign(symbols.size(), -1);
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (shapes[i].size() != input_sizes[i].size()) return false;
    for (size_t k = 0; k < shapes[i].size(); ++k) {
      const IndexNode& e = *input_sizes[i][k];
      const int64_t n = shapes[i][k];
      if (e.kind == IndexKind::Const) {
        if (n != e.c) return false;
        continue;
      }
      if (n < kMinSize || n > kMaxSize) return false;
      int64_t& v = (*values)[static_cast<size_t>(e.id)];
      if (v >= 0 && v != n) return false;
      v = n;
    }
  }
  return true;
}

std::vector<int64_t> ShapeEnv::hints() const {
  std::vector<int64_t> h;
  for (const ShapeSymbol& s : symbols) h.push_back(s.hint);
  return h;
}

Index sym_mul(const Index& a, const Index& b) {
  if (b->kind == IndexKind::Const) return ix_mul(a, b->c);
  if (a->kind == IndexKind::Const) return ix_mul(b, a->c);
  return ix_binary(IndexKind::Mul, a, b);
}

std::vector<Index> sym_contiguous_strides(const std::vector<Index>& size) {
  std::vector<Index> strides(size.size());
  Index s = ix_const(1);
  for (size_t d = size.size(); d-- > 0;) {
    strides[d] = s;
    s = sym_mul(s, size[d]);
  }
  return strides;
}

std::vector<Index> sym_consts(const std::vector<int64_t>& values) {
  std::vector<Index> out;
  for (int64_t v : values) out.push_back(ix_const(v));
  return out;
}

bool sym_equal(const Index& a, const Index& b) {
  return index_equal(*a, *b);
}

bool sym_is_const(const Index& a, int64_t c) {
  return a->kind == IndexKind::Const && a->c == c;
}

Index sym_floordiv(const Index& a, const Index& d) {
  if (d->kind == IndexKind::Const) return ix_floordiv(a, d->c);
  return ix_binary(IndexKind::FloorDiv, a, d);
}

Index sym_mod(const Index& a, const Index& d) {
  if (d->kind == IndexKind::Const) return ix_mod(a, d->c);
  return ix_binary(IndexKind::Mod, a, d);
}

Index sym_simplify(const Index& e) {
  return symbolic_simplifier({}).simplify(e);
}

std::optional<IndexRange> sym_range(const Index& e) {
  return symbolic_simplifier({}).range(e);
}

bool guards_hold(const std::vector<SymGuard>& guards, const std::vector<int64_t>& values) {
  for (const SymGuard& g : guards) {
    const int64_t v = eval_size_formula(*g.formula, values);
    if (v < g.lo || v > g.hi) return false;
  }
  return true;
}

std::optional<SymMonomial> sym_monomial(const Index& e) {
  switch (e->kind) {
    case IndexKind::Const:
      return SymMonomial{e->c, {}};
    case IndexKind::Sym:
      return SymMonomial{1, {e->id}};
    case IndexKind::Mul: {
      auto a = sym_monomial(e->a), b = sym_monomial(e->b);
      if (!a || !b) return std::nullopt;
      int64_t c;
      if (__builtin_mul_overflow(a->coeff, b->coeff, &c)) return std::nullopt;
      return monomial_mul(*a, *b);
    }
    default:
      return std::nullopt;
  }
}

Index monomial_index(const SymMonomial& m) {
  Index out = ix_const(m.coeff);
  for (int32_t s : m.syms) out = sym_mul(out, ix_sym(s));
  return out;
}

bool monomial_equal(const SymMonomial& a, const SymMonomial& b) {
  return a.coeff == b.coeff && (a.coeff == 0 || a.syms == b.syms);
}

SymMonomial monomial_mul(const SymMonomial& a, const SymMonomial& b) {
  SymMonomial m;
  m.coeff = checked_mul(a.coeff, b.coeff, "a symbolic size");
  m.syms = a.syms;
  m.syms.insert(m.syms.end(), b.syms.begin(), b.syms.end());
  std::sort(m.syms.begin(), m.syms.end());
  return m;
}

std::optional<SymMonomial> monomial_div(const SymMonomial& a, const SymMonomial& b) {
  if (b.coeff == 0 || a.coeff % b.coeff != 0) return std::nullopt;
  SymMonomial m;
  m.coeff = a.coeff / b.coeff;
  std::vector<int32_t> rest;
  size_t j = 0;
  for (int32_t s : a.syms) {
    if (j < b.syms.size() && b.syms[j] == s) {
      ++j;
    } else {
      rest.push_back(s);
    }
  }
  if (j != b.syms.size()) return std::nullopt;
  m.syms = std::move(rest);
  return m;
}

std::optional<SymMonomial> sym_product(const std::vector<Index>& sizes) {
  SymMonomial p;
  for (const Index& d : sizes) {
    auto m = sym_monomial(d);
    if (!m) return std::nullopt;
    p = monomial_mul(p, *m);
  }
  return p;
}

bool sym_all_const(const std::vector<Index>& sizes) {
  for (const Index& s : sizes)
    if (s->kind != IndexKind::Const) return false;
  return true;
}

IndexSimplifier symbolic_simplifier(const std::vector<Index>& sym_ranges) {
  std::vector<int64_t> extents;
  for (const Index& r : sym_ranges)
    extents.push_back(r->kind == IndexKind::Const ? r->c : ShapeEnv::kMaxSize);
  IndexSimplifier simp(std::move(extents));
  simp.set_default_symbol_range(ShapeEnv::kMinSize, ShapeEnv::kMaxSize);
  return simp;
}

}  // namespace ferrite
