#include "compiler/plan/post_ops.h"

#include <cstdio>

#include "compiler/plan/activations.h"
#include "compiler/plan/error.h"
#include "compiler/plan/externs/extern_op.h"
#include "compiler/plan/scalar_ops.h"

namespace ferrite {
namespace {

// The activations of activations.h evaluated on floats with the scalar semantics the
// reference uses for the unfused ops (scalar_ops.h); a comparison gives 1 or 0.
struct ScalarF32 {
  using V = float;
  V unary(Op op, V x) const { return eval_unary(op, ScalarType::F32, scalar_f32(x)).f32; }
  V binary(Op op, V a, V b) const {
    const Scalar r = eval_binary(op, ScalarType::F32, scalar_f32(a), scalar_f32(b));
    return op_is_compare(op) ? (r.b ? 1.0f : 0.0f) : r.f32;
  }
  V where(V cond, V a, V b) const { return cond != 0 ? a : b; }
  V constant(V, double v) const { return static_cast<float>(v); }
};

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
  if (post_op_is_binary(p.kind)) fail("post-op ", post_op_name(p.kind), " is not unary");
  ScalarF32 b;
  return act::post_op(b, p, y, y);
}

float apply_binary_post_op(PostOpKind kind, float y, float t) {
  if (!post_op_is_binary(kind)) fail("post-op ", post_op_name(kind), " is not binary");
  ScalarF32 b;
  return act::post_op(b, PostOp{kind}, y, t);
}

}  // namespace ferrite
