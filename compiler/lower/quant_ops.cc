// QuantizeLinear, DequantizeLinear (per tensor, per axis, blocked; uint8, int8, uint16,
// int16, uint4, int4, uint2, int2, and int32 into DequantizeLinear; the float8 types and
// float4 e2m1) and DynamicQuantizeLinear, pointwise over the scale and zero point as views of
// x (quant_common.h), with onnxruntime's arithmetic: the division by the scale in float32,
// rounding half to even, saturation to the type's range. Into a float type, x / scale plus
// the zero point is stored with the type's own rounding (minifloat.h), clamped to its finite
// range when `saturate` (the default; float4 always saturates).
#include "compiler/lower/quant_common.h"
#include "compiler/plan/minifloat.h"

namespace ferrite {
namespace {

// The node's axis over x of rank `rank`, or -1 when it lies outside (which only a
// per-tensor scale tolerates: quant_param_view says so otherwise).
int quant_axis(const LowerCtx& c, size_t rank) {
  const int64_t a = c.node.attr_int("axis", 1);
  const auto r = static_cast<int64_t>(rank);
  if (a < -r || a >= r) return -1;
  return static_cast<int>(a < 0 ? a + r : a);
}

// The output_dtype attribute (opset 21+), or `dflt` without one.
DType output_dtype(const LowerCtx& c, DType dflt) {
  if (!c.node.has_attr("output_dtype")) return dflt;
  const int64_t t = c.node.attr_int("output_dtype", 0);
  DType d = DType::Undefined;
  if (t == 0) return dflt;
  if (!dtype_from_onnx(t, &d)) c.unsupported("output_dtype ", t);
  return d;
}

// Zero points as int64 at `index` (0 without one).
V zero_point_at(KernelBuilder& b, const TensorBoxPtr& zp, const std::vector<Index>& index) {
  return zp ? b.cast(zp->load(b, index), ScalarType::I64) : b.constant_i64(0);
}

std::vector<TensorBoxPtr> lower_quantize(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (!dtype_is_float(x->dtype) && x->dtype != DType::I32)
    c.unsupported("QuantizeLinear of ", dtype_name(x->dtype));
  const DType zp_type = c.has(2) ? c.input(2)->dtype : DType::U8;
  const DType out = output_dtype(c, zp_type);
  if (c.has(2) && out != zp_type)
    c.error("output_dtype ", dtype_name(out), " differs from y_zero_point's ", dtype_name(zp_type));
  if (!dtype_is_float(c.input(1)->dtype)) c.error("y_scale must be a float tensor");
  const int axis = quant_axis(c, x->size.size());
  const int64_t block = c.node.attr_int("block_size", 0);
  const TensorBoxPtr scale = quant_param_view(c, 1, x->size, axis, block);
  const TensorBoxPtr zp = c.has(2) ? quant_param_view(c, 2, x->size, axis, block) : nullptr;
  if (dtype_is_minifloat(out)) {
    if (out == DType::F8E8M0) c.unsupported("QuantizeLinear into ", dtype_name(out));
    const double max =
        out != DType::F4E2M1 && c.node.attr_int("saturate", 1) ? minifloat_max(out) : 0;
    Loader fn = [x, scale, zp, max](KernelBuilder& b, const std::vector<Index>& i) {
      V y = b.binary(Op::Div, b.cast(x->load(b, i), ScalarType::F32),
                     b.cast(scale->load(b, i), ScalarType::F32));
      if (zp) y = b.binary(Op::Add, y, zp->load(b, i));
      if (max > 0) {
        y = b.binary(Op::Min, b.binary(Op::Max, y, b.constant(ScalarType::F32, -max)),
                     b.constant(ScalarType::F32, max));
      }
      return y;
    };
    return {make_pointwise_box(out, x->size, fn, c.origin())};
  }
  const QRange r = quant_range(c, out, "QuantizeLinear into");
  Loader fn = [x, scale, zp, r](KernelBuilder& b, const std::vector<Index>& i) {
    return quantize_value(b, x->load(b, i), scale->load(b, i), zero_point_at(b, zp, i), r);
  };
  return {make_pointwise_box(out, x->size, fn, c.origin())};
}

std::vector<TensorBoxPtr> lower_dequantize(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  const bool float_x = dtype_is_minifloat(x->dtype) && x->dtype != DType::F8E8M0;
  if (!float_x) quant_range(c, x->dtype, "DequantizeLinear of", true);
  const DType scale_type = c.input(1)->dtype;
  if (!dtype_is_float(scale_type) || scale_type == DType::F64)
    c.unsupported("x_scale of type ", dtype_name(scale_type));
  const DType out = output_dtype(c, scale_type);
  if (!dtype_is_float(out) || out == DType::F64) c.unsupported("output_dtype ", dtype_name(out));
  if (c.has(2) && c.input(2)->dtype != x->dtype)
    c.error("x_zero_point's type ", dtype_name(c.input(2)->dtype), " differs from x's ",
            dtype_name(x->dtype));
  const int axis = quant_axis(c, x->size.size());
  const int64_t block = c.node.attr_int("block_size", 0);
  const TensorBoxPtr scale = quant_param_view(c, 1, x->size, axis, block);
  const TensorBoxPtr zp = c.has(2) ? quant_param_view(c, 2, x->size, axis, block) : nullptr;
  Loader fn = [x, scale, zp, out, float_x](KernelBuilder& b, const std::vector<Index>& i) {
    V y;
    if (float_x) {  // (x - zero_point) * scale in float32
      y = x->load(b, i);
      if (zp) y = b.binary(Op::Sub, y, zp->load(b, i));
      y = b.binary(Op::Mul, y, b.cast(scale->load(b, i), ScalarType::F32));
    } else {
      y = dequantize_value(b, x->load(b, i), zero_point_at(b, zp, i), scale->load(b, i));
    }
    return b.cast(y, compute_type(out));
  };
  return {make_pointwise_box(out, x->size, fn, c.origin())};
}

std::vector<TensorBoxPtr> lower_dynamic_quantize(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (x->dtype != DType::F32) c.unsupported("DynamicQuantizeLinear of ", dtype_name(x->dtype));
  const DynamicQ q = dynamic_quantize_u8(c, x);
  return {q.y, q.scale, q.zero_point};
}

}  // namespace

void register_quant_ops(LoweringTable& t) {
  t.add("QuantizeLinear", lower_quantize);
  t.add("DequantizeLinear", lower_dequantize);
  t.add("DynamicQuantizeLinear", lower_dynamic_quantize);
}

}  // namespace ferrite
