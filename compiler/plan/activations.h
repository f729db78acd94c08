// The activation functions, each written once in the Kernel contract's ops (ops.h), over any
// builder B that gives meaning to those ops:
//   typename B::V                    a value (an IR value, a float, a SIMD vector, ...)
//   V B::unary(Op, V)  V B::binary(Op, V, V)  V B::where(V cond, V then, V else)
//   V B::constant(V like, double)    a constant of like's type
// The lowering instantiates them with its KernelBuilder (the ONNX ops and the post-ops an
// extern could not take become loop IR), the reference post-ops with scalar_ops (post_ops.cc),
// the portable epilogue with Highway vectors. So an activation fused into a Conv or MatMul
// (post_ops.h) means exactly what the same ONNX op means unfused.
#pragma once

#include <type_traits>

#include "compiler/plan/ops.h"
#include "compiler/plan/post_ops.h"

namespace ferrite {
namespace act {

#include "compiler/plan/activations-inl.h"  // IWYU pragma: export

}  // namespace act
}  // namespace ferrite
