// Softmax and LogSoftmax: max-subtracted, as two reductions and a pointwise epilogue.
// Before opset 13 the input is coerced to 2-D at `axis` and normalised over the trailing
// block; from 13 on over the single axis.
#include "compiler/lower/lowering.h"

namespace ferrite {

TensorBoxPtr softmax_over(const LowerCtx& c, const TensorBoxPtr& x, int axis, bool log) {
  const std::vector<int> axes{axis};
  const TensorBoxPtr& v = x;
  // Neither reduction's result depends on the count of reduced elements.
  TensorBoxPtr m =
      make_reduction(c, v, axes, true, ReduceKind::Max, x->dtype, nullptr, nullptr, true);
  TensorBoxPtr e =
      make_pointwise(c, {v, m}, x->dtype, [](KernelBuilder& b, const std::vector<V>& a) {
        return b.unary(Op::Exp, b.binary(Op::Sub, a[0], a[1]));
      });
  TensorBoxPtr s =
      make_reduction(c, e, axes, true, ReduceKind::Sum, x->dtype, nullptr, nullptr, true);
  TensorBoxPtr out;
  if (log) {
    out = make_pointwise(c, {v, m, s}, x->dtype, [](KernelBuilder& b, const std::vector<V>& a) {
      return b.binary(Op::Sub, b.binary(Op::Sub, a[0], a[1]), b.unary(Op::Log, a[2]));
    });
  } else {
    out = make_pointwise(c, {v, m, s}, x->dtype, [](KernelBuilder& b, const std::vector<V>& a) {
      return b.binary(Op::Div, b.unary(Op::Exp, b.binary(Op::Sub, a[0], a[1])), a[2]);
    });
  }
  return out;
}

namespace {

std::vector<TensorBoxPtr> lower_softmax(LowerCtx& c, bool log) {
  const TensorBoxPtr& x = c.input(0);
  if (!dtype_is_float(x->dtype)) c.unsupported("non-float input");
  const size_t r = x->size.size();
  if (r == 0) c.error("input must have rank >= 1");
  int axis = c.axis(c.node.attr_int("axis", c.opset >= 13 ? -1 : 1), r);
  if (c.opset >= 13) return {softmax_over(c, x, axis, log)};
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < r; ++d) (static_cast<int>(d) < axis ? outer : inner) *= x->size[d];
  TensorBoxPtr v = reshape_view(x, {outer, inner});
  return {reshape_view(softmax_over(c, v, 1, log), x->size)};
}

}  // namespace

void register_softmax_ops(LoweringTable& t) {
  t.add("Softmax", [](LowerCtx& c) { return lower_softmax(c, false); });
  t.add("LogSoftmax", [](LowerCtx& c) { return lower_softmax(c, true); });
}

}  // namespace ferrite
