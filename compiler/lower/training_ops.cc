// ONNX's optimizers (ai.onnx.preview.training 1): Adagrad, Momentum (standard and Nesterov)
// and Adam, each updating n tensors from a learning rate R and an update count T (scalars),
// pointwise per tensor in float32, as the operators' definitions write them:
//   g' = norm_coefficient * x + g
//   Adagrad:  h' = h + g'^2;  x' = x - R / (1 + T * decay_factor) * g' / (sqrt(h') + epsilon)
//   Momentum: v' = alpha * v + (T > 0 ? beta : 1) * g';  x' = x - R * v' (standard) or
//             x - R * (g' + alpha * v') (nesterov)
//   Adam:     v' = alpha * v + (1 - alpha) * g';  h' = beta * h + (1 - beta) * g'^2;
//             x' = (1 - norm_coefficient_post) * (x - R_t * v' / (sqrt(h') + epsilon)),
//             R_t = R * sqrt(1 - beta^T) / (1 - alpha^T) when T > 0, else R.
#include "compiler/lower/lowering.h"

namespace ferrite {
namespace {

// The optimizer's inputs: R and T as rank-0 views, then `groups` lists of n tensors each.
struct Optimizer {
  TensorBoxPtr r, t;
  size_t n = 0;
  std::vector<std::vector<TensorBoxPtr>> groups;  // [group][tensor]
};

Optimizer read_optimizer(const LowerCtx& c, size_t groups) {
  Optimizer o;
  const size_t count = c.in.size();
  if (count < 2 + groups || (count - 2) % groups)
    c.error("needs R, T and ", groups, " lists of tensors of one length, got ", count, " inputs");
  o.n = (count - 2) / groups;
  if (c.node.outputs.size() > o.n * (groups == 4 ? 3 : 2))
    c.error("has more outputs than its ", o.n, " tensors give");
  for (size_t i = 0; i < 2; ++i) {
    if (c.input(i)->elements() != 1 || c.input(i)->size.size() > 1)
      c.error(i ? "T" : "R", " must be a scalar");
  }
  o.r = reshape_view(c.input(0), {});
  o.t = reshape_view(c.input(1), {});
  if (!dtype_is_float(o.r->dtype)) c.error("R must be a float scalar");
  if (o.t->dtype != DType::I64) c.error("T must be an int64 scalar");
  o.groups.resize(groups);
  for (size_t g = 0; g < groups; ++g) {
    for (size_t k = 0; k < o.n; ++k) {
      const TensorBoxPtr& x = c.input(2 + g * o.n + k);
      if (x->dtype != DType::F32) c.unsupported("tensors of type ", dtype_name(x->dtype));
      if (g && x->size != o.groups[0][k]->size)
        c.error("tensor ", k, " of list ", g, " differs in shape from its X");
      o.groups[g].push_back(x);
    }
  }
  return o;
}

V f32(KernelBuilder& b, double v) {
  return b.constant(ScalarType::F32, v);
}

// norm_coefficient * x + g.
V regularized(KernelBuilder& b, double norm, V x, V g) {
  return b.binary(Op::Add, b.binary(Op::Mul, f32(b, norm), x), g);
}

// Output k of `outs` (n per list, in list order) for each of the optimizer's tensors: the
// pointwise `fn` over (r, t, the tensor's entry of every group), returning each list's value.
using Update = std::function<std::vector<V>(KernelBuilder&, V r, V t, const std::vector<V>&)>;

std::vector<TensorBoxPtr> updates(const LowerCtx& c, const Optimizer& o, size_t outs, Update fn) {
  std::vector<TensorBoxPtr> result(outs * o.n);
  for (size_t k = 0; k < o.n; ++k) {
    std::vector<TensorBoxPtr> ins{o.r, o.t};
    for (const auto& group : o.groups) ins.push_back(group[k]);
    for (size_t which = 0; which < outs; ++which) {
      result[which * o.n + k] = make_pointwise(
          c, ins, DType::F32, [fn, which](KernelBuilder& b, const std::vector<V>& v) {
            const V r = b.cast(v[0], ScalarType::F32), t = v[1];
            return fn(b, r, t, std::vector<V>(v.begin() + 2, v.end()))[which];
          });
    }
  }
  return result;
}

std::vector<TensorBoxPtr> lower_adagrad(LowerCtx& c) {
  const Optimizer o = read_optimizer(c, 3);
  const double decay = c.node.attr_float("decay_factor", 0.0);
  const double eps = c.node.attr_float("epsilon", 1e-6);
  const double norm = c.node.attr_float("norm_coefficient", 0.0);
  return updates(c, o, 2, [=](KernelBuilder& b, V r, V t, const std::vector<V>& v) {
    const V rate = b.binary(
        Op::Div, r,
        b.binary(Op::Add, f32(b, 1), b.binary(Op::Mul, b.cast(t, ScalarType::F32), f32(b, decay))));
    const V g = regularized(b, norm, v[0], v[1]);
    const V h = b.binary(Op::Add, v[2], b.binary(Op::Mul, g, g));
    const V denom = b.binary(Op::Add, b.unary(Op::Sqrt, h), f32(b, eps));
    const V x = b.binary(Op::Sub, v[0], b.binary(Op::Div, b.binary(Op::Mul, rate, g), denom));
    return std::vector<V>{x, h};
  });
}

std::vector<TensorBoxPtr> lower_momentum(LowerCtx& c) {
  const Optimizer o = read_optimizer(c, 3);
  const double alpha = c.node.attr_float("alpha", 0.0), beta = c.node.attr_float("beta", 0.0);
  const double norm = c.node.attr_float("norm_coefficient", 0.0);
  const std::string mode = c.node.attr_string("mode", "");
  if (mode != "standard" && mode != "nesterov")
    c.error("mode must be standard or nesterov, got '", mode, "'");
  const bool nesterov = mode == "nesterov";
  return updates(c, o, 2, [=](KernelBuilder& b, V r, V t, const std::vector<V>& v) {
    const V g = regularized(b, norm, v[0], v[1]);
    const V beta_t = b.where(b.binary(Op::Gt, t, b.constant_i64(0)), f32(b, beta), f32(b, 1));
    const V vel =
        b.binary(Op::Add, b.binary(Op::Mul, f32(b, alpha), v[2]), b.binary(Op::Mul, beta_t, g));
    const V step = nesterov ? b.binary(Op::Add, g, b.binary(Op::Mul, f32(b, alpha), vel)) : vel;
    return std::vector<V>{b.binary(Op::Sub, v[0], b.binary(Op::Mul, r, step)), vel};
  });
}

std::vector<TensorBoxPtr> lower_adam(LowerCtx& c) {
  const Optimizer o = read_optimizer(c, 4);
  const double alpha = c.node.attr_float("alpha", 0.9), beta = c.node.attr_float("beta", 0.999);
  const double eps = c.node.attr_float("epsilon", 1e-6);
  const double norm = c.node.attr_float("norm_coefficient", 0.0);
  const double post = c.node.attr_float("norm_coefficient_post", 0.0);
  return updates(c, o, 3, [=](KernelBuilder& b, V r, V t, const std::vector<V>& v) {
    const V g = regularized(b, norm, v[0], v[1]);
    const V vel = b.binary(Op::Add, b.binary(Op::Mul, f32(b, alpha), v[2]),
                           b.binary(Op::Mul, f32(b, 1 - alpha), g));
    const V h = b.binary(Op::Add, b.binary(Op::Mul, f32(b, beta), v[3]),
                         b.binary(Op::Mul, f32(b, 1 - beta), b.binary(Op::Mul, g, g)));
    const V tf = b.cast(t, ScalarType::F32);
    const V corrected = b.binary(
        Op::Div,
        b.binary(
            Op::Mul, r,
            b.unary(Op::Sqrt, b.binary(Op::Sub, f32(b, 1), b.binary(Op::Pow, f32(b, beta), tf)))),
        b.binary(Op::Sub, f32(b, 1), b.binary(Op::Pow, f32(b, alpha), tf)));
    const V rate = b.where(b.binary(Op::Gt, t, b.constant_i64(0)), corrected, r);
    const V denom = b.binary(Op::Add, b.unary(Op::Sqrt, h), f32(b, eps));
    const V x = b.binary(Op::Sub, v[0], b.binary(Op::Mul, rate, b.binary(Op::Div, vel, denom)));
    return std::vector<V>{b.binary(Op::Mul, f32(b, 1 - post), x), vel, h};
  });
}

}  // namespace

void register_training_ops(LoweringTable& t) {
  t.add("ai.onnx.preview.training.Adagrad", lower_adagrad);
  t.add("ai.onnx.preview.training.Momentum", lower_momentum);
  t.add("ai.onnx.preview.training.Adam", lower_adam);
}

}  // namespace ferrite
