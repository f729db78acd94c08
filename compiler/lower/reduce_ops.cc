// Reductions: ReduceSum/Mean/Max/Min/Prod and the L1/L2/LogSum/LogSumExp/SumSquare
// variants, ArgMax/ArgMin. Each is a Reduction with an optional prologue (applied to each
// element, fused into the reduction loop) and post op (applied to the result).
//
// Axes come from the `axes` attribute, or from the second input for ReduceSum from opset 13
// and every other Reduce* from opset 18 (a model input there is specialized per value, as
// other shape-like inputs are). With noop_with_empty_axes and no axes, the reduction is over
// no axis at all: each element alone, so the prologue and post op still apply (the ONNX
// reference's np.sum(np.square(x), axis=()) for ReduceSumSquare). A reduction over an empty
// set (a reduced dim of size 0) is a constant: the operation's identity in the output dtype
// (0, 1, -inf or the dtype's lowest, +inf or its highest, false/true for bool).
#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/lower/lowering.h"
#include "compiler/plan/scalar_ops.h"

namespace ferrite {
namespace {

using Fn1 = std::function<V(KernelBuilder&, V)>;

// What one Reduce* op computes: post(reduce(kind, prologue(x))), and on an empty set the
// constant `empty` (±inf become the dtype's extremes for integers and bool; NaN, a mean's
// 0/0, has no integer form).
struct ReduceSpec {
  ReduceKind kind = ReduceKind::Sum;
  Fn1 prologue, post;
  bool mean = false;
  double empty = 0;
};

bool axes_from_input(const LowerCtx& c) {
  return c.opset >= 18 || (c.node.op_type == "ReduceSum" && c.opset >= 13);
}

// The sorted axes of a Reduce* node (every axis when none are given); empty for "no-op"
// (no axes with noop_with_empty_axes).
std::vector<int> reduce_axes(const LowerCtx& c) {
  const size_t rank = c.input(0)->size.size();
  std::vector<int64_t> raw;
  if (axes_from_input(c)) {
    if (c.has(1)) raw = c.const_ints(1);
  } else {
    raw = c.node.attr_ints("axes");
  }
  std::vector<int> axes;
  if (raw.empty()) {
    if (c.node.attr_int("noop_with_empty_axes", 0) != 0) return axes;
    for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int>(d));
    return axes;
  }
  for (int64_t a : raw) axes.push_back(c.axis(a, rank));
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
    c.error("axes repeat an axis");
  }
  return axes;
}

std::vector<int64_t> reduced_shape(const TensorBoxPtr& x, const std::vector<int>& axes, bool keep) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < x->size.size(); ++d) {
    if (std::find(axes.begin(), axes.end(), static_cast<int>(d)) == axes.end()) {
      out.push_back(x->size[d]);
    } else if (keep) {
      out.push_back(1);
    }
  }
  return out;
}

// The number of elements over `axes`; 0 if any is empty (then the others' product may
// not fit).
int64_t reduced_count(const TensorBoxPtr& x, const std::vector<int>& axes) {
  for (int a : axes) {
    if (x->size[a] == 0) return 0;
  }
  int64_t n = 1;
  for (int a : axes) n *= x->size[a];
  return n;
}

std::vector<int> other_axes(const TensorBoxPtr& x, int axis) {
  std::vector<int> axes;
  for (int d = 0; d < static_cast<int>(x->size.size()); ++d) {
    if (d != axis) axes.push_back(d);
  }
  return axes;
}

// The lowest and highest values of an integer dtype, as the i64 its elements compute in
// (uint64's highest is all ones, i64 -1, stored back as such).
std::pair<int64_t, int64_t> int_range(DType t) {
  switch (t) {
    case DType::U8:
      return {0, 255};
    case DType::I8:
      return {-128, 127};
    case DType::U16:
      return {0, 65535};
    case DType::I16:
      return {-32768, 32767};
    case DType::U32:
      return {0, 4294967295LL};
    case DType::I32:
      return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    case DType::U64:
      return {0, -1};
    default:
      return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  }
}

// The result of a reduction over an empty set: `value` broadcast to `shape`, in `dt`.
TensorBoxPtr empty_set_result(const LowerCtx& c, DType dt, double value,
                              const std::vector<int64_t>& shape) {
  auto d = std::make_shared<TensorData>();
  d->dtype = dt;
  d->bytes.resize(dtype_size(dt));
  ScalarType from = compute_type(dt);
  Scalar s = scalar_i64(0);
  if (dtype_is_float(dt)) {
    from = ScalarType::F64;
    s = scalar_f64(value);
  } else if (std::isnan(value)) {
    c.error("the mean of an empty set of ", dtype_name(dt), " values is undefined");
  } else if (dt == DType::Bool) {
    s = scalar_bool(value > 0);
  } else {
    const auto range = int_range(dt);
    s = scalar_i64(std::isinf(value) ? (value > 0 ? range.second : range.first)
                                     : static_cast<int64_t>(value));
  }
  store_element(dt, d->bytes.mutable_data(), 0, from, s);
  return expand_view(constant_box(c.gl, d, ""), shape);
}

bool is_extremum(ReduceKind k) {
  return k == ReduceKind::Max || k == ReduceKind::Min;
}

LowerFn reduce_fn(ReduceSpec spec) {
  return [spec](LowerCtx& c) -> std::vector<TensorBoxPtr> {
    const TensorBoxPtr& x = c.input(0);
    // Bool is ordered false < true for ReduceMax/ReduceMin (opset 20).
    if (x->dtype == DType::Bool && !is_extremum(spec.kind)) c.unsupported("bool input");
    const std::vector<int> axes = reduce_axes(c);
    const bool keep = c.node.attr_int("keepdims", 1) != 0;
    if (axes.empty()) {  // over no axis: each element alone
      if (!spec.prologue && !spec.post) return {x};
      return {make_pointwise(c, {x}, x->dtype, [spec](KernelBuilder& b, const std::vector<V>& v) {
        V r = spec.prologue ? spec.prologue(b, v[0]) : v[0];
        return spec.post ? spec.post(b, r) : r;
      })};
    }
    const int64_t n = reduced_count(x, axes);
    if (n == 0) return {empty_set_result(c, x->dtype, spec.empty, reduced_shape(x, axes, keep))};
    Fn1 post = spec.post;
    if (spec.mean) {
      const double count = static_cast<double>(n);
      post = [count](KernelBuilder& b, V v) {
        return b.binary(Op::Div, v, b.constant(v.type, count));
      };
    }
    // Only a mean's post holds the count (n above serves the empty case, never a symbol's).
    return {make_reduction(c, x, axes, keep, spec.kind, x->dtype, spec.prologue, post, !spec.mean)};
  };
}

V square(KernelBuilder& b, V v) {
  return b.binary(Op::Mul, v, v);
}

std::vector<TensorBoxPtr> lower_logsumexp(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (!dtype_is_float(x->dtype)) c.unsupported("non-float input");
  const std::vector<int> axes = reduce_axes(c);
  const bool keep = c.node.attr_int("keepdims", 1) != 0;
  if (axes.empty()) return {x};  // log(exp(x)) of each element alone
  const double inf = std::numeric_limits<double>::infinity();
  if (reduced_count(x, axes) == 0) {
    return {empty_set_result(c, x->dtype, -inf, reduced_shape(x, axes, keep))};
  }
  // log(sum(exp(x - m))) + m with m = max(x): exact for large |x|. An infinite m (a row of
  // -inf, or one +inf) is not subtracted, so that the row gives -inf or +inf, not NaN.
  TensorBoxPtr m = make_reduction(c, x, axes, true, ReduceKind::Max, x->dtype, nullptr,
                                  [](KernelBuilder& b, V v) {
                                    return b.where(b.unary(Op::IsInf, v), b.constant(v.type, 0), v);
                                  });
  TensorBoxPtr e =
      make_pointwise(c, {x, m}, x->dtype, [](KernelBuilder& b, const std::vector<V>& v) {
        return b.unary(Op::Exp, b.binary(Op::Sub, v[0], v[1]));
      });
  TensorBoxPtr s = make_reduction(c, e, axes, true, ReduceKind::Sum, x->dtype);
  TensorBoxPtr r =
      make_pointwise(c, {s, m}, x->dtype, [](KernelBuilder& b, const std::vector<V>& v) {
        return b.binary(Op::Add, b.unary(Op::Log, v[0]), v[1]);
      });
  return {keep ? r : reshape_view(r, reduced_shape(x, axes, false))};
}

LowerFn arg_fn(ReduceKind kind) {
  return [kind](LowerCtx& c) -> std::vector<TensorBoxPtr> {
    TensorBoxPtr x = c.input(0);
    if (x->dtype == DType::Bool) c.unsupported("bool input");
    int axis = c.axis(c.node.attr_int("axis", 0), x->size.size());
    bool keep = c.node.attr_int("keepdims", 1) != 0;
    bool last = c.node.attr_int("select_last_index", 0) != 0;
    int64_t n = x->size[axis];
    if (n == 0 && reduced_count(x, other_axes(x, axis)) != 0) {
      c.error("axis ", axis, " is empty: there is no element to select");
    }
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
  const double inf = std::numeric_limits<double>::infinity();
  const Fn1 abs = [](KernelBuilder& b, V v) { return b.unary(Op::Abs, v); };
  const Fn1 sqrt = [](KernelBuilder& b, V v) {
    // sqrt in the element type (ints: via double, truncated)
    if (v.type == ScalarType::I64) {
      return b.cast(b.unary(Op::Sqrt, b.cast(v, ScalarType::F64)), ScalarType::I64);
    }
    return b.unary(Op::Sqrt, v);
  };
  const Fn1 log = [](KernelBuilder& b, V v) { return b.unary(Op::Log, v); };
  t.add("ReduceSum", reduce_fn({ReduceKind::Sum, nullptr, nullptr, false, 0}));
  t.add("ReduceMean", reduce_fn({ReduceKind::Sum, nullptr, nullptr, true, std::nan("")}));
  t.add("ReduceMax", reduce_fn({ReduceKind::Max, nullptr, nullptr, false, -inf}));
  t.add("ReduceMin", reduce_fn({ReduceKind::Min, nullptr, nullptr, false, inf}));
  t.add("ReduceProd", reduce_fn({ReduceKind::Prod, nullptr, nullptr, false, 1}));
  t.add("ReduceSumSquare", reduce_fn({ReduceKind::Sum, square, nullptr, false, 0}));
  t.add("ReduceL1", reduce_fn({ReduceKind::Sum, abs, nullptr, false, 0}));
  t.add("ReduceL2", reduce_fn({ReduceKind::Sum, square, sqrt, false, 0}));
  t.add("ReduceLogSum", reduce_fn({ReduceKind::Sum, nullptr, log, false, -inf}));
  t.add("ReduceLogSumExp", lower_logsumexp);
  t.add("ArgMax", arg_fn(ReduceKind::ArgMax));
  t.add("ArgMin", arg_fn(ReduceKind::ArgMin));
}

}  // namespace ferrite
