// Pooling as windowed reductions: the window offsets are reduction dimensions, padding is a
// mask (masked lanes read nothing), and AveragePool divides by the exact count of window
// positions inside the input (or inside input + pads, with count_include_pad).
#include <limits>

#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

struct PoolGeometry {
  std::vector<int64_t> kernel, strides, dilations, pad_begin, pad_end, out;
};

PoolGeometry pool_geometry(const LowerCtx& c, const std::vector<int64_t>& in) {
  size_t k = in.size();
  PoolGeometry g;
  g.kernel = c.node.attr_ints("kernel_shape");
  if (g.kernel.size() != k) c.error("kernel_shape needs ", k, " entries");
  g.strides = c.node.attr_ints("strides", std::vector<int64_t>(k, 1));
  g.dilations = c.node.attr_ints("dilations", std::vector<int64_t>(k, 1));
  std::vector<int64_t> pads = c.node.attr_ints("pads", std::vector<int64_t>(2 * k, 0));
  if (g.strides.size() != k || g.dilations.size() != k || pads.size() != 2 * k) {
    c.error("strides, dilations or pads have the wrong length");
  }
  std::string auto_pad = c.node.attr_string("auto_pad", "NOTSET");
  bool ceil_mode = c.node.attr_int("ceil_mode", 0) != 0;
  for (size_t d = 0; d < k; ++d) {
    int64_t s = g.strides[d], dil = g.dilations[d], kk = g.kernel[d];
    if (s <= 0 || dil <= 0 || kk <= 0) c.error("kernel, strides and dilations must be positive");
    int64_t span = (kk - 1) * dil + 1, pb = pads[d], pe = pads[d + k], o;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      o = (in[d] + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (o - 1) * s + span - in[d]);
      pb = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe = total - pb;
    } else if (auto_pad == "VALID") {
      pb = pe = 0;
      o = in[d] >= span ? (in[d] - span) / s + 1 : 0;
    } else {
      if (auto_pad != "NOTSET") c.error("unknown auto_pad '", auto_pad, "'");
      int64_t len = in[d] + pb + pe - span;
      if (len < 0) c.error("window larger than the padded input");
      o = (ceil_mode ? (len + s - 1) / s : len / s) + 1;
      if (ceil_mode && (o - 1) * s >= in[d] + pb) --o;  // last window must start inside
    }
    g.pad_begin.push_back(pb);
    g.pad_end.push_back(pe);
    g.out.push_back(o);
  }
  return g;
}

std::vector<TensorBoxPtr> lower_pool(LowerCtx& c, bool is_max) {
  const TensorBoxPtr& x = c.input(0);
  if (!dtype_is_float(x->dtype)) c.unsupported("non-float input");
  if (x->size.size() < 3) c.error("input must have rank >= 3");
  if (is_max && c.node.outputs.size() > 1 && c.node.outputs[1] &&
      !c.node.outputs[1]->users.empty()) {
    c.unsupported("the Indices output");
  }
  std::vector<int64_t> spatial(x->size.begin() + 2, x->size.end());
  PoolGeometry g = pool_geometry(c, spatial);
  size_t k = spatial.size();
  bool include_pad = c.node.attr_int("count_include_pad", 0) != 0;
  auto def = std::make_shared<ComputedDef>();
  def->is_reduction = true;
  def->reduce = is_max ? ReduceKind::Max : ReduceKind::Sum;
  def->origin = c.origin();
  def->ranges = {x->size[0], x->size[1]};
  def->ranges.insert(def->ranges.end(), g.out.begin(), g.out.end());
  def->reduction_ranges = g.kernel;
  TensorBoxPtr src = x;
  def->rfn = [src, g, k, is_max, spatial](KernelBuilder& b, const std::vector<Index>& o,
                                          const std::vector<Index>& w) {
    std::vector<Index> idx{o[0], o[1]};
    V inside = b.constant(ScalarType::Bool, 1);
    for (size_t d = 0; d < k; ++d) {
      Index pos = ix_add(ix_add(ix_mul(o[2 + d], g.strides[d]), ix_mul(w[d], g.dilations[d])),
                         ix_const(-g.pad_begin[d]));
      V p = b.index_value(pos);
      inside = b.binary(Op::And, inside, b.binary(Op::Ge, p, b.constant(ScalarType::I64, 0)));
      inside = b.binary(
          Op::And, inside,
          b.binary(Op::Lt, p, b.constant(ScalarType::I64, static_cast<double>(spatial[d]))));
      idx.push_back(pos);
    }
    V v;
    {
      MaskScope scope(b, inside);
      v = src->load(b, idx);
    }
    double fill = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
    return b.where(inside, v, b.constant(v.type, fill));
  };
  if (!is_max) {
    def->post = [g, k, spatial, include_pad](KernelBuilder& b, V sum) {
      V count = b.constant(ScalarType::I64, 1);
      for (size_t d = 0; d < k; ++d) {
        int64_t lo = include_pad ? -g.pad_begin[d] : 0;
        int64_t hi = include_pad ? spatial[d] + g.pad_end[d] : spatial[d];
        int64_t dil = g.dilations[d];
        Index start = ix_add(ix_mul(ix_var(static_cast<int>(2 + d)), g.strides[d]),
                             ix_const(-g.pad_begin[d]));
        // window offsets j with lo <= start + j*dil < hi: j in [ceil((lo-start)/dil),
        // ceil((hi-start)/dil))
        auto ceil_div = [&](int64_t bound) {
          Index num = ix_add(ix_add(ix_const(bound + dil - 1), ix_mul(start, -1)), ix_const(0));
          return b.index_value(ix_floordiv(num, dil));
        };
        V jmin = b.binary(Op::Max, ceil_div(lo), b.constant(ScalarType::I64, 0));
        V jmax = b.binary(Op::Min, ceil_div(hi),
                          b.constant(ScalarType::I64, static_cast<double>(g.kernel[d])));
        V n = b.binary(Op::Max, b.binary(Op::Sub, jmax, jmin), b.constant(ScalarType::I64, 0));
        count = b.binary(Op::Mul, count, n);
      }
      V cnt = b.binary(Op::Max, count, b.constant(ScalarType::I64, 1));
      return b.binary(Op::Div, sum, b.cast(cnt, sum.type));
    };
  }
  TensorBoxPtr t = make_reduction_box(x->dtype, def);
  c.gl.realize(t);
  return {t};
}

std::vector<TensorBoxPtr> lower_global_pool(LowerCtx& c, bool is_max) {
  const TensorBoxPtr& x = c.input(0);
  if (!dtype_is_float(x->dtype)) c.unsupported("non-float input");
  if (x->size.size() < 3) c.error("input must have rank >= 3");
  std::vector<int> axes;
  int64_t n = 1;
  for (size_t d = 2; d < x->size.size(); ++d) {
    axes.push_back(static_cast<int>(d));
    n *= x->size[d];
  }
  double count = static_cast<double>(n);
  std::function<V(KernelBuilder&, V)> post;
  if (!is_max)
    post = [count](KernelBuilder& b, V v) {
      return b.binary(Op::Div, v, b.constant(v.type, count));
    };
  return {make_reduction(c, x, axes, true, is_max ? ReduceKind::Max : ReduceKind::Sum, x->dtype,
                         nullptr, post)};
}

}  // namespace

void register_pool_ops(LoweringTable& t) {
  t.add("MaxPool", [](LowerCtx& c) { return lower_pool(c, true); });
  t.add("AveragePool", [](LowerCtx& c) { return lower_pool(c, false); });
  t.add("GlobalMaxPool", [](LowerCtx& c) { return lower_global_pool(c, true); });
  t.add("GlobalAveragePool", [](LowerCtx& c) { return lower_global_pool(c, false); });
}

}  // namespace ferrite
