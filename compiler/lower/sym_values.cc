// Values computed from sizes (docs/shapes.md): a symbolic compile's Shape gives formulas
// over the symbols, not constants, and the arithmetic exporters write on shapes (Gather of
// a dim, Unsqueeze, Concat, Slice, Cast, Add, Sub, Mul, Div, Equal, Where, Reshape) is done
// here on those formulas, as Inductor does it on SymInts, so that a Reshape, Expand or
// ConstantOfShape at the end reads sizes over the symbols. Such a value is a box of static
// shape holding its formulas (TensorBox::sym_value); it is never data: a kernel that would
// load it stops the symbolic compile (NotSymbolicError), as does any op not done here that
// reads it as a constant (LowerCtx::const_data). A result whose formulas are all constants
// is an ordinary constant again.
#include <algorithm>
#include <cstring>

#include "compiler/lower/lowering.h"

namespace ferrite {

TensorBoxPtr sym_value_box(GraphLowering& gl, DType dtype, const std::vector<int64_t>& shape,
                           std::vector<Index> elements, const std::string& origin) {
  for (Index& e : elements) e = sym_simplify(e);
  if (sym_all_const(elements)) {
    auto d = std::make_shared<TensorData>();
    d->dtype = dtype;
    d->shape = shape;
    d->bytes.assign(elements.size() * dtype_size(dtype), 0);
    uint8_t* p = d->bytes.mutable_data();
    for (size_t i = 0; i < elements.size(); ++i) {
      const int64_t v = elements[i]->c;
      if (dtype == DType::I64) {
        std::memcpy(p + 8 * i, &v, 8);
      } else if (dtype == DType::I32) {
        const auto w = static_cast<int32_t>(v);
        std::memcpy(p + 4 * i, &w, 4);
      } else if (dtype == DType::Bool) {
        p[i] = v != 0;
      } else {
        fail("internal: sizes as ", dtype_name(dtype));
      }
    }
    TensorBoxPtr t = constant_box(gl, d, "");
    t->storage->buffer->sym = sym_consts(shape);
    return make_buffer_box(t->storage->buffer);
  }
  Loader not_data = [origin](KernelBuilder&, const std::vector<Index>&) -> V {
    not_symbolic(origin, ": a value computed from sizes known only at run time is read as data");
  };
  TensorBoxPtr t = make_pointwise_box(dtype, shape, not_data, origin);
  set_box_sym(t, sym_consts(shape));
  t->sym_value = std::move(elements);
  return t;
}

std::optional<std::vector<Index>> sym_elements(const LowerCtx& c, size_t i) {
  if (!c.has(i)) return std::nullopt;
  const TensorBoxPtr& t = c.input(i);
  if (t->sym_value) return t->sym_value;
  if (dtype_is_float(t->dtype) || t->dtype == DType::String) return std::nullopt;
  auto d = c.gl.constant_data(t);
  if (!d) return std::nullopt;
  return sym_consts(d->to_ints());
}

V sym_formula_value(KernelBuilder& b, Buffer* symbols, const Index& f) {
  switch (f->kind) {
    case IndexKind::Sym:
      if (!symbols) fail("internal: a symbol's value without the symbols' buffer");
      return b.load(symbols, ix_const(f->id));
    case IndexKind::Add:
    case IndexKind::Mul:
    case IndexKind::Mod: {
      const Op op = f->kind == IndexKind::Add   ? Op::Add
                    : f->kind == IndexKind::Mul ? Op::Mul
                                                : Op::Mod;
      return b.binary(op, sym_formula_value(b, symbols, f->a), sym_formula_value(b, symbols, f->b));
    }
    case IndexKind::FloorDiv: {  // floor(a / b) == (a - a mod b) / b, as index_value does
      const V a = sym_formula_value(b, symbols, f->a), d = sym_formula_value(b, symbols, f->b);
      return b.binary(Op::Div, b.binary(Op::Sub, a, b.binary(Op::Mod, a, d)), d);
    }
    default:
      return b.index_value(f);
  }
}

namespace {

std::vector<Index> elements_of(const LowerCtx& c, size_t i) {
  auto e = sym_elements(c, i);
  if (!e) not_symbolic(c.origin(), ": input ", i, " is neither a constant nor computed from sizes");
  return *e;
}

bool is_int(DType t) {
  return t == DType::I64 || t == DType::I32;
}

// a and b broadcast against each other (each 0-D or 1-D, as shape values are): f per element.
TensorBoxPtr elementwise(LowerCtx& c, DType out, const std::function<Index(Index, Index)>& f) {
  const std::vector<Index> a = elements_of(c, 0), b = elements_of(c, 1);
  const TensorBoxPtr &ta = c.input(0), &tb = c.input(1);
  if (ta->size.size() > 1 || tb->size.size() > 1)
    not_symbolic(c.origin(), ": arithmetic on sizes of rank > 1");
  const size_t n = std::max(a.size(), b.size());
  if ((a.size() != n && a.size() != 1) || (b.size() != n && b.size() != 1))
    c.error("shapes cannot be broadcast");
  std::vector<Index> r;
  for (size_t k = 0; k < n; ++k) r.push_back(f(a[a.size() == 1 ? 0 : k], b[b.size() == 1 ? 0 : k]));
  std::vector<int64_t> shape;
  if (ta->size.size() == 1 || tb->size.size() == 1) shape.push_back(static_cast<int64_t>(n));
  return sym_value_box(c.gl, out, shape, std::move(r), c.origin());
}

// a == b, when it is the same at every value of the symbols.
Index equal(const LowerCtx& c, const Index& a, const Index& b) {
  const Index d = sym_simplify(ix_add(a, ix_mul(b, -1)));
  if (d->kind == IndexKind::Const) return ix_const(d->c == 0 ? 1 : 0);
  auto r = sym_range(d);
  if (r && (r->lo > 0 || r->hi < 0)) return ix_const(0);
  not_symbolic(c.origin(), ": whether ", index_to_string(*a), " == ", index_to_string(*b),
               " depends on the sizes");
}

// a / b of non-negative sizes (ONNX's integer Div truncates; for these it is floor).
Index divide(const LowerCtx& c, const Index& a, const Index& b) {
  auto ma = sym_monomial(sym_simplify(a)), mb = sym_monomial(sym_simplify(b));
  if (ma && mb) {
    if (auto q = monomial_div(*ma, *mb)) return monomial_index(*q);
  }
  auto ra = sym_range(a), rb = sym_range(b);
  if (!ra || !rb || ra->lo < 0 || rb->lo < 1)
    not_symbolic(c.origin(), ": a division of sizes that may be negative or zero");
  return sym_floordiv(a, b);
}

std::vector<TensorBoxPtr> lower_gather(LowerCtx& c) {
  const std::vector<Index> data = elements_of(c, 0);
  if (c.input(0)->size.size() != 1 || c.node.attr_int("axis", 0) != 0)
    not_symbolic(c.origin(), ": a gather of sizes not along a 1-D value");
  auto idx = c.gl.constant_data(c.input(1));
  if (!idx) not_symbolic(c.origin(), ": sizes gathered at indices computed at run time");
  std::vector<Index> r;
  const int64_t n = static_cast<int64_t>(data.size());
  for (int64_t i : idx->to_ints()) {
    if (i < -n || i >= n) c.error("index ", i, " out of range for ", n, " elements");
    r.push_back(data[static_cast<size_t>(i < 0 ? i + n : i)]);
  }
  return {sym_value_box(c.gl, c.input(0)->dtype, idx->shape, std::move(r), c.origin())};
}

std::vector<TensorBoxPtr> lower_concat(LowerCtx& c) {
  std::vector<Index> r;
  for (size_t i = 0; i < c.in.size(); ++i) {
    if (c.input(i)->size.size() != 1) not_symbolic(c.origin(), ": a concat of sizes not 1-D");
    for (const Index& e : elements_of(c, i)) r.push_back(e);
  }
  const int64_t n = static_cast<int64_t>(r.size());
  return {sym_value_box(c.gl, c.input(0)->dtype, {n}, std::move(r), c.origin())};
}

// Ops that keep the elements and change only the (static) shape: the ordinary lowering,
// run on a constant of the hints, gives the shape.
std::vector<TensorBoxPtr> lower_same_elements(LowerCtx& c, DType out) {
  std::vector<Index> e = elements_of(c, 0);
  LowerCtx h = c;
  std::vector<int64_t> hints;
  for (const Index& x : e) hints.push_back(c.gl.hint(x));
  h.in[0] = sym_value_box(c.gl, c.input(0)->dtype, c.input(0)->size, sym_consts(hints), "");
  const std::vector<TensorBoxPtr> outs = lowering_for(c.node)(h);
  if (outs.empty() || !outs[0] || outs[0]->elements() != static_cast<int64_t>(e.size()))
    c.error("internal: a reshape of sizes changed their count");
  return {sym_value_box(c.gl, out, outs[0]->size, std::move(e), c.origin())};
}

std::vector<TensorBoxPtr> lower_slice(LowerCtx& c) {
  const std::vector<Index> data = elements_of(c, 0);
  if (c.input(0)->size.size() != 1 || c.opset < 10)
    not_symbolic(c.origin(), ": a slice of sizes not 1-D");
  auto ints = [&](size_t i, int64_t dflt) {
    if (!c.has(i)) return dflt;
    auto d = c.gl.constant_data(c.input(i));
    if (!d || d->elements() != 1) not_symbolic(c.origin(), ": a slice of sizes at run-time bounds");
    return d->int_at(0);
  };
  const int64_t n = static_cast<int64_t>(data.size());
  if (ints(3, 0) != 0 && ints(3, 0) != -1) c.error("axis out of range for a 1-D value");
  const int64_t step = ints(4, 1);
  if (step == 0) c.error("step is 0");
  int64_t start = ints(1, 0), end = ints(2, 0);
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = step > 0 ? std::clamp<int64_t>(start, 0, n) : std::clamp<int64_t>(start, -1, n - 1);
  end = step > 0 ? std::clamp<int64_t>(end, 0, n) : std::clamp<int64_t>(end, -1, n - 1);
  std::vector<Index> r;
  for (int64_t i = start; step > 0 ? i < end : i > end; i += step)
    r.push_back(data[static_cast<size_t>(i)]);
  const int64_t count = static_cast<int64_t>(r.size());
  return {sym_value_box(c.gl, c.input(0)->dtype, {count}, std::move(r), c.origin())};
}

std::vector<TensorBoxPtr> lower_where(LowerCtx& c) {
  const std::vector<Index> cond = elements_of(c, 0), a = elements_of(c, 1), b = elements_of(c, 2);
  size_t n = std::max({cond.size(), a.size(), b.size()});
  for (size_t i = 0; i < 3; ++i)
    if (c.input(i)->size.size() > 1) not_symbolic(c.origin(), ": a where on sizes of rank > 1");
  std::vector<Index> r;
  for (size_t k = 0; k < n; ++k) {
    auto at = [&](const std::vector<Index>& v) {
      if (v.size() != 1 && v.size() != n) c.error("shapes cannot be broadcast");
      return v[v.size() == 1 ? 0 : k];
    };
    const Index cnd = at(cond);
    if (cnd->kind != IndexKind::Const) not_symbolic(c.origin(), ": a condition on sizes");
    r.push_back(cnd->c ? at(a) : at(b));
  }
  std::vector<int64_t> shape;
  for (size_t i = 0; i < 3; ++i)
    if (c.input(i)->size.size() == 1) shape = {static_cast<int64_t>(n)};
  return {sym_value_box(c.gl, c.input(1)->dtype, shape, std::move(r), c.origin())};
}

}  // namespace

bool is_size_arithmetic(const Node& n) {
  static const char* const kOps[] = {"Gather",  "Concat",   "Unsqueeze", "Squeeze", "Reshape",
                                     "Flatten", "Identity", "Slice",     "Cast",    "Add",
                                     "Sub",     "Mul",      "Div",       "Equal",   "Where"};
  if (!n.domain.empty() && n.domain != "ai.onnx") return false;
  return std::find_if(std::begin(kOps), std::end(kOps),
                      [&](const char* op) { return n.op_type == op; }) != std::end(kOps);
}

std::vector<TensorBoxPtr> lower_size_arithmetic(LowerCtx& c) {
  const std::string& op = c.node.op_type;
  // Only a value that is itself sizes is done here (Reshape's data, not its shape).
  if (!c.input(0)->sym_value && op != "Concat" && op != "Where" &&
      (op == "Reshape" || op == "Gather" || op == "Slice" || op == "Unsqueeze" || op == "Squeeze" ||
       op == "Flatten" || op == "Identity" || op == "Cast"))
    return lowering_for(c.node)(c);
  if (op == "Gather") return lower_gather(c);
  if (op == "Concat") return lower_concat(c);
  if (op == "Slice") return lower_slice(c);
  if (op == "Where") return lower_where(c);
  const DType dt = c.input(0)->dtype;
  if (op == "Cast") {
    const auto to = static_cast<DType>(c.node.attr_int("to", 0));
    if (!is_int(to) || !is_int(dt))
      not_symbolic(c.origin(), ": a cast of sizes to ", dtype_name(to));
    return lower_same_elements(c, to);
  }
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Flatten" ||
      op == "Identity")
    return lower_same_elements(c, dt);
  if (!is_int(dt)) not_symbolic(c.origin(), ": arithmetic on sizes of ", dtype_name(dt));
  if (op == "Add") return {elementwise(c, dt, [](Index a, Index b) { return ix_add(a, b); })};
  if (op == "Sub")
    return {elementwise(c, dt, [](Index a, Index b) { return ix_add(a, ix_mul(b, -1)); })};
  if (op == "Mul") return {elementwise(c, dt, [](Index a, Index b) { return sym_mul(a, b); })};
  if (op == "Div") return {elementwise(c, dt, [&c](Index a, Index b) { return divide(c, a, b); })};
  if (op == "Equal")
    return {elementwise(c, DType::Bool, [&c](Index a, Index b) { return equal(c, a, b); })};
  not_symbolic(c.origin(), ": arithmetic on sizes");
}

}  // namespace ferrite
