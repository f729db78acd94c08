// Fused epilogues of the Conv, ConvTranspose and MatMul externs (oneDNN's "post-ops", as in
// Inductor's mkldnn _convolution_pointwise / _linear_pointwise). The op computes its result
// y (bias included); then each post-op, in order, replaces every output element y by
//
//   Relu, Clip(alpha, beta), LeakyRelu(alpha), Elu(alpha), HardSigmoid(alpha, beta),
//   HardSwish, Sigmoid, Tanh, Silu, GeluErf, GeluTanh   the ONNX activation of that name
//   Linear(alpha, beta)                                 alpha * y + beta
//   Add, Sub, Mul, Div, Max, Min                        y op t   (Sub: y - t, Div: y / t)
//
// Each kind's formula is written once, in compiler/plan/activations.h (act::post_op_k), in
// the Kernel contract's ops: the lowering builds the unfused ONNX op from the same formula,
// the reference and portable backends evaluate it (apply_*_post_op here, and the portable
// epilogue on vectors), and oneDNN maps each kind to its own algorithm (dnnl_post_ops.cc).
//
// t is the element of call.inputs[input] at the output element's coordinates: that
// TensorRef has the output's shape, with stride 0 along the dims it is broadcast over (a
// per-channel bias, a residual of the same shape, a scalar). Computed in float.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ferrite {

enum class PostOpKind : uint8_t {
  Relu,
  Clip,
  LeakyRelu,
  Elu,
  HardSigmoid,
  HardSwish,
  Sigmoid,
  Tanh,
  Silu,
  GeluErf,
  GeluTanh,
  Linear,
  // binary: y op t
  Add,
  Sub,
  Mul,
  Div,
  Max,
  Min,
};
constexpr int kPostOpKinds = static_cast<int>(PostOpKind::Min) + 1;

struct PostOp {
  PostOpKind kind = PostOpKind::Relu;
  float alpha = 0, beta = 0;  // Clip, LeakyRelu, Elu, HardSigmoid, Linear
  int32_t input = -1;         // binary kinds: the index of t in call.inputs; -1 otherwise

  bool operator==(const PostOp& o) const {
    return kind == o.kind && alpha == o.alpha && beta == o.beta && input == o.input;
  }
};

bool post_op_is_binary(PostOpKind kind);
const char* post_op_name(PostOpKind kind);
// "relu", "clip(0, 6)", "add(in 2)", ...
std::string post_op_text(const PostOp& p);

// The meaning of one unary post-op (p.kind not binary) and of one binary one.
float apply_unary_post_op(const PostOp& p, float y);
float apply_binary_post_op(PostOpKind kind, float y, float t);

}  // namespace ferrite
