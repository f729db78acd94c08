// DeformConv (19), 2-D: a convolution whose kernel taps move by learned offsets. Each tap
// (kh, kw) of output pixel (oh, ow) samples channel c bilinearly (taps outside the image
// read 0) at (oh * stride - pad + kh * dilation + dy, ow * ... + dx), the offsets of c's
// offset group, scaled by the optional mask; the samples, as columns [N, group, C/group * kH
// * kW, oH * oW], meet the weights in one MatMul extern per group, then the bias.
#include "compiler/loopir/checked_int.h"
#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

V bilinear_zeros(KernelBuilder& b, const TensorBoxPtr& x, const Index& n, const Index& ch, V y,
                 V xc, int64_t h, int64_t w) {
  const ScalarType t = compute_type(x->dtype);
  const V y0 = b.unary(Op::Floor, y), x0 = b.unary(Op::Floor, xc);
  const V fy = b.binary(Op::Sub, y, y0), fx = b.binary(Op::Sub, xc, x0);
  const V one = b.constant(t, 1);
  const V iy = b.cast(y0, ScalarType::I64), ix = b.cast(x0, ScalarType::I64);
  V sum = b.constant(t, 0);
  for (int dy = 0; dy < 2; ++dy) {
    for (int dx = 0; dx < 2; ++dx) {
      const V py = b.binary(Op::Add, iy, b.constant_i64(dy));
      const V px = b.binary(Op::Add, ix, b.constant_i64(dx));
      V inside = b.binary(Op::And, b.binary(Op::Ge, py, b.constant_i64(0)),
                          b.binary(Op::Lt, py, b.constant_i64(h)));
      inside = b.binary(Op::And, inside, b.binary(Op::Ge, px, b.constant_i64(0)));
      inside = b.binary(Op::And, inside, b.binary(Op::Lt, px, b.constant_i64(w)));
      V v;
      {
        MaskScope scope(b, inside);
        v = x->load(b, {n, ch, ix_value(py.id), ix_value(px.id)});
      }
      v = b.where(inside, v, b.constant(t, 0));
      const V wy = dy ? fy : b.binary(Op::Sub, one, fy);
      const V wx = dx ? fx : b.binary(Op::Sub, one, fx);
      sum = b.binary(Op::Add, sum, b.binary(Op::Mul, b.binary(Op::Mul, wy, wx), v));
    }
  }
  return sum;
}

std::vector<TensorBoxPtr> lower_deform_conv(LowerCtx& c) {
  const TensorBoxPtr &x = c.input(0), &wt = c.input(1), &off = c.input(2);
  if (x->dtype != DType::F32) c.unsupported("DeformConv on ", dtype_name(x->dtype));
  if (x->size.size() != 4) c.unsupported("DeformConv on ", x->size.size() - 2, "-D images");
  const int64_t n = x->size[0], ch = x->size[1], ih = x->size[2], iw = x->size[3];
  const int64_t group = c.node.attr_int("group", 1), ogroup = c.node.attr_int("offset_group", 1);
  if (wt->size.size() != 4 || group < 1 || wt->size[1] * group != ch || wt->size[0] % group) {
    c.error("W must be [oc, C / group, kH, kW] with oc a multiple of group");
  }
  const int64_t oc = wt->size[0], kh = wt->size[2], kw = wt->size[3];
  const std::vector<int64_t> ks = c.node.attr_ints("kernel_shape", {kh, kw});
  if (ks != std::vector<int64_t>{kh, kw}) c.error("kernel_shape differs from W's");
  const std::vector<int64_t> dil = c.node.attr_ints("dilations", {1, 1});
  const std::vector<int64_t> st = c.node.attr_ints("strides", {1, 1});
  const std::vector<int64_t> pads = c.node.attr_ints("pads", {0, 0, 0, 0});
  if (dil.size() != 2 || st.size() != 2 || pads.size() != 4) {
    c.error("dilations, strides (2) and pads (4) have the wrong length");
  }
  for (int64_t v : {dil[0], dil[1], st[0], st[1]}) {
    if (v < 1 || v > kMaxShapeElements) c.error("dilations and strides must be positive");
  }
  for (int64_t p : pads) {
    if (p < 0 || p > kMaxShapeElements) c.error("pads must be >= 0");
  }
  if (ogroup < 1 || ch % ogroup) c.error("offset_group must divide the ", ch, " channels");
  const int64_t oh = (ih + pads[0] + pads[2] - (kh - 1) * dil[0] - 1) / st[0] + 1;
  const int64_t ow = (iw + pads[1] + pads[3] - (kw - 1) * dil[1] - 1) / st[1] + 1;
  if (off->size != std::vector<int64_t>{n, ogroup * 2 * kh * kw, oh, ow}) {
    c.error("offset must be [", n, ", ", ogroup * 2 * kh * kw, ", ", oh, ", ", ow, "]");
  }
  const TensorBoxPtr bias = c.has(3) ? c.input(3) : nullptr;
  if (bias && bias->size != std::vector<int64_t>{oc}) c.error("B must be [", oc, "]");
  const TensorBoxPtr mask = c.has(4) ? c.input(4) : nullptr;
  if (mask && mask->size != std::vector<int64_t>{n, ogroup * kh * kw, oh, ow}) {
    c.error("mask must be [", n, ", ", ogroup * kh * kw, ", ", oh, ", ", ow, "]");
  }
  const int64_t per_ogroup = ch / ogroup;
  // cols[n, c, i, j, y, x]: channel c's sample for kernel tap (i, j) at output (y, x).
  Loader fn = [=](KernelBuilder& b, const std::vector<Index>& idx) {
    const ScalarType t = compute_type(x->dtype);
    const Index g = ix_floordiv(idx[1], per_ogroup);
    const Index tap = ix_add(ix_mul(idx[2], kw), idx[3]);
    const Index dy_ch = ix_add(ix_mul(g, 2 * kh * kw), ix_mul(tap, 2));
    const V dy = b.cast(off->load(b, {idx[0], dy_ch, idx[4], idx[5]}), t);
    const V dx = b.cast(off->load(b, {idx[0], ix_add(dy_ch, ix_const(1)), idx[4], idx[5]}), t);
    auto base = [&](const Index& o, const Index& k, size_t d, int64_t pad) {
      const Index p = ix_add(ix_add(ix_mul(o, st[d]), ix_mul(k, dil[d])), ix_const(-pad));
      return b.cast(b.index_value(p), t);
    };
    const V y = b.binary(Op::Add, base(idx[4], idx[2], 0, pads[0]), dy);
    const V xc = b.binary(Op::Add, base(idx[5], idx[3], 1, pads[1]), dx);
    V v = bilinear_zeros(b, x, idx[0], idx[1], y, xc, ih, iw);
    if (mask) {
      const Index mch = ix_add(ix_mul(g, kh * kw), tap);
      v = b.binary(Op::Mul, v, b.cast(mask->load(b, {idx[0], mch, idx[4], idx[5]}), t));
    }
    return v;
  };
  TensorBoxPtr cols = make_pointwise_box(x->dtype, {n, ch, kh, kw, oh, ow}, fn, c.origin());
  const int64_t kdim = ch / group * kh * kw;
  cols = reshape_view(cols, {n, group, kdim, oh * ow});
  TensorBoxPtr w = reshape_view(wt, {1, group, oc / group, kdim});
  EpiloguePost post;
  if (bias) {
    post = [&c, bias, group, oc](const TensorBoxPtr& y) {
      TensorBoxPtr bv = reshape_view(bias, {1, group, oc / group, 1});
      return make_pointwise(c, {y, bv}, y->dtype, [](KernelBuilder& b, const std::vector<V>& v) {
        return b.binary(Op::Add, v[0], v[1]);
      });
    };
  }
  TensorBoxPtr y = matmul_extern(c, w, cols, 1.0, post);
  return {reshape_view(y, {n, oc, oh, ow})};
}

}  // namespace

void register_deform_conv_ops(LoweringTable& t) {
  t.add("DeformConv", lower_deform_conv);
}

}  // namespace ferrite
