// The integer contractions of ONNX: MatMulInteger and ConvInteger (int32 sums of operands
// minus their zero points), QLinearMatMul and QLinearConv (those sums requantized: times
// a_scale * b_scale / y_scale, a float32 multiplier per row, column or output channel as
// onnxruntime forms it, rounded half to even, plus y_zero_point, saturated). The sums are
// exact int64 reductions (quant_common.h: integer_matmul, integer_conv) stored as int32.
#include <optional>

#include "compiler/graph/ferrite_ops.h"
#include "compiler/lower/quant_common.h"

namespace ferrite {
namespace {

const TensorBoxPtr& int8_input(const LowerCtx& c, size_t i) {
  const TensorBoxPtr& t = c.input(i);
  if (t->dtype != DType::U8 && t->dtype != DType::I8)
    c.unsupported(c.node.op_type, " on ", dtype_name(t->dtype), " (uint8 and int8 only)");
  return t;
}

// The node's ferrite_saturate range (fold_qdq_pairs: a Relu or Clip absorbed), inside the
// output type's; nullopt without one.
std::optional<QRange> saturate_attr(const LowerCtx& c, size_t zero_point_input) {
  if (!c.node.has_attr(kSaturateAttr)) return std::nullopt;
  const std::vector<int64_t> r = c.node.attr_ints(kSaturateAttr);
  const QRange t = quant_range(c, c.input(zero_point_input)->dtype, "y_zero_point");
  if (r.size() != 2 || static_cast<double>(r[0]) < t.lo || static_cast<double>(r[1]) > t.hi)
    c.error(kSaturateAttr, " must be two ints inside the output type's range");
  return QRange{static_cast<double>(r[0]), static_cast<double>(r[1])};
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
  const std::optional<QRange> sat = saturate_attr(c, 7);
  return {
      requantize(c, acc, sa, sb, scalar_param(c, 6), scalar_param(c, 7), 1, sat ? &*sat : nullptr)};
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
  TensorBoxPtr bias;
  if (c.has(8)) {
    bias = c.input(8);
    if (bias->dtype != DType::I32 || bias->size != std::vector<int64_t>{m})
      c.error("B must be int32 [", m, "], got ", dtype_name(bias->dtype), shape_text(bias->size));
  }
  const IntOperand xo{x, scalar_param(c, 2)}, wo{w, channel_param(c, 5, rank + 1, m)};
  const TensorBoxPtr sx = scalar_param(c, 1), sw = channel_param(c, 4, rank, m);
  const TensorBoxPtr sy = scalar_param(c, 6), zy = scalar_param(c, 7);
  const std::optional<QRange> sat = saturate_attr(c, 7);
  const ConvRequant rq{requant_multiplier(c, sx, sw, sy), zy,
                       sat ? *sat : quant_range(c, zy->dtype, "y_zero_point")};
  if (TensorBoxPtr y = requantized_conv(c, xo, wo, bias, rq)) return {y};
  return {requantize(c, integer_conv(c, xo, wo, bias), sx, sw, sy, zy, 1, sat ? &*sat : nullptr)};
}

}  // namespace

void register_qlinear_ops(LoweringTable& t) {
  t.add("MatMulInteger", lower_matmul_integer);
  t.add("QLinearMatMul", lower_qlinear_matmul);
  t.add("ConvInteger", lower_conv_integer);
  t.add("QLinearConv", lower_qlinear_conv);
}

}  // namespace ferrite
