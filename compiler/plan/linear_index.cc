#include "compiler/plan/linear_index.h"

#include "compiler/plan/wrapping.h"

namespace ferrite {
namespace {

bool is_constant(const LinearForm& f) {
  if (!f.terms.empty()) return false;
  for (int64_t c : f.coeff)
    if (c != 0) return false;
  return true;
}

void scale(LinearForm* f, int64_t s) {
  f->offset = wrap_mul(f->offset, s);
  for (int64_t& c : f->coeff) c = wrap_mul(c, s);
  for (LinearTerm& t : f->terms) t.factor = wrap_mul(t.factor, s);
}

void add_into(LinearForm* f, LinearForm&& g) {
  f->offset = wrap_add(f->offset, g.offset);
  for (size_t v = 0; v < f->coeff.size(); ++v) f->coeff[v] = wrap_add(f->coeff[v], g.coeff[v]);
  for (LinearTerm& t : g.terms) f->terms.push_back(std::move(t));
}

LinearForm constant_form(int64_t c, int num_vars) {
  LinearForm f;
  f.offset = c;
  f.coeff.assign(num_vars, 0);
  return f;
}

LinearForm term_form(LinearTerm t, int num_vars) {
  LinearForm f = constant_form(0, num_vars);
  f.terms.push_back(std::move(t));
  return f;
}

Index times(Index e, int64_t c) {
  return c == 1 ? e : ix_binary(IndexKind::Mul, std::move(e), ix_const(c));
}

Index plus(Index sum, Index e) {
  return sum ? ix_binary(IndexKind::Add, std::move(sum), std::move(e)) : e;
}

}  // namespace

LinearForm linearize(const IndexNode& e, int num_vars) {
  switch (e.kind) {
    case IndexKind::Const:
      return constant_form(e.c, num_vars);
    case IndexKind::Var: {
      LinearForm f = constant_form(0, num_vars);
      f.coeff[e.id] = 1;
      return f;
    }
    case IndexKind::Value: {
      LinearTerm t;
      t.id = e.id;
      return term_form(std::move(t), num_vars);
    }
    case IndexKind::Add: {
      LinearForm f = linearize(*e.a, num_vars);
      add_into(&f, linearize(*e.b, num_vars));
      return f;
    }
    default:
      break;
  }
  LinearForm a = linearize(*e.a, num_vars), b = linearize(*e.b, num_vars);
  const bool ca = is_constant(a), cb = is_constant(b);
  if (e.kind == IndexKind::Mul && (ca || cb)) {
    if (cb) {
      scale(&a, b.offset);
      return a;
    }
    scale(&b, a.offset);
    return b;
  }
  if (ca && cb) {
    const int64_t c =
        e.kind == IndexKind::FloorDiv ? floordiv64(a.offset, b.offset) : mod64(a.offset, b.offset);
    return constant_form(c, num_vars);
  }
  LinearTerm t;
  t.kind = e.kind;
  t.operands.push_back(std::move(a));
  t.operands.push_back(std::move(b));
  return term_form(std::move(t), num_vars);
}

Index delinearize(const LinearForm& f) {
  Index sum;
  for (size_t v = 0; v < f.coeff.size(); ++v)
    if (f.coeff[v] != 0) sum = plus(sum, times(ix_var(static_cast<int>(v)), f.coeff[v]));
  for (const LinearTerm& t : f.terms) {
    if (t.factor == 0) continue;
    Index node = t.kind == IndexKind::Value
                     ? ix_value(t.id)
                     : ix_binary(t.kind, delinearize(t.operands[0]), delinearize(t.operands[1]));
    sum = plus(sum, times(node, t.factor));
  }
  if (!sum) return ix_const(f.offset);
  return f.offset == 0 ? sum : plus(sum, ix_const(f.offset));
}

LinearForm map_coefficients(const LinearForm& f, const CoeffMap& m, int new_num_vars) {
  LinearForm out = constant_form(f.offset, new_num_vars);
  for (size_t v = 0; v < f.coeff.size(); ++v) {
    if (f.coeff[v] == 0) continue;
    for (const auto& [j, weight] : m[v])
      out.coeff[j] = wrap_add(out.coeff[j], wrap_mul(f.coeff[v], weight));
  }
  for (const LinearTerm& t : f.terms) {
    LinearTerm u = t;
    for (size_t o = 0; o < t.operands.size(); ++o)
      u.operands[o] = map_coefficients(t.operands[o], m, new_num_vars);
    out.terms.push_back(std::move(u));
  }
  return out;
}

}  // namespace ferrite
