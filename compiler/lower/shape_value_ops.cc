// Ops whose result is known at compile time from shapes or attributes: Shape, Size,
// ConstantOfShape, Range, and Constant nodes the frontend left in place.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "compiler/loopir/checked_int.h"
#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

std::shared_ptr<TensorData> int_tensor(std::vector<int64_t> shape, const std::vector<int64_t>& v) {
  auto d = std::make_shared<TensorData>();
  d->dtype = DType::I64;
  d->shape = std::move(shape);
  const uint8_t* p = reinterpret_cast<const uint8_t*>(v.data());
  d->bytes.assign(p, p + v.size() * sizeof(int64_t));
  return d;
}

std::vector<TensorBoxPtr> lower_shape(LowerCtx& c) {
  const auto& size = c.input(0)->size;
  int64_t r = static_cast<int64_t>(size.size());
  int64_t start = c.node.attr_int("start", 0), end = c.node.attr_int("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  std::vector<int64_t> v;
  for (int64_t d = start; d < end; ++d) v.push_back(size[d]);
  int64_t n = static_cast<int64_t>(v.size());
  if (c.gl.symbolic()) {  // the sizes as formulas over the symbols (sym_values.cc)
    const std::vector<Index>& sym = *c.input(0)->sym;
    return {
        sym_value_box(c.gl, DType::I64, {n}, {sym.begin() + start, sym.begin() + end}, c.origin())};
  }
  return {constant_box(c.gl, int_tensor({n}, v), "")};
}

std::vector<TensorBoxPtr> lower_size(LowerCtx& c) {
  if (c.gl.symbolic()) {
    Index n = ix_const(1);
    for (const Index& d : *c.input(0)->sym) n = sym_mul(n, d);
    return {sym_value_box(c.gl, DType::I64, {}, {n}, c.origin())};
  }
  return {constant_box(c.gl, int_tensor({}, {c.input(0)->elements()}), "")};
}

std::vector<TensorBoxPtr> lower_constant_of_shape(LowerCtx& c) {
  // Compiling symbolically, the shape may be sizes over the symbols (sym_values.cc).
  std::optional<std::vector<Index>> sym;
  std::vector<int64_t> shape;
  if (c.gl.symbolic()) {
    if (c.input(0)->size.size() != 1) c.error("input 0 must be 1-D");
    sym = sym_elements(c, 0);
    if (!sym) not_symbolic(c.origin(), ": a shape computed at run time");
    for (const Index& d : *sym) {
      auto r = sym_range(d);
      if (d->kind != IndexKind::Const && (!r || r->lo < 0))
        not_symbolic(c.origin(), ": a size ", index_to_string(*d), " that may be negative");
      shape.push_back(d->kind == IndexKind::Const ? d->c : c.gl.hint(d));
    }
  } else {
    shape = const_ints_1d(c, 0);
  }
  checked_product(shape, "shape");
  DType dt = DType::F32;
  double fv = 0;
  int64_t iv = 0;
  if (auto t = c.node.attr_tensor("value")) {
    if (t->elements() != 1) c.error("value must have one element");
    dt = t->dtype;
    fv = t->float_at(0);
    iv = t->int_at(0);
  }
  if (dt == DType::String) c.unsupported("string value");
  bool is_float = dtype_is_float(dt);
  TensorBoxPtr r = make_pointwise_box(
      dt, shape,
      [=](KernelBuilder& b, const std::vector<Index>&) {
        ScalarType t = compute_type(dt);
        return is_float ? b.constant(t, fv) : b.constant(t, static_cast<double>(iv));
      },
      c.origin());
  if (sym) set_box_sym(r, *sym);
  return {r};
}

// Range's element count, max(ceil((limit - start) / delta), 0), exactly for integers
// (limit - start may not fit in int64) and for finite floats.
int64_t range_count(const LowerCtx& c, const TensorData& s, const TensorData& l,
                    const TensorData& d) {
  constexpr int64_t kMaxRange = int64_t{1} << 31;
  if (dtype_is_float(s.dtype)) {
    double start = s.float_at(0), limit = l.float_at(0), delta = d.float_at(0);
    if (!std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
      c.error("start, limit and delta must be finite");
    if (delta == 0) c.error("delta is 0");
    double n = std::ceil((limit - start) / delta);
    if (n > static_cast<double>(kMaxRange)) c.error("range of ", n, " elements is too large");
    return n > 0 ? static_cast<int64_t>(n) : 0;
  }
  int64_t start = s.int_at(0), limit = l.int_at(0), delta = d.int_at(0);
  if (delta == 0) c.error("delta is 0");
  if ((limit > start) != (delta > 0) || limit == start) return 0;
  // |limit - start| and |delta| in uint64, where both are exact.
  uint64_t span = limit > start ? static_cast<uint64_t>(limit) - static_cast<uint64_t>(start)
                                : static_cast<uint64_t>(start) - static_cast<uint64_t>(limit);
  uint64_t step = delta > 0 ? static_cast<uint64_t>(delta) : 0 - static_cast<uint64_t>(delta);
  uint64_t n = span / step + (span % step != 0);
  if (n > static_cast<uint64_t>(kMaxRange)) c.error("range of ", n, " elements is too large");
  return static_cast<int64_t>(n);
}

TensorBoxPtr range_box(const LowerCtx& c, DType dt, int64_t n, const TensorData& s,
                       const TensorData& d);

std::vector<TensorBoxPtr> lower_range_of_constants(LowerCtx& c) {
  auto s = c.const_data(0), l = c.const_data(1), d = c.const_data(2);
  DType dt = s->dtype;
  if (l->dtype != dt || d->dtype != dt)
    c.error("start, limit and delta must have one type, got ", dtype_name(dt), ", ",
            dtype_name(l->dtype), " and ", dtype_name(d->dtype));
  if (s->elements() != 1 || l->elements() != 1 || d->elements() != 1)
    c.error("inputs must be scalars");
  if (dt == DType::Bool || dtype_size(dt) == 0) c.error("inputs of type ", dtype_name(dt));
  const int64_t n = range_count(c, *s, *l, *d);
  return {range_box(c, dt, n, *s, *d)};
}

std::vector<TensorBoxPtr> lower_range(LowerCtx& c) {
  if (!c.gl.symbolic() || (!c.input(0)->sym_value && !c.input(1)->sym_value))
    return lower_range_of_constants(c);
  // Sizes over the symbols (sym_values.cc): an integer range of step 1 has limit - start
  // elements, which the plan assumes is not negative.
  auto s = sym_elements(c, 0), l = sym_elements(c, 1), d = sym_elements(c, 2);
  if (!s || !l || !d || s->size() != 1 || l->size() != 1 || d->size() != 1 ||
      !sym_is_const((*d)[0], 1))
    not_symbolic(c.origin(), ": a range over sizes of a step other than 1");
  const Index n = sym_simplify(ix_add((*l)[0], ix_mul((*s)[0], -1)));
  c.gl.assume(n, 0, ShapeEnv::kMaxSize, c.origin());
  // start + i, the start's symbols read from the plan's symbol values (a decoder's past).
  const Index start = sym_simplify((*s)[0]);
  Buffer* symbols = index_uses_sym(*start) ? c.gl.symbol_values() : nullptr;
  const DType dt = c.input(0)->dtype;
  TensorBoxPtr r = make_pointwise_box(
      dt, {c.gl.hint(n)},
      [start, symbols, dt](KernelBuilder& b, const std::vector<Index>& idx) {
        const V first = sym_formula_value(b, symbols, start);
        return b.cast(b.binary(Op::Add, first, b.index_value(idx[0])), compute_type(dt));
      },
      c.origin());
  set_box_sym(r, {n});
  return {r};
}

TensorBoxPtr range_box(const LowerCtx& c, DType dt, int64_t n, const TensorData& s,
                       const TensorData& d) {
  bool is_float = dtype_is_float(dt);
  double start = s.float_at(0), delta = d.float_at(0);
  int64_t istart = is_float ? 0 : s.int_at(0), idelta = is_float ? 0 : d.int_at(0);
  TensorBoxPtr r = make_pointwise_box(
      dt, {n},
      [=](KernelBuilder& b, const std::vector<Index>& idx) {
        ScalarType t = compute_type(dt);
        V i = b.index_value(idx[0]);
        if (is_float) {
          V fi = b.cast(i, t);
          return b.binary(Op::Add, b.constant(t, start),
                          b.binary(Op::Mul, fi, b.constant(t, delta)));
        }
        // i * delta may wrap, but kernels' integers wrap and the sum is within range.
        return b.binary(Op::Add, b.constant_i64(istart),
                        b.binary(Op::Mul, i, b.constant_i64(idelta)));
      },
      c.origin());
  if (c.gl.symbolic()) set_box_sym(r, {ix_const(n)});
  return r;
}

std::vector<TensorBoxPtr> lower_constant(LowerCtx& c) {
  auto t = c.node.attr_tensor("value");
  if (!t) c.unsupported("Constant without a dense 'value' tensor");
  TensorBoxPtr r = constant_box(c.gl, t, "");
  if (!c.gl.symbolic()) return {r};
  r->storage->buffer->sym = sym_consts(t->shape);  // the same at every size
  return {make_buffer_box(r->storage->buffer)};
}

}  // namespace

void register_shape_value_ops(LoweringTable& t) {
  t.add("Shape", lower_shape);
  t.add("Size", lower_size);
  t.add("ConstantOfShape", lower_constant_of_shape);
  t.add("Range", lower_range);
  t.add("Constant", lower_constant);
}

}  // namespace ferrite
