// Reductions: ReduceSum/Mean/Max/Min/Prod and the L1/L2/LogSum/LogSumExp/SumSquare
// variants, ArgMax/ArgMin. Each is a Reduction with an optional prologue (applied to each
// element, fused into the reduction loop) and post op (applied to the result).
#include <algorithm>
#include <cmath>

#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

using Fn1 = std::function<V(KernelBuilder&, V)>;

// The axes of a Reduce* node: the `axes` input (ReduceSum from opset 13) or attribute.
// Returns false for "no-op" (empty axes with noop_with_empty_axes).
bool reduce_axes(const LowerCtx& c, std::vector<int>* axes) {
  const size_t rank = c.input(0)->size.size();
  std::vector<int64_t> raw;
  bool from_input = c.node.op_type == "ReduceSum" && c.opset >= 13;
  if (from_input) {
    if (c.has(1)) raw = c.const_ints(1);
  } else {
    raw = c.node.attr_ints("axes");
  }
  axes->clear();
  if (raw.empty()) {
    if (c.node.attr_int("noop_with_empty_axes", 0) != 0) return false;
    for (size_t d = 0; d < rank; ++d) axes->push_back(static_cast<int>(d));
    return true;
  }
  for (int64_t a : raw) axes->push_back(c.axis(a, rank));
  return true;
}

int64_t reduced_count(const TensorBoxPtr& x, const std::vector<int>& axes) {
  int64_t n = 1;
  for (int a : axes) n *= x->size[a];
  return n;
}

LowerFn reduce_fn(ReduceKind kind, Fn1 prologue, Fn1 post, bool mean) {
  return [=](LowerCtx& c) -> std::vector<TensorBoxPtr> {
    const TensorBoxPtr& x = c.input(0);
    if (x->dtype == DType::Bool) c.unsupported("bool input");
    std::vector<int> axes;
    if (!reduce_axes(c, &axes)) return {x};
    bool keep = c.node.attr_int("keepdims", 1) != 0;
    Fn1 p = post;
    if (mean) {
      double n = static_cast<double>(reduced_count(x, axes));
      p = [n](KernelBuilder& b, V v) { return b.binary(Op::Div, v, b.constant(v.type, n)); };
    }
    return {make_reduction(c, x, axes, keep, kind, x->dtype, prologue, p)};
  };
}

V square(KernelBuilder& b, V v) {
  return b.binary(Op::Mul, v, v);
}

std::vector<TensorBoxPtr> lower_logsumexp(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (!dtype_is_float(x->dtype)) c.unsupported("non-float input");
  std::vector<int> axes;
  if (!reduce_axes(c, &axes)) return {x};
  bool keep = c.node.attr_int("keepdims", 1) != 0;
  // log(sum(exp(x - m))) + m with m = max(x): exact for large |x|.
  TensorBoxPtr m = make_reduction(c, x, axes, true, ReduceKind::Max, x->dtype);
  TensorBoxPtr e =
      make_pointwise(c, {x, m}, x->dtype, [](KernelBuilder& b, const std::vector<V>& v) {
        return b.unary(Op::Exp, b.binary(Op::Sub, v[0], v[1]));
      });
  TensorBoxPtr s = make_reduction(c, e, axes, true, ReduceKind::Sum, x->dtype);
  TensorBoxPtr r =
      make_pointwise(c, {s, m}, x->dtype, [](KernelBuilder& b, const std::vector<V>& v) {
        return b.binary(Op::Add, b.unary(Op::Log, v[0]), v[1]);
      });
  if (keep) return {r};
  std::vector<int64_t> out;
  for (size_t d = 0; d < x->size.size(); ++d) {
    if (std::find(axes.begin(), axes.end(), static_cast<int>(d)) == axes.end())
      out.push_back(x->size[d]);
  }
  return {reshape_view(r, out)};
}

LowerFn arg_fn(ReduceKind kind) {
  return [kind](LowerCtx& c) -> std::vector<TensorBoxPtr> {
    TensorBoxPtr x = c.input(0);
    if (x->dtype == DType::Bool) c.unsupported("bool input");
    int axis = c.axis(c.node.attr_int("axis", 0), x->size.size());
    bool keep = c.node.attr_int("keepdims", 1) != 0;
    bool last = c.node.attr_int("select_last_index", 0) != 0;
    int64_t n = x->size[axis];
    if (n == 0) c.error("axis ", axis, " is empty: there is no index to return");
    if (last) {
      // The last extremum is the first one of the reversed axis.
      x = make_view(x, x->size, [axis, n](const std::vector<Index>& i) {
        std::vector<Index> o = i;
        o[axis] = ix_add(ix_const(n - 1), ix_mul(i[axis], -1));
        return o;
      });
    }
    Fn1 post;
    if (last) {
      post = [n](KernelBuilder& b, V r) {
        return b.binary(Op::Sub, b.constant(ScalarType::I64, static_cast<double>(n - 1)), r);
      };
    }
    return {make_reduction(c, x, {axis}, keep, kind, DType::I64, nullptr, post)};
  };
}

}  // namespace

void register_reduce_ops(LoweringTable& t) {
  t.add("ReduceSum", reduce_fn(ReduceKind::Sum, nullptr, nullptr, false));
  t.add("ReduceMean", reduce_fn(ReduceKind::Sum, nullptr, nullptr, true));
  t.add("ReduceMax", reduce_fn(ReduceKind::Max, nullptr, nullptr, false));
  t.add("ReduceMin", reduce_fn(ReduceKind::Min, nullptr, nullptr, false));
  t.add("ReduceProd", reduce_fn(ReduceKind::Prod, nullptr, nullptr, false));
  t.add("ReduceSumSquare", reduce_fn(ReduceKind::Sum, square, nullptr, false));
  t.add("ReduceL1", reduce_fn(
                        ReduceKind::Sum, [](KernelBuilder& b, V v) { return b.unary(Op::Abs, v); },
                        nullptr, false));
  t.add("ReduceL2", reduce_fn(
                        ReduceKind::Sum, square,
                        [](KernelBuilder& b, V v) {
                          // sqrt in the element type (ints: via double, truncated)
                          if (v.type == ScalarType::I64) {
                            return b.cast(b.unary(Op::Sqrt, b.cast(v, ScalarType::F64)),
                                          ScalarType::I64);
                          }
                          return b.unary(Op::Sqrt, v);
                        },
                        false));
  t.add("ReduceLogSum", reduce_fn(
                            ReduceKind::Sum, nullptr,
                            [](KernelBuilder& b, V v) { return b.unary(Op::Log, v); }, false));
  t.add("ReduceLogSumExp", lower_logsumexp);
  t.add("ArgMax", arg_fn(ReduceKind::ArgMax));
  t.add("ArgMin", arg_fn(ReduceKind::ArgMin));
}

}  // namespace ferrite
