// Views: index remaps, never copies (Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
// Slice, Expand, Concat, Identity, Split, Tile, DepthToSpace, SpaceToDepth).
#include <algorithm>

#include "compiler/loopir/checked_int.h"
#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

// Reshape's sizes over the symbols for its `shape` (formulas: constants, or sizes computed
// from the symbols, sym_values.cc): a 0 copies the input's dim, the -1 is what the others
// leave of the input's product; none when that is no product.
std::optional<std::vector<Index>> reshape_sym(const TensorBoxPtr& x,
                                              const std::vector<Index>& shape, bool allowzero) {
  if (!x->sym) return std::nullopt;
  std::vector<Index> sym;
  int infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (sym_is_const(shape[i], 0) && !allowzero) {
      sym.push_back((*x->sym)[i]);
    } else {
      if (sym_is_const(shape[i], -1)) infer = static_cast<int>(i);
      sym.push_back(sym_is_const(shape[i], -1) ? ix_const(1) : shape[i]);
    }
  }
  if (infer >= 0) {
    auto total = sym_product(*x->sym), known = sym_product(sym);
    if (!total || !known) return std::nullopt;
    auto rest = monomial_div(*total, *known);
    if (!rest) return std::nullopt;
    sym[static_cast<size_t>(infer)] = monomial_index(*rest);
  }
  return sym;
}

std::vector<TensorBoxPtr> lower_reshape(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  // Compiling symbolically, the shape may be sizes over the symbols (sym_values.cc): a
  // formula is a size (never 0 or -1), and the hints stand for it below.
  std::vector<Index> raw;
  std::vector<int64_t> shape;
  if (c.opset >= 5 && c.input(1)->sym_value) {
    if (c.input(1)->size.size() != 1) c.error("input 1 must be 1-D");
    raw = *c.input(1)->sym_value;
    for (const Index& d : raw) {
      auto r = sym_range(d);
      if (d->kind != IndexKind::Const && (!r || r->lo < 1))
        not_symbolic(c.origin(), ": a size ", index_to_string(*d), " that may be 0 or negative");
      shape.push_back(d->kind == IndexKind::Const ? d->c : c.gl.hint(d));
    }
  } else {
    shape = c.opset < 5 ? c.node.attr_ints("shape") : const_ints_1d(c, 1);
    raw = sym_consts(shape);
  }
  bool allowzero = c.node.attr_int("allowzero", 0) != 0;
  int infer = -1;
  int64_t known = 1;
  bool zero = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    zero |= shape[i] == 0;
    if (shape[i] == 0 && !allowzero) {
      if (i >= x->size.size())
        c.error("shape dim ", i, " is 0 but input has rank ", x->size.size());
      shape[i] = x->size[i];
    }
    if (shape[i] == -1) {
      if (infer >= 0) c.error("more than one -1 in shape");
      infer = static_cast<int>(i);
    } else if (shape[i] < 0) {
      c.error("invalid shape dim ", shape[i]);
    } else {
      known = checked_mul(known, shape[i], "the product of shape's dims");
    }
  }
  if (allowzero && zero && infer >= 0) c.error("shape has both 0 and -1 with allowzero = 1");
  int64_t total = x->elements();
  if (infer >= 0) {
    if (known == 0 || total % known != 0) c.error("cannot infer -1: ", total, " elements");
    shape[infer] = total / known;
  }
  if (checked_product(shape, "shape") != total) {
    c.error("cannot reshape ", total, " elements to ",
            TensorType{x->dtype, shape, {}, true}.to_string());
  }
  return {reshape_view_sym(x, shape, reshape_sym(x, raw, allowzero))};
}

std::vector<TensorBoxPtr> lower_flatten(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  int64_t r = static_cast<int64_t>(x->size.size());
  int64_t a = c.node.attr_int("axis", 1);
  if (a < -r || a > r) c.error("axis ", a, " out of range for rank ", r);
  if (a < 0 && c.opset < 11) c.error("negative axis ", a, " (allowed from opset 11)");
  if (a < 0) a += r;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < r; ++d) (d < a ? outer : inner) *= x->size[d];
  std::optional<std::vector<Index>> sym;
  if (x->sym) {
    const std::vector<Index>& xs = *x->sym;
    auto o = sym_product({xs.begin(), xs.begin() + a}), i = sym_product({xs.begin() + a, xs.end()});
    if (o && i) sym = std::vector<Index>{monomial_index(*o), monomial_index(*i)};
  }
  return {reshape_view_sym(x, {outer, inner}, sym)};
}

std::vector<int64_t> axes_arg(LowerCtx& c) {
  if (c.opset >= 13) return c.has(1) ? c.const_ints(1) : std::vector<int64_t>{};
  return c.node.attr_ints("axes");
}

std::vector<TensorBoxPtr> lower_squeeze(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  std::vector<int64_t> axes = axes_arg(c);
  std::vector<bool> drop(x->size.size(), false);
  if (axes.empty()) {
    for (size_t d = 0; d < x->size.size(); ++d) drop[d] = x->size[d] == 1;
  }
  for (int64_t a : axes) {
    int d = c.axis(a, x->size.size());
    if (x->size[d] != 1) c.error("cannot squeeze axis ", a, " of size ", x->size[d]);
    drop[d] = true;
  }
  std::vector<int64_t> out;
  std::vector<Index> sym;  // a dropped dim is of size 1: static
  for (size_t d = 0; d < x->size.size(); ++d) {
    if (drop[d]) continue;
    out.push_back(x->size[d]);
    if (x->sym) sym.push_back((*x->sym)[d]);
  }
  return {reshape_view_sym(x, out, x->sym ? std::optional(sym) : std::nullopt)};
}

std::vector<TensorBoxPtr> lower_unsqueeze(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  std::vector<int64_t> axes = axes_arg(c);
  size_t rank = x->size.size() + axes.size();
  std::vector<bool> added(rank, false);
  for (int64_t a : axes) {
    int d = c.axis(a, rank);
    if (added[d]) c.error("repeated axis ", a);
    added[d] = true;
  }
  std::vector<int64_t> out;
  std::vector<Index> sym;
  size_t k = 0;
  for (size_t d = 0; d < rank; ++d) {
    if (x->sym) sym.push_back(added[d] ? ix_const(1) : (*x->sym)[k]);
    out.push_back(added[d] ? 1 : x->size[k++]);
  }
  return {reshape_view_sym(x, out, x->sym ? std::optional(sym) : std::nullopt)};
}

std::vector<TensorBoxPtr> lower_transpose(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  size_t r = x->size.size();
  std::vector<int64_t> p = c.node.attr_ints("perm");
  std::vector<int> perm;
  if (p.empty()) {
    for (size_t i = 0; i < r; ++i) perm.push_back(static_cast<int>(r - 1 - i));
  } else {
    if (p.size() != r) c.error("perm has ", p.size(), " entries for rank ", r);
    std::vector<bool> seen(r, false);
    for (int64_t a : p) {
      int d = c.axis(a, r);
      if (seen[d]) c.error("perm repeats axis ", a);
      seen[d] = true;
      perm.push_back(d);
    }
  }
  return {permute_view(x, perm)};
}

// out[i] = x[start + i*step] along each sliced axis.
TensorBoxPtr slice_view(const TensorBoxPtr& x, const std::vector<int>& axes,
                        const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                        const std::vector<int64_t>& lens) {
  std::vector<int64_t> size = x->size;
  for (size_t k = 0; k < axes.size(); ++k) size[axes[k]] = lens[k];
  return make_view(x, size, [axes, starts, steps](const std::vector<Index>& i) {
    std::vector<Index> o = i;
    for (size_t k = 0; k < axes.size(); ++k) {
      o[axes[k]] = ix_add(ix_const(starts[k]), ix_mul(i[axes[k]], steps[k]));
    }
    return o;
  });
}

// Gives `v`, x's slice [start, start + len) along a static `axis` (slice_view), x's sym sizes
// but that axis, and its strides over the symbols.
void with_static_slice_sym(const TensorBoxPtr& v, const TensorBox& x, int axis, int64_t start,
                           int64_t len) {
  const size_t a = static_cast<size_t>(axis);
  std::vector<Index> sym = *x.sym;
  sym[a] = ix_const(len);
  v->sym = sym;
  if (v->strided && x.strided && x.strided->sym_offset) {
    v->strided->sym_strides = x.strided->sym_strides;
    v->strided->sym_offset = sym_simplify(
        ix_add(x.strided->sym_offset, sym_mul(ix_const(start), x.strided->sym_strides[a])));
  } else if (v->strided) {
    v->strided->sym_strides.clear();
    v->strided->sym_offset = nullptr;
  }
}

// One sliced axis of a static dim: its first index, length and step.
struct SliceAxis {
  int64_t start = 0, len = 0, step = 1;
};

SliceAxis slice_axis(const LowerCtx& c, int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (step == 0) c.error("slice step is 0");
  auto norm = [dim](int64_t v) {
    return v < 0 ? std::max<int64_t>(v, -dim - 1) + dim : std::min(v, dim);
  };
  int64_t s = norm(start), e = norm(end), len;
  // ceil(span / |step|) without forming span + |step| or -step (steps may be +-2^63).
  if (step > 0) {
    s = std::clamp<int64_t>(s, 0, dim);
    e = std::clamp<int64_t>(e, 0, dim);
    len = e > s ? (e - s - 1) / step + 1 : 0;
  } else {
    s = std::clamp<int64_t>(s, 0, dim - 1);
    e = std::clamp<int64_t>(e, -1, dim - 1);
    len = s > e ? 1 - (s - e - 1) / step : 0;
  }
  // A step past the dim reads one element at most: 1 keeps the view's strides small.
  return SliceAxis{s, len, len <= 1 ? 1 : step};
}

// Slice over the symbols (sym_values.cc): starts and ends are formulas (constants, or
// sizes computed from the symbols), the steps 1. Where a clamp of the ONNX rules depends
// on the sizes, the plan assumes the side the first sizes took (a guard).
std::vector<TensorBoxPtr> lower_slice_sym(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  auto starts = sym_elements(c, 1), ends = sym_elements(c, 2);
  if (!starts || !ends) not_symbolic(c.origin(), ": bounds computed at run time");
  std::vector<int64_t> axes = c.has(3) ? const_ints_1d(c, 3) : std::vector<int64_t>{};
  std::vector<int64_t> steps = c.has(4) ? const_ints_1d(c, 4) : std::vector<int64_t>{};
  if (axes.empty())
    for (size_t i = 0; i < starts->size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts->size(), 1);
  if (ends->size() != starts->size() || axes.size() != starts->size() ||
      steps.size() != starts->size())
    c.error("starts, ends, axes and steps differ in length");
  const std::vector<Index>& xs = *x->sym;
  std::vector<Index> size = xs, first(xs.size(), ix_const(0));
  std::vector<int64_t> step(xs.size(), 1);
  std::vector<bool> seen(xs.size(), false);
  for (size_t k = 0; k < axes.size(); ++k) {
    const int a = c.axis(axes[k], xs.size());
    if (seen[static_cast<size_t>(a)]) c.error("axes repeat axis ", axes[k]);
    seen[static_cast<size_t>(a)] = true;
    const Index dim = xs[static_cast<size_t>(a)];
    if (dim->kind == IndexKind::Const && (*starts)[k]->kind == IndexKind::Const &&
        (*ends)[k]->kind == IndexKind::Const) {  // all static: the ordinary slice's rules
      const SliceAxis r = slice_axis(c, dim->c, (*starts)[k]->c, (*ends)[k]->c, steps[k]);
      size[static_cast<size_t>(a)] = ix_const(r.len);
      first[static_cast<size_t>(a)] = ix_const(r.start);
      step[static_cast<size_t>(a)] = r.step;
      continue;
    }
    if (steps[k] != 1) not_symbolic(c.origin(), ": a slice of step ", steps[k], " over sizes");
    // min(max(v, 0), dim) for v >= 0, dim + v for v < 0 (ONNX's clamps, for step 1).
    auto bound = [&](const Index& v) -> Index {
      if (v->kind == IndexKind::Const && v->c >= ShapeEnv::kMaxSize) return dim;
      if (v->kind == IndexKind::Const && v->c < 0) {
        if (v->c <= -ShapeEnv::kMaxSize) return ix_const(0);
        const Index b = sym_simplify(ix_add(dim, v));
        c.gl.assume(b, 0, ShapeEnv::kMaxSize, c.origin());
        return b;
      }
      auto r = sym_range(v);
      if (!r || r->lo < 0) not_symbolic(c.origin(), ": a bound that may be negative");
      if (sym_equal(sym_simplify(v), sym_simplify(dim))) return dim;
      c.gl.assume(sym_simplify(ix_add(dim, ix_mul(v, -1))), 0, ShapeEnv::kMaxSize, c.origin());
      return v;
    };
    const Index s0 = bound((*starts)[k]), e0 = bound((*ends)[k]);
    const Index len = sym_simplify(ix_add(e0, ix_mul(s0, -1)));
    c.gl.assume(len, 0, ShapeEnv::kMaxSize, c.origin());
    size[static_cast<size_t>(a)] = len;
    first[static_cast<size_t>(a)] = s0;
  }
  std::vector<int64_t> hint_size;
  for (const Index& d : size)
    hint_size.push_back(d->kind == IndexKind::Const ? d->c : c.gl.hint(d));
  TensorBoxPtr v = make_view(x, hint_size, [first, step](const std::vector<Index>& i) {
    std::vector<Index> o = i;
    for (size_t d = 0; d < o.size(); ++d) o[d] = ix_add(first[d], ix_mul(i[d], step[d]));
    return o;
  });
  v->sym = size;
  if (x->strided && x->strided->sym_offset) {
    Index offset = x->strided->sym_offset;
    for (size_t d = 0; d < first.size(); ++d)
      offset = ix_add(offset, sym_mul(first[d], x->strided->sym_strides[d]));
    std::vector<int64_t> hint_strides = x->strided->strides;
    std::vector<Index> sym_strides = x->strided->sym_strides;
    for (size_t d = 0; d < first.size(); ++d) {
      hint_strides[d] = checked_mul(hint_strides[d], step[d], "a slice's stride");
      sym_strides[d] = ix_mul(sym_strides[d], step[d]);
    }
    v->strided = StridedView{hint_strides, x->strided->offset, sym_strides, sym_simplify(offset)};
    for (size_t d = 0; d < first.size(); ++d)
      v->strided->offset +=
          (first[d]->kind == IndexKind::Const ? first[d]->c : c.gl.hint(first[d])) *
          x->strided->strides[d];
  } else if (v->strided) {
    v->strided->sym_strides.clear();
    v->strided->sym_offset = nullptr;
  }
  return {v};
}

std::vector<TensorBoxPtr> lower_slice(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (c.gl.symbolic() && c.opset >= 10 && x->sym) return lower_slice_sym(c);
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset < 10) {
    starts = c.node.attr_ints("starts");
    ends = c.node.attr_ints("ends");
    axes = c.node.attr_ints("axes");
  } else {
    starts = const_ints_1d(c, 1);
    ends = const_ints_1d(c, 2);
    if (c.has(3)) axes = const_ints_1d(c, 3);
    if (c.has(4)) steps = const_ints_1d(c, 4);
  }
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    c.error("starts, ends, axes and steps differ in length");
  }
  std::vector<int> ax;
  std::vector<int64_t> st, lens;
  std::vector<bool> seen(x->size.size(), false);
  for (size_t k = 0; k < starts.size(); ++k) {
    int a = c.axis(axes[k], x->size.size());
    if (seen[a]) c.error("axes repeat axis ", axes[k]);
    seen[a] = true;
    const SliceAxis r = slice_axis(c, x->size[a], starts[k], ends[k], steps[k]);
    ax.push_back(a);
    st.push_back(r.start);
    lens.push_back(r.len);
    steps[k] = r.step;
  }
  return {slice_view(x, ax, st, steps, lens)};
}

// Expand's result over the symbols: each dim x's or the shape's, whichever is not 1 (they
// must be the same formula where neither is); none where they may differ.
std::optional<std::vector<Index>> expand_sym(const LowerCtx& c, const TensorBoxPtr& x,
                                             const std::vector<Index>& shape) {
  if (!x->sym) return std::nullopt;
  const size_t r = std::max(x->sym->size(), shape.size());
  std::vector<Index> out(r);
  for (size_t k = 0; k < r; ++k) {
    const size_t xl = r - x->sym->size(), sl = r - shape.size();
    const Index xd = k < xl ? ix_const(1) : (*x->sym)[k - xl];
    const Index sd = k < sl ? ix_const(1) : sym_simplify(shape[k - sl]);
    if (sym_is_const(sd, 1) || sym_equal(sym_simplify(xd), sd)) {
      out[k] = xd;
    } else if (sym_is_const(xd, 1)) {
      out[k] = sd;
    } else {
      not_symbolic(c.origin(), ": dims ", index_to_string(*xd), " and ", index_to_string(*sd),
                   " may not broadcast at other sizes");
    }
  }
  return out;
}

std::vector<TensorBoxPtr> lower_expand(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  std::optional<std::vector<Index>> sym;  // the shape over the symbols (sym_values.cc)
  if (c.gl.symbolic()) {
    if (c.input(1)->size.size() != 1) c.error("input 1 must be 1-D");
    sym = sym_elements(c, 1);
    if (!sym) not_symbolic(c.origin(), ": a shape computed at run time");
  }
  std::vector<int64_t> shape;
  if (sym) {
    for (const Index& d : *sym) shape.push_back(d->kind == IndexKind::Const ? d->c : c.gl.hint(d));
  } else {
    shape = const_ints_1d(c, 1);
  }
  for (int64_t d : shape)
    if (d < 0) c.error("negative dim ", d, " in shape");
  std::vector<int64_t> out = broadcast_shapes(c, {x->size, shape});
  if (!sym) return {expand_view(x, out)};
  return {expand_view_sym(x, out, expand_sym(c, x, *sym))};
}

// Concat over the symbols: the other dims must be the same formulas, the result's dim is the
// sum of the inputs', and each input's offset along it a formula, compared with the
// position at run time (its symbols from the plan's symbol values) as concat_boxes compares
// constants. None (not symbolic) where an input has no sym sizes.
TensorBoxPtr concat_sym(LowerCtx& c, const std::vector<TensorBoxPtr>& ins, int axis) {
  for (const TensorBoxPtr& t : ins)
    if (!t->sym) return concat_values(c.gl, ins, axis, c.origin());
  const size_t a = static_cast<size_t>(axis);
  std::vector<Index> size = *ins[0]->sym;
  std::vector<Index> offsets{ix_const(0)};
  for (const TensorBoxPtr& t : ins) {
    for (size_t d = 0; d < size.size(); ++d)
      if (d != a && !sym_equal(sym_simplify((*t->sym)[d]), sym_simplify(size[d])))
        not_symbolic(c.origin(), ": inputs whose dims may differ at other sizes");
    offsets.push_back(sym_simplify(ix_add(offsets.back(), (*t->sym)[a])));
  }
  size[a] = offsets.back();
  if (ins.size() > 16) not_symbolic(c.origin(), ": a concatenation of more than 16 values");
  Buffer* symbols = sym_all_const(offsets) ? nullptr : c.gl.symbol_values();
  std::vector<int64_t> hint = ins[0]->size;
  hint[a] = size[a]->kind == IndexKind::Const ? size[a]->c : c.gl.hint(size[a]);
  Loader fn = [ins, offsets, a, symbols](KernelBuilder& b, const std::vector<Index>& idx) {
    const V pos = b.index_value(idx[a]);
    V result;
    for (int k = static_cast<int>(ins.size()) - 1; k >= 0; --k) {
      if (sym_is_const((*ins[k]->sym)[a], 0)) continue;
      std::vector<Index> sub = idx;
      sub[a] = ix_add(idx[a], sym_mul(offsets[k], ix_const(-1)));
      const V lo = b.binary(Op::Ge, pos, sym_formula_value(b, symbols, offsets[k]));
      const V hi = b.binary(Op::Lt, pos, sym_formula_value(b, symbols, offsets[k + 1]));
      const V in_range = b.binary(Op::And, lo, hi);
      V v;
      {
        MaskScope scope(b, in_range);
        v = ins[k]->load(b, sub);
      }
      result = result.id < 0 ? v : b.where(in_range, v, result);
    }
    return result;
  };
  TensorBoxPtr r = make_pointwise_box(ins[0]->dtype, hint, fn, c.origin());
  set_box_sym(r, size);
  return r;
}

std::vector<TensorBoxPtr> lower_concat(LowerCtx& c) {
  std::vector<TensorBoxPtr> ins;
  for (size_t i = 0; i < c.in.size(); ++i) {
    if (c.has(i)) ins.push_back(c.input(i));
  }
  if (ins.empty()) c.error("no inputs");
  size_t rank = ins[0]->size.size();
  int axis = c.axis(c.node.attr_int("axis", 0), rank);
  for (const auto& t : ins) {
    if (t->size.size() != rank || t->dtype != ins[0]->dtype)
      c.error("inputs differ in rank or type");
    for (size_t d = 0; d < rank; ++d) {
      if (static_cast<int>(d) != axis && t->size[d] != ins[0]->size[d])
        c.error("inputs differ in shape");
    }
  }
  if (c.gl.symbolic()) return {concat_sym(c, ins, axis)};
  return {concat_values(c.gl, std::move(ins), axis, c.origin())};
}

std::vector<TensorBoxPtr> lower_split(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  int axis = c.axis(c.node.attr_int("axis", 0), x->size.size());
  std::vector<int64_t> split;
  if (c.opset >= 13 && c.has(1)) {
    split = const_ints_1d(c, 1);
  } else if (c.opset < 13) {
    split = c.node.attr_ints("split");
  }
  size_t n = c.node.outputs.size();
  if (n == 0) c.error("no outputs");
  int64_t dim = x->size[axis];
  if (split.empty()) {
    // Before opset 18 the parts are equal; from 18 (num_outputs) the last may be smaller.
    if (c.opset < 18 && dim % static_cast<int64_t>(n) != 0)
      c.error("axis of ", dim, " does not split into ", n, " equal parts (opset ", c.opset, ")");
    int64_t chunk = (dim + static_cast<int64_t>(n) - 1) / static_cast<int64_t>(n);
    for (size_t i = 0; i < n; ++i)
      split.push_back(std::min(chunk, dim - chunk * static_cast<int64_t>(i)));
  }
  if (split.size() != n) c.error("split has ", split.size(), " parts for ", n, " outputs");
  std::vector<TensorBoxPtr> outs;
  int64_t start = 0;
  for (int64_t len : split) {
    if (len < 0) c.error("negative split size");
    if (len > dim - start) c.error("split sizes sum to more than the axis' ", dim);
    outs.push_back(slice_view(x, {axis}, {start}, {1}, {len}));
    if (x->sym && sym_is_const((*x->sym)[static_cast<size_t>(axis)], dim))
      with_static_slice_sym(outs.back(), *x, axis, start, len);
    start += len;
  }
  if (start != dim) c.error("split sizes sum to ", start, ", axis has ", dim);
  return outs;
}

std::vector<TensorBoxPtr> lower_tile(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  std::vector<int64_t> reps = const_ints_1d(c, 1);
  if (reps.size() != x->size.size())
    c.error("repeats has ", reps.size(), " entries for rank ", x->size.size());
  std::vector<int64_t> size = x->size, old = x->size;
  for (size_t d = 0; d < size.size(); ++d) {
    if (reps[d] < 0) c.error("negative repeat");
    size[d] = checked_mul(size[d], reps[d], "the tiled dim");
  }
  return {make_view(x, size, [old](const std::vector<Index>& i) {
    std::vector<Index> o(i.size());
    for (size_t d = 0; d < i.size(); ++d) o[d] = ix_mod(i[d], std::max<int64_t>(old[d], 1));
    return o;
  })};
}

// DepthToSpace / SpaceToDepth are reshape → transpose → reshape, all views.
std::vector<TensorBoxPtr> lower_depth_space(LowerCtx& c, bool to_space) {
  const TensorBoxPtr& x = c.input(0);
  if (x->size.size() != 4) c.error("expects a 4-D input");
  int64_t bs = c.node.attr_int("blocksize", 0);
  if (bs <= 0) c.error("blocksize must be positive");
  int64_t n = x->size[0], ch = x->size[1], h = x->size[2], w = x->size[3];
  const int64_t bs2 = checked_mul(bs, bs, "blocksize^2");
  if (to_space) {
    if (ch % bs2 != 0) c.error("channels (", ch, ") not divisible by blocksize^2 (", bs2, ")");
    bool crd = c.node.attr_string("mode", "DCR") == "CRD";
    int64_t oc = ch / bs2;
    TensorBoxPtr t =
        crd ? reshape_view(x, {n, oc, bs, bs, h, w}) : reshape_view(x, {n, bs, bs, oc, h, w});
    t = crd ? permute_view(t, {0, 1, 4, 2, 5, 3}) : permute_view(t, {0, 3, 4, 1, 5, 2});
    return {reshape_view(t, {n, oc, checked_mul(h, bs, "height * blocksize"),
                             checked_mul(w, bs, "width * blocksize")})};
  }
  if (h % bs != 0 || w % bs != 0) c.error("spatial dims not divisible by blocksize");
  TensorBoxPtr t = reshape_view(x, {n, ch, h / bs, bs, w / bs, bs});
  t = permute_view(t, {0, 3, 5, 1, 2, 4});
  return {reshape_view(t, {n, checked_mul(ch, bs2, "channels * blocksize^2"), h / bs, w / bs})};
}

// Dropout at inference: the identity, with an all-true mask when asked for.
// Dropout: the identity at inference, and in training mode with ratio 0 (drawing random
// masks for a ratio above 0 is not supported: a seeded draw would not match anyone's).
std::vector<TensorBoxPtr> lower_dropout(LowerCtx& c) {
  if (c.has(2)) {
    auto training = c.const_data(2);
    if (training->elements() != 1) c.error("training_mode must be a scalar");
    if (training->int_at(0) != 0) {
      double ratio = 0.5;
      if (c.has(1)) {
        auto r = c.const_data(1);
        if (r->elements() != 1) c.error("ratio must be a scalar");
        ratio = r->float_at(0);
      }
      if (!(ratio >= 0 && ratio < 1)) c.error("ratio must be in [0, 1), got ", ratio);
      if (ratio != 0) c.unsupported("training mode with ratio ", ratio, " (random masks)");
    }
  }
  const TensorBoxPtr& x = c.input(0);
  TensorBoxPtr mask = make_pointwise_box(
      DType::Bool, x->size,
      [](KernelBuilder& b, const std::vector<Index>&) { return b.constant(ScalarType::Bool, 1); },
      c.origin());
  return {x, mask};
}

}  // namespace

void register_view_ops(LoweringTable& t) {
  t.add("Reshape", lower_reshape);
  t.add("Flatten", lower_flatten);
  t.add("Squeeze", lower_squeeze);
  t.add("Unsqueeze", lower_unsqueeze);
  t.add("Transpose", lower_transpose);
  t.add("Slice", lower_slice);
  t.add("Expand", lower_expand);
  t.add("Concat", lower_concat);
  t.add("Split", lower_split);
  t.add("Tile", lower_tile);
  t.add("Dropout", lower_dropout);
  t.add("Identity", [](LowerCtx& c) { return std::vector<TensorBoxPtr>{c.input(0)}; });
  t.add("DepthToSpace", [](LowerCtx& c) { return lower_depth_space(c, true); });
  t.add("SpaceToDepth", [](LowerCtx& c) { return lower_depth_space(c, false); });
}

}  // namespace ferrite
