// The com.microsoft quantized ops that onnxruntime's quantizer and transformer exports
// write, with the semantics of its ContribOperators documentation and its CPU kernels'
// arithmetic: MatMulIntegerToFloat, DynamicQuantizeMatMul, QGemm (int32 sums, then a float32
// scale and bias, or a requantization), QLinearAdd, QLinearMul, QLinearSigmoid,
// QLinearLeakyRelu, QLinearConcat (dequantize, compute in float32, quantize),
// QLinearGlobalAveragePool (an exact int32 sum requantized by x_scale / (y_scale * count)),
// QLinearAveragePool (AveragePool on the dequantized values), and MatMulNBits (2-, 4- and
// 8-bit blockwise weights with scales and zero points, dequantized into the MatMul extern's
// operand).
#include <string>

#include "compiler/lower/quant_common.h"

namespace ferrite {
namespace {

std::string input_name(const LowerCtx& c, size_t i) {
  return c.node.inputs.size() > i && c.node.inputs[i] ? c.node.inputs[i]->name : "";
}

const TensorBoxPtr& quantized_input(const LowerCtx& c, size_t i) {
  const TensorBoxPtr& t = c.input(i);
  quant_range(c, t->dtype, "input");
  return t;
}

// float32(acc) * ((alpha * s1) * s2) + bias: an int32 sum scaled back to float32.
TensorBoxPtr scale_sum(const LowerCtx& c, const TensorBoxPtr& acc, const TensorBoxPtr& s1,
                       const TensorBoxPtr& s2, const TensorBoxPtr& bias, double alpha = 1) {
  std::vector<TensorBoxPtr> ins = {acc, s1, s2};
  if (bias) ins.push_back(bias);
  return make_pointwise(c, ins, DType::F32, [alpha](KernelBuilder& b, const std::vector<V>& v) {
    V m = b.cast(v[1], ScalarType::F32);
    if (alpha != 1) m = b.binary(Op::Mul, b.constant(m, alpha), m);
    m = b.binary(Op::Mul, m, b.cast(v[2], ScalarType::F32));
    V y = b.binary(Op::Mul, b.cast(v[0], ScalarType::F32), m);
    return v.size() > 3 ? b.binary(Op::Add, y, v[3]) : y;
  });
}

// Input `i`, a bias of N float32 values (null when omitted).
TensorBoxPtr bias_input(const LowerCtx& c, size_t i, int64_t n) {
  if (!c.has(i)) return nullptr;
  const TensorBoxPtr& b = c.input(i);
  if (b->dtype != DType::F32 || b->size != std::vector<int64_t>{n})
    c.error("bias '", input_name(c, i), "' must be float32 [", n, "], got ", dtype_name(b->dtype),
            shape_text(b->size));
  return b;
}

int64_t last_dim(const TensorBoxPtr& t) {
  return t->size.empty() ? 1 : t->size.back();
}

std::vector<TensorBoxPtr> lower_matmul_integer_to_float(LowerCtx& c) {
  const TensorBoxPtr &a = quantized_input(c, 0), &b = quantized_input(c, 1);
  const TensorBoxPtr acc =
      integer_matmul(c, {a, line_param(c, 4, a, true)}, {b, line_param(c, 5, b, false)});
  return {scale_sum(c, acc, line_param(c, 2, a, true), line_param(c, 3, b, false),
                    bias_input(c, 6, last_dim(b)))};
}

std::vector<TensorBoxPtr> lower_dynamic_quantize_matmul(LowerCtx& c) {
  const TensorBoxPtr& a = c.input(0);
  if (a->dtype != DType::F32) c.unsupported("DynamicQuantizeMatMul of ", dtype_name(a->dtype));
  const TensorBoxPtr& b = quantized_input(c, 1);
  const DynamicQ q = dynamic_quantize_u8(c, a);
  const TensorBoxPtr acc = integer_matmul(c, {q.y, q.zero_point}, {b, line_param(c, 3, b, false)});
  return {scale_sum(c, acc, q.scale, line_param(c, 2, b, false), bias_input(c, 4, last_dim(b)))};
}

// QGemm: A [M, K] (or [K, M], transA), B [K, N] (or [N, K], transB); C int32 bias quantized
// by alpha * a_scale * b_scale; a float32 result, or with y_scale the requantized one.
std::vector<TensorBoxPtr> lower_qgemm(LowerCtx& c) {
  TensorBoxPtr a = quantized_input(c, 0), b = quantized_input(c, 3);
  if (a->size.size() != 2 || b->size.size() != 2)
    c.error("A and B must be 2-D, got ", shape_text(a->size), " and ", shape_text(b->size));
  if (c.node.attr_int("transA", 0)) a = permute_view(a, {1, 0});
  if (c.node.attr_int("transB", 0)) b = permute_view(b, {1, 0});
  const double alpha = c.node.attr_float("alpha", 1.0);
  TensorBoxPtr acc = integer_matmul(c, {a, scalar_param(c, 2)}, {b, line_param(c, 5, b, false)});
  if (c.has(6)) {
    const TensorBoxPtr& bias = c.input(6);
    if (bias->dtype != DType::I32) c.error("C must be int32, got ", dtype_name(bias->dtype));
    acc = make_pointwise(c, {acc, bias}, DType::I32, [](KernelBuilder& k, const std::vector<V>& v) {
      return k.binary(Op::Add, v[0], k.cast(v[1], ScalarType::I64));
    });
  }
  const TensorBoxPtr sa = scalar_param(c, 1), sb = line_param(c, 4, b, false);
  if (!c.has(7)) return {scale_sum(c, acc, sa, sb, nullptr, alpha)};
  if (!c.has(8)) c.error("y_scale needs y_zero_point");
  return {requantize(c, acc, sa, sb, scalar_param(c, 7), scalar_param(c, 8), alpha)};
}

// A quantized operand of the pointwise ops: x with its per-tensor scale and zero point.
struct QOperand {
  TensorBoxPtr x, scale, zero_point;  // zero_point null: 0
};

QOperand q_operand(const LowerCtx& c, size_t x, size_t scale, size_t zero_point) {
  return {quantized_input(c, x), scalar_param(c, scale),
          c.has(zero_point) ? scalar_param(c, zero_point) : nullptr};
}

// quantize(f(dequantize(ins)...)) into `out`'s scale and zero point (of type out_type when
// it has no zero point), broadcasting the operands.
TensorBoxPtr q_pointwise(const LowerCtx& c, const std::vector<QOperand>& ins,
                         const TensorBoxPtr& out_scale, const TensorBoxPtr& out_zp, DType out_type,
                         std::function<V(KernelBuilder&, const std::vector<V>&)> f) {
  std::vector<std::vector<int64_t>> shapes;
  for (const QOperand& q : ins) shapes.push_back(q.x->size);
  const std::vector<int64_t> size = broadcast_shapes(c, shapes);
  const QRange r = quant_range(c, out_type, "output");
  Loader fn = [ins, out_scale, out_zp, size, r, f](KernelBuilder& b, const std::vector<Index>& i) {
    std::vector<V> reals;
    for (const QOperand& q : ins) {
      const V zp = q.zero_point ? q.zero_point->load(b, {}) : b.constant_i64(0);
      reals.push_back(
          dequantize_value(b, load_broadcast(b, q.x, i, size), zp, q.scale->load(b, {})));
    }
    const V zp = out_zp ? b.cast(out_zp->load(b, {}), ScalarType::I64) : b.constant_i64(0);
    return quantize_value(b, f(b, reals), out_scale->load(b, {}), zp, r);
  };
  return make_pointwise_box(out_type, size, fn, c.origin());
}

// QLinearAdd / QLinearMul: A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale,
// C_zero_point (zero points optional), C of A's type.
LowerFn q_binary(Op op) {
  return [op](LowerCtx& c) {
    const QOperand a = q_operand(c, 0, 1, 2), b = q_operand(c, 3, 4, 5);
    if (a.x->dtype != b.x->dtype) c.error("A and B have different types");
    const TensorBoxPtr zp = c.has(7) ? scalar_param(c, 7) : nullptr;
    return std::vector<TensorBoxPtr>{q_pointwise(
        c, {a, b}, scalar_param(c, 6), zp, a.x->dtype,
        [op](KernelBuilder& k, const std::vector<V>& v) { return k.binary(op, v[0], v[1]); })};
  };
}

// QLinearSigmoid / QLinearLeakyRelu: X, X_scale, X_zero_point, Y_scale, Y_zero_point.
LowerFn q_unary(bool leaky) {
  return [leaky](LowerCtx& c) {
    const QOperand x = q_operand(c, 0, 1, 2);
    const double alpha = c.node.attr_float("alpha", 0.01);
    const TensorBoxPtr zp = c.has(4) ? scalar_param(c, 4) : nullptr;
    return std::vector<TensorBoxPtr>{
        q_pointwise(c, {x}, scalar_param(c, 3), zp, x.x->dtype,
                    [leaky, alpha](KernelBuilder& k, const std::vector<V>& v) {
                      if (!leaky) return k.unary(Op::Sigmoid, v[0]);
                      const V neg = k.binary(Op::Mul, v[0], k.constant(v[0], alpha));
                      return k.where(k.binary(Op::Lt, v[0], k.constant(v[0], 0)), neg, v[0]);
                    })};
  };
}

// QLinearConcat: Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per input.
std::vector<TensorBoxPtr> lower_qlinear_concat(LowerCtx& c) {
  if (c.in.size() < 5 || (c.in.size() - 2) % 3 != 0)
    c.error("needs Y_scale, Y_zero_point and (X, X_scale, X_zero_point) triples");
  const TensorBoxPtr ys = scalar_param(c, 0), yz = scalar_param(c, 1);
  std::vector<TensorBoxPtr> parts;
  for (size_t i = 2; i < c.in.size(); i += 3) {
    const QOperand x = q_operand(c, i, i + 1, i + 2);
    if (x.x->dtype != yz->dtype) c.error("input '", input_name(c, i), "' is not of Y's type");
    parts.push_back(q_pointwise(c, {x}, ys, yz, yz->dtype,
                                [](KernelBuilder&, const std::vector<V>& v) { return v[0]; }));
  }
  const size_t rank = parts[0]->size.size();
  const int axis = c.axis(c.node.attr_int("axis", 0), rank);
  for (const TensorBoxPtr& p : parts) {
    bool ok = p->size.size() == rank;
    for (size_t d = 0; ok && d < rank; ++d)
      ok = static_cast<int>(d) == axis || p->size[d] == parts[0]->size[d];
    if (!ok)
      c.error("inputs ", shape_text(parts[0]->size), " and ", shape_text(p->size),
              " differ outside axis ", axis);
  }
  return {concat_values(c.gl, parts, axis, c.origin())};
}

// A channels_last tensor [N, D..., C] as [N, C, D...] (and back with `back`).
TensorBoxPtr channels_first(const TensorBoxPtr& t, bool back) {
  const int rank = static_cast<int>(t->size.size());
  std::vector<int> perm = {0};
  if (back) {
    for (int d = 2; d < rank; ++d) perm.push_back(d);
    perm.push_back(1);
  } else {
    perm.push_back(rank - 1);
    for (int d = 1; d + 1 < rank; ++d) perm.push_back(d);
  }
  return permute_view(t, perm);
}

// QLinearGlobalAveragePool: (sum(x) - x_zp * count) * (x_scale / (y_scale * count)),
// rounded, plus y_zp: onnxruntime's MlasQLinearGlobalAveragePool.
std::vector<TensorBoxPtr> lower_qlinear_global_average_pool(LowerCtx& c) {
  TensorBoxPtr x = quantized_input(c, 0);
  if (x->size.size() < 3) c.error("X must be [N, C, D...], got ", shape_text(x->size));
  const bool last = c.node.attr_int("channels_last", 0) != 0;
  if (last) x = channels_first(x, false);
  std::vector<int> axes;
  int64_t count = 1;
  for (size_t d = 2; d < x->size.size(); ++d) {
    axes.push_back(static_cast<int>(d));
    count *= x->size[d];
  }
  const TensorBoxPtr sum = make_reduction(c, x, axes, true, ReduceKind::Sum, DType::I32);
  const TensorBoxPtr xs = scalar_param(c, 1), ys = scalar_param(c, 3), yz = scalar_param(c, 4);
  const TensorBoxPtr xz = c.has(2) ? scalar_param(c, 2) : nullptr;
  const QRange r = quant_range(c, yz->dtype, "y_zero_point");
  std::vector<TensorBoxPtr> ins = {sum, xs, ys, yz};
  if (xz) ins.push_back(xz);
  TensorBoxPtr y =
      make_pointwise(c, ins, yz->dtype, [r, count](KernelBuilder& b, const std::vector<V>& v) {
        V acc = b.cast(v[0], ScalarType::I64);
        if (v.size() > 4)
          acc = b.binary(Op::Sub, acc,
                         b.binary(Op::Mul, b.cast(v[4], ScalarType::I64), b.constant_i64(count)));
        const V n = b.constant(ScalarType::F32, static_cast<double>(count));
        const V m = b.binary(Op::Div, b.cast(v[1], ScalarType::F32),
                             b.binary(Op::Mul, b.cast(v[2], ScalarType::F32), n));
        const V real = b.binary(Op::Mul, b.cast(acc, ScalarType::F32), m);
        return quantize_value(b, real, b.constant(ScalarType::F32, 1),
                              b.cast(v[3], ScalarType::I64), r);
      });
  return {last ? channels_first(y, true) : y};
}

// QLinearAveragePool: AveragePool (its attributes) of the dequantized X, quantized.
std::vector<TensorBoxPtr> lower_qlinear_average_pool(LowerCtx& c) {
  const QOperand x = q_operand(c, 0, 1, 2);
  if (x.x->size.size() < 3) c.error("X must be [N, C, D...], got ", shape_text(x.x->size));
  const bool last = c.node.attr_int("channels_last", 0) != 0;
  TensorBoxPtr deq = make_pointwise_box(
      DType::F32, x.x->size,
      [x](KernelBuilder& b, const std::vector<Index>& i) {
        const V zp = x.zero_point ? x.zero_point->load(b, {}) : b.constant_i64(0);
        return dequantize_value(b, x.x->load(b, i), zp, x.scale->load(b, {}));
      },
      c.origin());
  if (last) deq = channels_first(deq, false);
  LowerCtx pool{c.gl, c.node, {deq}, 19};
  TensorBoxPtr pooled = lowering_table().fns.at("AveragePool")(pool)[0];
  if (last) pooled = channels_first(pooled, true);
  const TensorBoxPtr zp = c.has(4) ? scalar_param(c, 4) : nullptr;
  const DType out = zp ? zp->dtype : x.x->dtype;
  const QRange r = quant_range(c, out, "output");
  const TensorBoxPtr ys = scalar_param(c, 3);
  Loader fn = [pooled, ys, zp, r](KernelBuilder& b, const std::vector<Index>& i) {
    const V z = zp ? b.cast(zp->load(b, {}), ScalarType::I64) : b.constant_i64(0);
    return quantize_value(b, pooled->load(b, i), ys->load(b, {}), z, r);
  };
  return {make_pointwise_box(out, pooled->size, fn, c.origin())};
}

}  // namespace

void register_contrib_quant_ops(LoweringTable& t) {
  const std::string ms = std::string(kMicrosoftDomain) + ".";
  t.add(ms + "MatMulIntegerToFloat", lower_matmul_integer_to_float);
  t.add(ms + "DynamicQuantizeMatMul", lower_dynamic_quantize_matmul);
  t.add(ms + "QGemm", lower_qgemm);
  t.add(ms + "QLinearAdd", q_binary(Op::Add));
  t.add(ms + "QLinearMul", q_binary(Op::Mul));
  t.add(ms + "QLinearSigmoid", q_unary(false));
  t.add(ms + "QLinearLeakyRelu", q_unary(true));
  t.add(ms + "QLinearConcat", lower_qlinear_concat);
  t.add(ms + "QLinearGlobalAveragePool", lower_qlinear_global_average_pool);
  t.add(ms + "QLinearAveragePool", lower_qlinear_average_pool);
}

}  // namespace ferrite
