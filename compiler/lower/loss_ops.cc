// Losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (= LogSoftmax over the
// class axis, then NLL). The class index is a checked index (masked off where it equals
// ignore_index), so a bad label is a run-time error naming the node.
#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

std::string shape_of(const TensorBoxPtr& t) {
  return TensorType{t->dtype, t->size, {}, true}.to_string();
}

std::string dims_of(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += str_cat(i ? "," : "", d[i]);
  return s + "]";
}

// The spec's shapes: input [N, C, d...], target [N, d...] of int32/int64, weight [C] of
// input's type. Every load below relies on them.
void check_operands(const LowerCtx& c, const TensorBoxPtr& input, const TensorBoxPtr& target,
                    const TensorBoxPtr& weight) {
  const std::vector<int64_t>& x = input->size;
  if (x.size() < 2) c.error("input ", shape_of(input), " must have rank >= 2 ([N, C, d...])");
  std::vector<int64_t> want{x[0]};
  want.insert(want.end(), x.begin() + 2, x.end());
  if (target->size != want)
    c.error("target ", shape_of(target), " must have shape ", dims_of(want),
            " ([N, d...] of input ", shape_of(input), ")");
  if (target->dtype != DType::I32 && target->dtype != DType::I64)
    c.error("target must be int32 or int64, got ", dtype_name(target->dtype));
  if (!weight) return;
  if (weight->size != std::vector<int64_t>{x[1]} || weight->dtype != input->dtype)
    c.error("weight ", shape_of(weight), " must have shape [", x[1], "] (one per class) and ",
            "input's type ", dtype_name(input->dtype));
}

// input [N, C, d...], target [N, d...] → reduced loss per `reduction`.
TensorBoxPtr nll(LowerCtx& c, const TensorBoxPtr& input, const TensorBoxPtr& target,
                 const TensorBoxPtr& weight) {
  check_operands(c, input, target, weight);
  const int64_t classes = input->size[1];
  const bool has_ignore = c.node.has_attr("ignore_index");
  const int64_t ignore = c.node.attr_int("ignore_index", 0);
  const std::string reduction = c.node.attr_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    c.error("unknown reduction '", reduction, "'");
  }
  const std::string msg = str_cat(c.origin(), ": target class");
  const DType dt = input->dtype;
  // The class of a target element, and whether it counts (is not ignore_index).
  auto target_class = [=](KernelBuilder& b, const std::vector<Index>& idx, V* keep) {
    V t = b.cast(target->load(b, idx), ScalarType::I64);
    *keep = b.constant(ScalarType::Bool, 1);
    if (has_ignore) {
      V ignored = b.binary(Op::Eq, t, b.constant_i64(ignore));
      *keep = b.unary(Op::Not, ignored);
    }
    return t;
  };
  // The weight of each target element: 0 where ignored, weight[class] or 1 elsewhere.
  Loader w_fn = [=](KernelBuilder& b, const std::vector<Index>& idx) {
    V keep;
    V t = target_class(b, idx, &keep);
    ScalarType ct = compute_type(dt);
    V w = b.constant(ct, 1);
    if (weight) {
      MaskScope scope(b, keep);
      V k = b.check_index(t, classes, msg);
      w = weight->load(b, {ix_value(k.id)});
    }
    return b.where(keep, w, b.constant(ct, 0));
  };
  Loader loss_fn = [=](KernelBuilder& b, const std::vector<Index>& idx) {
    V keep;
    V t = target_class(b, idx, &keep);
    V x;
    {
      MaskScope scope(b, keep);
      V k = b.check_index(t, classes, msg);
      std::vector<Index> in_idx{idx[0], ix_value(k.id)};
      in_idx.insert(in_idx.end(), idx.begin() + 1, idx.end());
      x = input->load(b, in_idx);
    }
    // Where, not a product with 0: the masked-off lanes of x may be inf or NaN.
    V loss = b.unary(Op::Neg, b.binary(Op::Mul, x, w_fn(b, idx)));
    return b.where(keep, loss, b.constant(loss.type, 0));
  };
  TensorBoxPtr loss = make_pointwise_box(dt, target->size, loss_fn, c.origin());
  if (reduction == "none") return loss;
  std::vector<int> all;
  for (size_t d = 0; d < target->size.size(); ++d) all.push_back(static_cast<int>(d));
  TensorBoxPtr sum = make_reduction(c, loss, all, false, ReduceKind::Sum, dt);
  if (reduction == "sum") return sum;
  TensorBoxPtr wsum = make_reduction(c, make_pointwise_box(dt, target->size, w_fn, c.origin()), all,
                                     false, ReduceKind::Sum, dt);
  return make_pointwise(c, {sum, wsum}, dt, [](KernelBuilder& b, const std::vector<V>& v) {
    return b.binary(Op::Div, v[0], v[1]);
  });
}

std::vector<TensorBoxPtr> lower_nll(LowerCtx& c) {
  if (!dtype_is_float(c.input(0)->dtype)) c.unsupported("non-float input");
  return {nll(c, c.input(0), c.input(1), c.has(2) ? c.input(2) : nullptr)};
}

std::vector<TensorBoxPtr> lower_sce(LowerCtx& c) {
  const TensorBoxPtr& scores = c.input(0);
  if (!dtype_is_float(scores->dtype)) c.unsupported("non-float input");
  if (scores->size.size() < 2) c.error("scores must have rank >= 2");
  TensorBoxPtr log_prob = softmax_over(c, scores, 1, true);
  return {nll(c, log_prob, c.input(1), c.has(2) ? c.input(2) : nullptr), log_prob};
}

}  // namespace

void register_loss_ops(LoweringTable& t) {
  t.add("NegativeLogLikelihoodLoss", lower_nll);
  t.add("SoftmaxCrossEntropyLoss", lower_sce);
}

}  // namespace ferrite
