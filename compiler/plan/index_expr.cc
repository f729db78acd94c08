#include "compiler/plan/index_expr.h"

#include <sstream>

#include "compiler/plan/error.h"
#include "compiler/plan/wrapping.h"

namespace ferrite {

Index ix_const(int64_t c) {
  auto n = std::make_shared<IndexNode>();
  n->kind = IndexKind::Const;
  n->c = c;
  return n;
}

Index ix_var(int id) {
  auto n = std::make_shared<IndexNode>();
  n->kind = IndexKind::Var;
  n->id = id;
  return n;
}

Index ix_value(int ssa_id) {
  auto n = std::make_shared<IndexNode>();
  n->kind = IndexKind::Value;
  n->id = ssa_id;
  return n;
}

Index ix_sym(int symbol) {
  auto n = std::make_shared<IndexNode>();
  n->kind = IndexKind::Sym;
  n->id = symbol;
  return n;
}

Index ix_binary(IndexKind kind, Index a, Index b) {
  auto n = std::make_shared<IndexNode>();
  n->kind = kind;
  n->a = std::move(a);
  n->b = std::move(b);
  return n;
}

int64_t floordiv64(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return wrap_mul(a, -1);  // INT64_MIN / -1 overflows
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t mod64(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

int64_t eval_index(const IndexNode& e, const int64_t* vars, const int64_t* values) {
  switch (e.kind) {
    case IndexKind::Const:
      return e.c;
    case IndexKind::Var:
      return vars[e.id];
    case IndexKind::Value:
      return values[e.id];
    case IndexKind::Add:
      return wrap_add(eval_index(*e.a, vars, values), eval_index(*e.b, vars, values));
    case IndexKind::Mul:
      return wrap_mul(eval_index(*e.a, vars, values), eval_index(*e.b, vars, values));
    case IndexKind::FloorDiv:
      return floordiv64(eval_index(*e.a, vars, values), eval_index(*e.b, vars, values));
    case IndexKind::Mod:
      return mod64(eval_index(*e.a, vars, values), eval_index(*e.b, vars, values));
    case IndexKind::Sym:
      fail("internal: symbol s", e.id, " evaluated unbound");
  }
  return 0;
}

namespace {

bool affine_into(const IndexNode& e, int64_t scale, AffineIndex* out) {
  switch (e.kind) {
    case IndexKind::Const:
      out->offset = wrap_add(out->offset, wrap_mul(scale, e.c));
      return true;
    case IndexKind::Var:
      if (e.id < 0 || e.id >= static_cast<int>(out->coeff.size())) return false;
      out->coeff[e.id] = wrap_add(out->coeff[e.id], scale);
      return true;
    case IndexKind::Add:
      return affine_into(*e.a, scale, out) && affine_into(*e.b, scale, out);
    case IndexKind::Mul:
      if (e.b->kind == IndexKind::Const) return affine_into(*e.a, wrap_mul(scale, e.b->c), out);
      if (e.a->kind == IndexKind::Const) return affine_into(*e.b, wrap_mul(scale, e.a->c), out);
      return false;
    default:
      return false;
  }
}

void print(const IndexNode& e, std::ostringstream& os) {
  switch (e.kind) {
    case IndexKind::Const:
      os << e.c;
      return;
    case IndexKind::Var:
      os << "i" << e.id;
      return;
    case IndexKind::Value:
      os << "%" << e.id;
      return;
    case IndexKind::Sym:
      os << "s" << e.id;
      return;
    default:
      break;
  }
  const char* op = e.kind == IndexKind::Add   ? " + "
                   : e.kind == IndexKind::Mul ? "*"
                   : e.kind == IndexKind::Mod ? " % "
                                              : " // ";
  os << "(";
  print(*e.a, os);
  os << op;
  print(*e.b, os);
  os << ")";
}

}  // namespace

bool as_affine(const IndexNode& e, int num_vars, AffineIndex* out) {
  out->offset = 0;
  out->coeff.assign(num_vars, 0);
  return affine_into(e, 1, out);
}

bool index_uses_var(const IndexNode& e, int var) {
  if (e.kind == IndexKind::Var) return e.id == var;
  if (e.a && index_uses_var(*e.a, var)) return true;
  return e.b && index_uses_var(*e.b, var);
}

bool index_uses_value(const IndexNode& e) {
  if (e.kind == IndexKind::Value) return true;
  if (e.a && index_uses_value(*e.a)) return true;
  return e.b && index_uses_value(*e.b);
}

void index_values(const IndexNode& e, std::vector<int>* out) {
  if (e.kind == IndexKind::Value) out->push_back(e.id);
  if (e.a) index_values(*e.a, out);
  if (e.b) index_values(*e.b, out);
}

bool index_uses_sym(const IndexNode& e) {
  if (e.kind == IndexKind::Sym) return true;
  if (e.a && index_uses_sym(*e.a)) return true;
  return e.b && index_uses_sym(*e.b);
}

Index bind_syms(const Index& e, const std::vector<int64_t>& values) {
  switch (e->kind) {
    case IndexKind::Sym:
      if (e->id < 0 || static_cast<size_t>(e->id) >= values.size())
        fail("internal: symbol s", e->id, " has no value (", values.size(), " bound)");
      return ix_const(values[static_cast<size_t>(e->id)]);
    case IndexKind::Const:
    case IndexKind::Var:
    case IndexKind::Value:
      return e;
    default:
      return ix_binary(e->kind, bind_syms(e->a, values), bind_syms(e->b, values));
  }
}

int64_t eval_size_formula(const IndexNode& e, const std::vector<int64_t>& syms) {
  switch (e.kind) {
    case IndexKind::Const:
      return e.c;
    case IndexKind::Sym:
      if (e.id < 0 || static_cast<size_t>(e.id) >= syms.size())
        fail("size formula: symbol s", e.id, " is not one of the ", syms.size(), " symbols");
      return syms[static_cast<size_t>(e.id)];
    case IndexKind::Var:
    case IndexKind::Value:
      fail("size formula: ", index_to_string(e), " is not a size");
    default:
      break;
  }
  const int64_t a = eval_size_formula(*e.a, syms);
  const int64_t b = eval_size_formula(*e.b, syms);
  int64_t r = 0;
  switch (e.kind) {
    case IndexKind::Add:
      if (__builtin_add_overflow(a, b, &r)) fail("size formula: ", a, " + ", b, " overflows");
      return r;
    case IndexKind::Mul:
      if (__builtin_mul_overflow(a, b, &r)) fail("size formula: ", a, "*", b, " overflows");
      return r;
    default:
      if (b == 0) fail("size formula: division by zero in ", index_to_string(e));
      return e.kind == IndexKind::FloorDiv ? floordiv64(a, b) : mod64(a, b);
  }
}

std::string index_to_string(const IndexNode& e) {
  std::ostringstream os;
  print(e, os);
  return os.str();
}

bool index_equal(const IndexNode& x, const IndexNode& y) {
  if (x.kind != y.kind) return false;
  switch (x.kind) {
    case IndexKind::Const:
      return x.c == y.c;
    case IndexKind::Var:
    case IndexKind::Value:
    case IndexKind::Sym:
      return x.id == y.id;
    default:
      return index_equal(*x.a, *y.a) && index_equal(*x.b, *y.b);
  }
}

}  // namespace ferrite
