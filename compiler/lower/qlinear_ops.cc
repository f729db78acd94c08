// The integer contractions of ONNX: MatMulInteger and ConvInteger (int32 sums of operands
// minus their zero points), QLinearMatMul and QLinearConv (those sums requantized: times
// a_scale * b_scale / y_scale, a float32 multiplier per row, column or output channel as
// onnxruntime forms it, rounded half to even, plus y_zero_point, saturated). The sums are
// exact int64 reductions (quant_common.h: integer_matmul, integer_conv) stored as int32.
#include <string>

#include "compiler/lower/quant_common.h"

namespace ferrite {
namespace {

std::string shape_text(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += str_cat(i ? "," : "", s[i]);
  return t + "]";
}

const TensorBoxPtr& int8_input(const LowerCtx& c, size_t i) {
  const TensorBoxPtr& t = c.input(i);
  if (t->dtype != DType::U8 && t->dtype != DType::I8)
    c.unsupported(c.node.op_type, " on ", dtype_name(t->dtype), " (uint8 and int8 only)");
  return t;
}

// Input `i`, a parameter (zero point or scale) of operand `x` quantized per tensor or per
// "line" along dim `line_dim` of x's last two (a's rows: K-dim 1; b's columns: K-dim 1):
// a scalar or one element, a 1-D tensor of that dim's size, or an N-D tensor broadcasting
// to x with size 1 along the other of the two. Returned broadcastable to x and to the
// product's output alike; null when the input is omitted.
TensorBoxPtr line_param(const LowerCtx& c, size_t i, const TensorBoxPtr& x, bool rows) {
  if (!c.has(i)) return nullptr;
  const TensorBoxPtr& p = c.input(i);
  const std::string name = c.node.inputs[i] ? c.node.inputs[i]->name : "";
  if (p->elements() == 1 && p->size.size() <= 1) return reshape_view(p, {});
  const size_t r = x->size.size();
  if (r < 2) c.error("input '", name, "' ", shape_text(p->size), ": a 1-D operand takes a scalar");
  const int64_t line = x->size[rows ? r - 2 : r - 1];
  if (p->size.size() == 1 && p->size[0] == line) return rows ? reshape_view(p, {line, 1}) : p;
  const size_t other = rows ? r - 1 : r - 2;
  bool ok = p->size.size() == r && p->size[other] == 1;
  for (size_t d = 0; ok && d < r; ++d)
    ok = d == other || p->size[d] == x->size[d] || p->size[d] == 1;
  if (!ok) {
    c.error("input '", name, "' ", shape_text(p->size), " is not per tensor or per ",
            rows ? "row" : "column", " of ", shape_text(x->size));
  }
  return p;
}

// y = saturate(round(acc * (s1 * s2 / ys)) + yz): the requantization of an int32 sum.
TensorBoxPtr requantize(const LowerCtx& c, const TensorBoxPtr& acc, const TensorBoxPtr& s1,
                        const TensorBoxPtr& s2, const TensorBoxPtr& ys, const TensorBoxPtr& yz) {
  const QRange r = quant_range(c, yz->dtype, "y_zero_point");
  for (const TensorBoxPtr& s : {s1, s2, ys}) {
    if (!dtype_is_float(s->dtype) || s->dtype == DType::F64)
      c.unsupported("scales of type ", dtype_name(s->dtype));
  }
  return make_pointwise(c, {acc, s1, s2, ys, yz}, yz->dtype,
                        [r](KernelBuilder& b, const std::vector<V>& v) {
                          const V m = b.binary(Op::Div, b.binary(Op::Mul, v[1], v[2]), v[3]);
                          const V real = b.binary(Op::Mul, b.cast(v[0], ScalarType::F32), m);
                          return quantize_value(b, real, b.constant(ScalarType::F32, 1),
                                                b.cast(v[4], ScalarType::I64), r);
                        });
}

// A per-tensor parameter (a scalar or one element), as a rank-0 view.
TensorBoxPtr scalar_param(const LowerCtx& c, size_t i) {
  const TensorBoxPtr& p = c.input(i);
  if (p->elements() != 1 || p->size.size() > 1) {
    c.error("input '", c.node.inputs[i] ? c.node.inputs[i]->name : "", "' ", shape_text(p->size),
            " must be a scalar (per tensor)");
  }
  return reshape_view(p, {});
}

// A convolution's weight parameter: per tensor, or 1-D per output channel, as a view of
// rank `rank` that broadcasts against W ([M, C / group, k...], rank `rank`), or of rank
// `rank` - 1 that broadcasts against the output ([N, M, spatial...]).
TensorBoxPtr channel_param(const LowerCtx& c, size_t i, size_t rank, int64_t channels) {
  if (!c.has(i)) return nullptr;
  const TensorBoxPtr& p = c.input(i);
  if (p->elements() == 1 && p->size.size() <= 1) return reshape_view(p, {});
  if (p->size.size() != 1 || p->size[0] != channels) {
    c.error("input '", c.node.inputs[i] ? c.node.inputs[i]->name : "", "' ", shape_text(p->size),
            " must be a scalar or one per output channel (", channels, ")");
  }
  std::vector<int64_t> shape(rank - 1, 1);
  shape[0] = channels;
  return reshape_view(p, shape);
}

std::vector<TensorBoxPtr> lower_matmul_integer(LowerCtx& c) {
  const TensorBoxPtr &a = int8_input(c, 0), &b = int8_input(c, 1);
  for (size_t i : {size_t{2}, size_t{3}}) {
    if (c.has(i) && c.input(i)->dtype != c.input(i - 2)->dtype)
      c.error("zero point ", i - 2, "'s type differs from its operand's");
  }
  return {integer_matmul(c, {a, line_param(c, 2, a, true)}, {b, line_param(c, 3, b, false)})};
}

std::vector<TensorBoxPtr> lower_qlinear_matmul(LowerCtx& c) {
  const TensorBoxPtr &a = int8_input(c, 0), &b = int8_input(c, 3);
  const TensorBoxPtr acc =
      integer_matmul(c, {a, line_param(c, 2, a, true)}, {b, line_param(c, 5, b, false)});
  const TensorBoxPtr sa = line_param(c, 1, a, true), sb = line_param(c, 4, b, false);
  return {requantize(c, acc, sa, sb, scalar_param(c, 6), scalar_param(c, 7))};
}

std::vector<TensorBoxPtr> lower_conv_integer(LowerCtx& c) {
  const TensorBoxPtr &x = int8_input(c, 0), &w = int8_input(c, 1);
  const size_t rank = x->size.size();
  if (rank < 3) c.error("X must be [N, C, D...], got ", shape_text(x->size));
  const TensorBoxPtr xz = c.has(2) ? scalar_param(c, 2) : nullptr;
  const TensorBoxPtr wz = channel_param(c, 3, rank + 1, w->size.empty() ? 0 : w->size[0]);
  return {integer_conv(c, {x, xz}, {w, wz})};
}

std::vector<TensorBoxPtr> lower_qlinear_conv(LowerCtx& c) {
  const TensorBoxPtr &x = int8_input(c, 0), &w = int8_input(c, 3);
  const size_t rank = x->size.size();
  if (rank < 3) c.error("X must be [N, C, D...], got ", shape_text(x->size));
  const int64_t m = w->size.empty() ? 0 : w->size[0];
  TensorBoxPtr acc =
      integer_conv(c, {x, scalar_param(c, 2)}, {w, channel_param(c, 5, rank + 1, m)});
  if (c.has(8)) {
    const TensorBoxPtr& bias = c.input(8);
    if (bias->dtype != DType::I32 || bias->size != std::vector<int64_t>{m})
      c.error("B must be int32 [", m, "], got ", dtype_name(bias->dtype), shape_text(bias->size));
    std::vector<int64_t> shape(rank - 1, 1);
    shape[0] = m;
    acc = make_pointwise(c, {acc, reshape_view(bias, shape)}, DType::I32,
                         [](KernelBuilder& b, const std::vector<V>& v) {
                           return b.binary(Op::Add, v[0], b.cast(v[1], ScalarType::I64));
                         });
  }
  return {requantize(c, acc, scalar_param(c, 1), channel_param(c, 4, rank, m), scalar_param(c, 6),
                     scalar_param(c, 7))};
}

}  // namespace

void register_qlinear_ops(LoweringTable& t) {
  t.add("MatMulInteger", lower_matmul_integer);
  t.add("QLinearMatMul", lower_qlinear_matmul);
  t.add("ConvInteger", lower_conv_integer);
  t.add("QLinearConv", lower_qlinear_conv);
}

}  // namespace ferrite
