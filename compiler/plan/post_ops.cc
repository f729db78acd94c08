#include "compiler/plan/post_ops.h"

#include <cmath>
#include <cstdio>

#include "compiler/plan/error.h"
#include "compiler/plan/externs/extern_op.h"
#include "compiler/plan/scalar_ops.h"

namespace ferrite {
namespace {

// The same scalar functions the reference uses for the unfused ops.
float unary(Op op, float y) {
  return eval_unary(op, ScalarType::F32, scalar_f32(y)).f32;
}

float clip01(float v) {
  return std::fmin(std::fmax(v, 0.0f), 1.0f);
}

}  // namespace

bool post_op_is_binary(PostOpKind kind) {
  return kind >= PostOpKind::Add;
}

const char* post_op_name(PostOpKind kind) {
  static const char* const names[kPostOpKinds] = {
      "relu",    "clip", "leaky_relu", "elu",      "hard_sigmoid", "hard_swish",
      "sigmoid", "tanh", "silu",       "gelu_erf", "gelu_tanh",    "linear",
      "add",     "sub",  "mul",        "div",      "max",          "min"};
  const int i = static_cast<int>(kind);
  return i < kPostOpKinds ? names[i] : "?";
}

std::string post_op_text(const PostOp& p) {
  std::string s = post_op_name(p.kind);
  if (post_op_is_binary(p.kind)) return str_cat(s, "(in ", p.input, ")");
  switch (p.kind) {
    case PostOpKind::Clip:
    case PostOpKind::HardSigmoid:
    case PostOpKind::Linear: {
      char buf[64];
      std::snprintf(buf, sizeof buf, "(%.9g, %.9g)", static_cast<double>(p.alpha),
                    static_cast<double>(p.beta));
      return s + buf;
    }
    case PostOpKind::LeakyRelu:
    case PostOpKind::Elu: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "(%.9g)", static_cast<double>(p.alpha));
      return s + buf;
    }
    default:
      return s;
  }
}

float apply_unary_post_op(const PostOp& p, float y) {
  switch (p.kind) {
    case PostOpKind::Relu:
      return y < 0 ? 0.0f : y;
    case PostOpKind::Clip:
      return std::fmin(std::fmax(y, p.alpha), p.beta);
    case PostOpKind::LeakyRelu:
      return y >= 0 ? y : p.alpha * y;
    case PostOpKind::Elu:
      return y > 0 ? y : p.alpha * (unary(Op::Exp, y) - 1.0f);
    case PostOpKind::HardSigmoid:
      return clip01(p.alpha * y + p.beta);
    case PostOpKind::HardSwish:
      return y * clip01(y * (1.0f / 6.0f) + 0.5f);
    case PostOpKind::Sigmoid:
      return unary(Op::Sigmoid, y);
    case PostOpKind::Tanh:
      return unary(Op::Tanh, y);
    case PostOpKind::Silu:
      return y * unary(Op::Sigmoid, y);
    case PostOpKind::GeluErf:
      return 0.5f * y * (1.0f + unary(Op::Erf, y * 0.70710678118654752f));
    case PostOpKind::GeluTanh: {
      const float inner = 0.79788456080286536f * (y + 0.044715f * y * y * y);
      return 0.5f * y * (1.0f + unary(Op::Tanh, inner));
    }
    case PostOpKind::Linear:
      return p.alpha * y + p.beta;
    default:
      fail("post-op ", post_op_name(p.kind), " is not unary");
  }
}

float apply_binary_post_op(PostOpKind kind, float y, float t) {
  switch (kind) {
    case PostOpKind::Add:
      return y + t;
    case PostOpKind::Sub:
      return y - t;
    case PostOpKind::Mul:
      return y * t;
    case PostOpKind::Div:
      return y / t;
    case PostOpKind::Max:
      return eval_binary(Op::Max, ScalarType::F32, scalar_f32(y), scalar_f32(t)).f32;
    case PostOpKind::Min:
      return eval_binary(Op::Min, ScalarType::F32, scalar_f32(y), scalar_f32(t)).f32;
    default:
      fail("post-op ", post_op_name(kind), " is not binary");
  }
}

bool extern_takes_post_ops(const std::string& op) {
  std::optional<ExternOp> x = find_extern_op(op);
  return x && extern_op_info(*x).takes_post_ops;
}

}  // namespace ferrite
