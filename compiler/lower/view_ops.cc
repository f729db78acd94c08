// Views: index remaps, never copies (Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
// Slice, Expand, Concat, Identity, Split, Tile, DepthToSpace, SpaceToDepth).
#include <algorithm>

#include "compiler/loopir/checked_int.h"
#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

std::vector<TensorBoxPtr> lower_reshape(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  std::vector<int64_t> shape = c.opset < 5 ? c.node.attr_ints("shape") : const_ints_1d(c, 1);
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
  return {reshape_view(x, shape)};
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
  return {reshape_view(x, {outer, inner})};
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
  for (size_t d = 0; d < x->size.size(); ++d) {
    if (!drop[d]) out.push_back(x->size[d]);
  }
  return {reshape_view(x, out)};
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
  size_t k = 0;
  for (size_t d = 0; d < rank; ++d) out.push_back(added[d] ? 1 : x->size[k++]);
  return {reshape_view(x, out)};
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

std::vector<TensorBoxPtr> lower_slice(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
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
    int64_t dim = x->size[a], step = steps[k];
    if (step == 0) c.error("slice step is 0");
    auto norm = [dim](int64_t v) {
      return v < 0 ? std::max<int64_t>(v, -dim - 1) + dim : std::min(v, dim);
    };
    int64_t s = norm(starts[k]), e = norm(ends[k]), len;
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
    ax.push_back(a);
    st.push_back(s);
    lens.push_back(len);
    // A step past the dim reads one element at most: 1 keeps the view's strides small.
    if (len <= 1) steps[k] = 1;
  }
  return {slice_view(x, ax, st, steps, lens)};
}

std::vector<TensorBoxPtr> lower_expand(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  std::vector<int64_t> shape = const_ints_1d(c, 1);
  for (int64_t d : shape)
    if (d < 0) c.error("negative dim ", d, " in shape");
  std::vector<int64_t> out = broadcast_shapes(c, {x->size, shape});
  return {expand_view(x, out)};
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
