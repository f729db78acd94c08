// The fused epilogue of an extern (compiler/plan/post_ops.h): read from the node's
// ferrite_post_* attributes (set by passes/fuse_extern_epilogues.cc) and attached to the
// ExternNode with its operands as broadcast views of the output's shape.
#include "compiler/graph/post_op_attrs.h"
#include "compiler/lower/lowering.h"

namespace ferrite {

std::vector<LoweredPostOp> node_post_ops(const LowerCtx& c) {
  std::vector<LoweredPostOp> out;
  for (const PostOp& p : read_post_op_attrs(c.node)) {
    LoweredPostOp l{p, nullptr};
    if (post_op_is_binary(p.kind)) l.operand = c.input(static_cast<size_t>(p.input));
    out.push_back(std::move(l));
  }
  return out;
}

namespace {

// Whether `t` broadcasts to `out` (numpy rules, the result no larger than `out`).
bool broadcasts_to(const std::vector<int64_t>& t, const std::vector<int64_t>& out) {
  if (t.size() > out.size()) return false;
  for (size_t i = 0; i < t.size(); ++i)
    if (t[i] != 1 && t[i] != out[out.size() - t.size() + i]) return false;
  return true;
}

// One post-op as loop IR, in float (the formulas of compiler/plan/post_ops.h).
V post_op_value(KernelBuilder& b, const PostOp& p, V y, V t) {
  auto k = [&](double v) { return b.constant(ScalarType::F32, v); };
  auto clip01 = [&](V v) { return b.binary(Op::Min, b.binary(Op::Max, v, k(0)), k(1)); };
  switch (p.kind) {
    case PostOpKind::Relu:
      return b.unary(Op::Relu, y);
    case PostOpKind::Clip:
      return b.binary(Op::Min, b.binary(Op::Max, y, k(p.alpha)), k(p.beta));
    case PostOpKind::LeakyRelu:
      return b.where(b.binary(Op::Ge, y, k(0)), y, b.binary(Op::Mul, y, k(p.alpha)));
    case PostOpKind::Elu:
      return b.where(b.binary(Op::Gt, y, k(0)), y,
                     b.binary(Op::Mul, k(p.alpha), b.binary(Op::Sub, b.unary(Op::Exp, y), k(1))));
    case PostOpKind::HardSigmoid:
      return clip01(b.binary(Op::Add, b.binary(Op::Mul, y, k(p.alpha)), k(p.beta)));
    case PostOpKind::HardSwish:
      return b.binary(Op::Mul, y,
                      clip01(b.binary(Op::Add, b.binary(Op::Mul, y, k(1.0 / 6.0)), k(0.5))));
    case PostOpKind::Sigmoid:
      return b.unary(Op::Sigmoid, y);
    case PostOpKind::Tanh:
      return b.unary(Op::Tanh, y);
    case PostOpKind::Silu:
      return b.binary(Op::Mul, y, b.unary(Op::Sigmoid, y));
    case PostOpKind::GeluErf: {
      V e = b.unary(Op::Erf, b.binary(Op::Mul, y, k(0.70710678118654752)));
      return b.binary(Op::Mul, b.binary(Op::Mul, k(0.5), y), b.binary(Op::Add, k(1), e));
    }
    case PostOpKind::GeluTanh: {
      V cube = b.binary(Op::Mul, b.binary(Op::Mul, y, y), y);
      V inner = b.binary(Op::Mul, k(0.79788456080286536),
                         b.binary(Op::Add, y, b.binary(Op::Mul, k(0.044715), cube)));
      return b.binary(Op::Mul, b.binary(Op::Mul, k(0.5), y),
                      b.binary(Op::Add, k(1), b.unary(Op::Tanh, inner)));
    }
    case PostOpKind::Linear:
      return b.binary(Op::Add, b.binary(Op::Mul, y, k(p.alpha)), k(p.beta));
    case PostOpKind::Add:
      return b.binary(Op::Add, y, t);
    case PostOpKind::Sub:
      return b.binary(Op::Sub, y, t);
    case PostOpKind::Mul:
      return b.binary(Op::Mul, y, t);
    case PostOpKind::Div:
      return b.binary(Op::Div, y, t);
    case PostOpKind::Max:
      return b.binary(Op::Max, y, t);
    case PostOpKind::Min:
      return b.binary(Op::Min, y, t);
  }
  return y;
}

}  // namespace

std::vector<LoweredPostOp> add_post_ops(const LowerCtx& c, const std::vector<LoweredPostOp>& post,
                                        const std::vector<int64_t>& out_size, ExternNode* e) {
  for (size_t i = 0; i < post.size(); ++i) {
    PostOp p = post[i].op;
    if (post_op_is_binary(p.kind)) {
      const TensorBoxPtr& t = post[i].operand;
      if (!t || t->dtype != DType::F32 || !broadcasts_to(t->size, out_size))
        return std::vector<LoweredPostOp>(post.begin() + static_cast<std::ptrdiff_t>(i),
                                          post.end());
      p.input = static_cast<int32_t>(e->inputs.size());
      e->inputs.push_back(c.gl.extern_operand(expand_view(t, out_size)));
    }
    e->post_ops.push_back(p);
  }
  return {};
}

TensorBoxPtr apply_post_ops_pointwise(const LowerCtx& c, TensorBoxPtr y,
                                      const std::vector<LoweredPostOp>& post) {
  for (const LoweredPostOp& l : post) {
    const PostOp p = l.op;
    if (!post_op_is_binary(p.kind)) {
      y = make_pointwise(c, {y}, DType::F32, [p](KernelBuilder& b, const std::vector<V>& v) {
        return post_op_value(b, p, v[0], v[0]);
      });
    } else {
      if (!l.operand || l.operand->dtype != DType::F32)
        c.error("post-op ", post_op_name(p.kind), " needs a float32 operand");
      y = make_pointwise(c, {y, l.operand}, DType::F32,
                         [p](KernelBuilder& b, const std::vector<V>& v) {
                           return post_op_value(b, p, v[0], v[1]);
                         });
    }
  }
  return y;
}

}  // namespace ferrite
