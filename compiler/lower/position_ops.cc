// Ops whose value depends on the position: Trilu, EyeLike, OneHot, Hardmax, CumSum and
// Pad. They compare loop indices (index_value) instead of reading index tensors.
#include <algorithm>

#include "compiler/loopir/checked_int.h"
#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

V pos(KernelBuilder& b, const Index& i) {
  return b.index_value(i);
}
V i64(KernelBuilder& b, int64_t v) {
  return b.constant_i64(v);
}

// A diagonal offset k against col - row of a [rows, cols] matrix: beyond +-(rows + cols)
// every k selects the same elements, so it is clamped there (k may be +-2^63).
int64_t clamp_diagonal(int64_t k, int64_t rows, int64_t cols) {
  const int64_t bound = rows + cols;
  return std::clamp(k, -bound, bound);
}

std::vector<TensorBoxPtr> lower_trilu(LowerCtx& c) {
  TensorBoxPtr x = c.input(0);
  size_t r = x->size.size();
  if (r < 2) c.error("input must have rank >= 2");
  int64_t k = 0;
  if (c.has(1)) {
    auto kk = c.const_ints(1);
    if (kk.size() != 1) c.error("k must be a scalar");
    k = clamp_diagonal(kk[0], x->size[r - 2], x->size[r - 1]);
  }
  bool upper = c.node.attr_int("upper", 1) != 0;
  Loader fn = [x, r, k, upper](KernelBuilder& b, const std::vector<Index>& idx) {
    V v = x->load(b, idx);
    V diff = b.binary(Op::Sub, pos(b, idx[r - 1]), pos(b, idx[r - 2]));  // col - row
    V keep = upper ? b.binary(Op::Ge, diff, i64(b, k)) : b.binary(Op::Le, diff, i64(b, k));
    return b.where(keep, v, b.constant(v.type, 0));
  };
  return {make_pointwise_box(x->dtype, x->size, fn, c.origin())};
}

std::vector<TensorBoxPtr> lower_eyelike(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (x->size.size() != 2) c.error("input must be 2-D");
  DType dt = x->dtype;
  if (c.node.has_attr("dtype") && !dtype_from_onnx(c.node.attr_int("dtype", 1), &dt)) {
    c.unsupported("dtype ", c.node.attr_int("dtype", 1));
  }
  int64_t k = clamp_diagonal(c.node.attr_int("k", 0), x->size[0], x->size[1]);
  Loader fn = [dt, k](KernelBuilder& b, const std::vector<Index>& idx) {
    V on = b.binary(Op::Eq, b.binary(Op::Sub, pos(b, idx[1]), pos(b, idx[0])), i64(b, k));
    return b.cast(on, compute_type(dt));
  };
  return {make_pointwise_box(dt, x->size, fn, c.origin())};
}

std::vector<TensorBoxPtr> lower_onehot(LowerCtx& c) {
  const TensorBoxPtr &ind = c.input(0), &values = c.input(2);
  auto depth_data = c.const_data(1);
  if (depth_data->elements() != 1 || depth_data->shape.size() > 1)
    c.error("depth must be a scalar or a 1-element 1-D tensor");
  const int64_t depth = dtype_is_float(depth_data->dtype)
                            ? checked_int(depth_data->float_at(0), "depth")
                            : depth_data->int_at(0);
  if (depth < 0) c.error("negative depth");
  if (values->size != std::vector<int64_t>{2}) c.error("values must have shape [2]");
  size_t r = ind->size.size() + 1;
  int axis = c.axis(c.node.attr_int("axis", -1), r);
  std::vector<int64_t> size = ind->size;
  size.insert(size.begin() + axis, depth);
  Loader fn = [ind, values, axis, depth](KernelBuilder& b, const std::vector<Index>& idx) {
    std::vector<Index> iidx = idx;
    iidx.erase(iidx.begin() + axis);
    V k = b.cast(ind->load(b, iidx), ScalarType::I64);
    k = b.where(b.binary(Op::Lt, k, i64(b, 0)), b.binary(Op::Add, k, i64(b, depth)), k);
    V hot = b.binary(Op::Eq, k, pos(b, idx[axis]));
    return b.where(hot, values->load(b, {ix_const(1)}), values->load(b, {ix_const(0)}));
  };
  return {make_pointwise_box(values->dtype, size, fn, c.origin())};
}

std::vector<TensorBoxPtr> lower_hardmax(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  size_t r = x->size.size();
  int axis = c.axis(c.node.attr_int("axis", c.opset >= 13 ? -1 : 1), r);
  TensorBoxPtr v = x;
  if (c.opset < 13) {
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < r; ++d) (static_cast<int>(d) < axis ? outer : inner) *= x->size[d];
    v = reshape_view(x, {outer, inner});
    axis = 1;
  }
  TensorBoxPtr am = make_reduction(c, v, {axis}, true, ReduceKind::ArgMax, DType::I64);
  std::vector<int64_t> size = v->size;
  Loader fn = [am, axis, size, v](KernelBuilder& b, const std::vector<Index>& idx) {
    V best = load_broadcast(b, am, idx, size);
    V on = b.binary(Op::Eq, best, pos(b, idx[axis]));
    return b.cast(on, compute_type(v->dtype));
  };
  return {reshape_view(make_pointwise_box(x->dtype, size, fn, c.origin()), x->size)};
}

// out[i] = sum over j of x[j] with j <= i (j < i exclusive; reversed: j >= i / j > i).
// CumSum and CumProd: each output element reduces the inputs before it on the axis (with
// it unless exclusive; after it when reverse).
std::vector<TensorBoxPtr> lower_cumulative(LowerCtx& c, ReduceKind kind) {
  const TensorBoxPtr& x = c.input(0);
  auto ax = c.const_ints(1);
  if (ax.size() != 1) c.error("axis must be a scalar");
  int axis = c.axis(ax[0], x->size.size());
  bool exclusive = c.node.attr_int("exclusive", 0) != 0,
       reverse = c.node.attr_int("reverse", 0) != 0;
  auto def = std::make_shared<ComputedDef>();
  def->is_reduction = true;
  def->reduce = kind;
  def->origin = c.origin();
  def->ranges = x->size;
  def->reduction_ranges = {x->size[axis]};
  TensorBoxPtr src = x;
  const double identity = kind == ReduceKind::Prod ? 1 : 0;
  def->rfn = [src, axis, exclusive, reverse, identity](
                 KernelBuilder& b, const std::vector<Index>& o, const std::vector<Index>& red) {
    std::vector<Index> idx = o;
    idx[axis] = red[0];
    V j = pos(b, red[0]), i = pos(b, o[axis]);
    Op cmp = reverse ? (exclusive ? Op::Gt : Op::Ge) : (exclusive ? Op::Lt : Op::Le);
    V v = src->load(b, idx);
    return b.where(b.binary(cmp, j, i), v, b.constant(v.type, identity));
  };
  TensorBoxPtr t = make_reduction_box(x->dtype, def);
  c.gl.realize(t);
  return {t};
}

std::vector<TensorBoxPtr> lower_pad(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  size_t r = x->size.size();
  std::vector<int64_t> pads = c.opset < 11 ? c.node.attr_ints("pads") : const_ints_1d(c, 1);
  std::string mode = c.node.attr_string("mode", "constant");
  std::vector<int> axes;
  if (c.opset >= 18 && c.has(3)) {
    for (int64_t a : const_ints_1d(c, 3)) axes.push_back(c.axis(a, r));
  } else {
    for (size_t d = 0; d < r; ++d) axes.push_back(static_cast<int>(d));
  }
  if (pads.size() != 2 * axes.size())
    c.error("pads has ", pads.size(), " entries for ", axes.size(), " axes");
  std::vector<bool> seen(r, false);
  for (int a : axes) {
    if (seen[a]) c.error("axes repeat axis ", a);
    seen[a] = true;
  }
  // No output dim exceeds kMaxShapeElements, so neither can a pad: bounding them keeps
  // the sums below, and the index offsets -begin, inside int64.
  for (int64_t p : pads)
    if (p < -kMaxShapeElements || p > kMaxShapeElements) c.error("pad ", p, " is out of range");
  std::vector<int64_t> begin(r, 0), size = x->size;
  for (size_t i = 0; i < axes.size(); ++i) {
    begin[axes[i]] = pads[i];
    size[axes[i]] += pads[i] + pads[i + axes.size()];
    if (size[axes[i]] < 0) c.error("pads remove more than the axis holds");
    if (mode != "constant" && x->size[axes[i]] == 0 && size[axes[i]] > 0)
      c.error("cannot pad an empty axis");
  }
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") {
    c.unsupported("mode '", mode, "'");
  }
  TensorBoxPtr cval = c.opset >= 11 && c.has(2) ? c.input(2) : nullptr;
  if (cval && cval->elements() != 1)
    c.error("constant_value must hold one value, got ", cval->elements());
  double attr_value = c.node.attr_float("value", 0.0);
  std::vector<int64_t> in = x->size;
  Loader fn = [=](KernelBuilder& b, const std::vector<Index>& idx) {
    std::vector<Index> src(r);
    V inside = b.constant(ScalarType::Bool, 1);
    for (size_t d = 0; d < r; ++d) {
      Index s = ix_add(idx[d], ix_const(-begin[d]));
      if (begin[d] == 0 && size[d] == in[d]) {
        src[d] = s;
        continue;
      }
      V p = pos(b, s), last = i64(b, in[d] - 1);
      if (mode == "constant") {
        inside = b.binary(Op::And, inside, b.binary(Op::Ge, p, i64(b, 0)));
        inside = b.binary(Op::And, inside, b.binary(Op::Le, p, last));
        src[d] = s;
      } else if (mode == "wrap") {  // 19: the axis repeats, both ways
        src[d] = ix_mod(s, std::max<int64_t>(1, in[d]));
      } else if (mode == "edge") {
        src[d] = ix_value(b.binary(Op::Min, b.binary(Op::Max, p, i64(b, 0)), last).id);
      } else {  // reflect: a triangle wave with period 2*(n-1)
        int64_t period = std::max<int64_t>(1, 2 * (in[d] - 1));
        V m = b.binary(Op::Mod, b.unary(Op::Abs, p), i64(b, period));
        V refl = b.binary(Op::Sub, last, b.unary(Op::Abs, b.binary(Op::Sub, last, m)));
        src[d] = ix_value(refl.id);
      }
    }
    if (mode != "constant") return x->load(b, src);
    V v;
    {
      MaskScope scope(b, inside);
      v = x->load(b, src);
    }
    V fill = cval
                 ? b.cast(cval->load(b, std::vector<Index>(cval->size.size(), ix_const(0))), v.type)
                 : b.constant(v.type, attr_value);
    return b.where(inside, v, fill);
  };
  return {make_pointwise_box(x->dtype, size, fn, c.origin())};
}

// CenterCropPad (18): each listed axis cropped or zero-padded to its new size, centred
// (the extra element, when the difference is odd, on the end side).
std::vector<TensorBoxPtr> lower_center_crop_pad(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  const size_t r = x->size.size();
  const std::vector<int64_t> want = const_ints_1d(c, 1);
  std::vector<int> axes;
  if (c.node.has_attr("axes")) {
    for (int64_t a : c.node.attr_ints("axes")) axes.push_back(c.axis(a, r));
  } else {
    for (size_t d = 0; d < r; ++d) axes.push_back(static_cast<int>(d));
  }
  if (want.size() != axes.size()) {
    c.error("shape has ", want.size(), " entries for ", axes.size(), " axes");
  }
  std::vector<int64_t> size = x->size, shift(r, 0);  // source index = index + shift
  std::vector<bool> seen(r, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int a = axes[i];
    if (seen[a]) c.error("axes repeat axis ", a);
    seen[a] = true;
    if (want[i] < 0 || want[i] > kMaxShapeElements) c.error("shape ", want[i], " is out of range");
    shift[a] = want[i] < x->size[a] ? (x->size[a] - want[i]) / 2 : -((want[i] - x->size[a]) / 2);
    size[a] = want[i];
  }
  const std::vector<int64_t> in = x->size;
  Loader fn = [x, r, shift, in, size](KernelBuilder& b, const std::vector<Index>& idx) {
    std::vector<Index> src(r);
    V inside = b.constant(ScalarType::Bool, 1);
    bool padded = false;
    for (size_t d = 0; d < r; ++d) {
      src[d] = ix_add(idx[d], ix_const(shift[d]));
      if (size[d] <= in[d]) continue;  // cropped or kept: always inside
      padded = true;
      const V p = pos(b, src[d]);
      inside = b.binary(Op::And, inside, b.binary(Op::Ge, p, i64(b, 0)));
      inside = b.binary(Op::And, inside, b.binary(Op::Lt, p, i64(b, in[d])));
    }
    if (!padded) return x->load(b, src);
    V v;
    {
      MaskScope scope(b, inside);
      v = x->load(b, src);
    }
    return b.where(inside, v, b.constant(v.type, 0));
  };
  return {make_pointwise_box(x->dtype, size, fn, c.origin())};
}

}  // namespace

void register_position_ops(LoweringTable& t) {
  t.add("CenterCropPad", lower_center_crop_pad);
  t.add("Trilu", lower_trilu);
  t.add("EyeLike", lower_eyelike);
  t.add("OneHot", lower_onehot);
  t.add("Hardmax", lower_hardmax);
  t.add("CumSum", [](LowerCtx& c) { return lower_cumulative(c, ReduceKind::Sum); });
  t.add("CumProd", [](LowerCtx& c) { return lower_cumulative(c, ReduceKind::Prod); });
  t.add("Pad", lower_pad);
}

}  // namespace ferrite
