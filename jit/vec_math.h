// Vector math for generated kernels: f32 transcendental functions emitted inline, on zmm
// (AVX-512) or ymm (AVX2) registers. Each routine computes dst = f(src) lane-wise (dst may
// equal src; both differ from every scratch register), uses at most 4 scratch registers
// (ctx.scratch[0..3]) and, under AVX-512, opmask registers k2..k7, and reads its constants
// from ctx.consts. The maximum error against the reference (compiler/plan/scalar_ops.h,
// i.e. <cmath> in f32) is documented per routine and asserted in tests/unit/jit/vec_math_test.cc.
// Special values follow the reference: NaN in -> NaN out, infinities and overflow/underflow
// as <cmath> gives them.
#pragma once

#include "jit/vec_context.h"

namespace ferrite {
namespace jit {

void emit_exp(VecContext& ctx, int dst, int src);
void emit_log(VecContext& ctx, int dst, int src);
void emit_tanh(VecContext& ctx, int dst, int src);
void emit_sigmoid(VecContext& ctx, int dst, int src);
void emit_erf(VecContext& ctx, int dst, int src);
// dst = pow(a, b) as std::pow(float, float): negative bases with integral exponents, zero
// and infinite operands included. dst differs from a and b.
void emit_pow(VecContext& ctx, int dst, int a, int b);

}  // namespace jit
}  // namespace ferrite
