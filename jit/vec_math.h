// Vector math for generated kernels: f32 transcendental functions emitted inline, on zmm
// (AVX-512) or ymm (AVX2) registers. Each routine computes dst = f(src) lane-wise (dst may
// equal src; both differ from every scratch register), uses at most 4 scratch registers
// (ctx.scratch[0..3]) and, under AVX-512, opmask registers k2..k7, and reads its constants
// from ctx.consts. It leaves src (pow: a and b) and every other register unchanged and uses
// no general-purpose register, no stack and no call. It assumes the default MXCSR (round to
// nearest, no FTZ/DAZ).
//
// Errors are in ulp of the f32 result (the spacing of f32 numbers next to the exact value;
// 2^-149 below FLT_MIN) against the reference (compiler/plan/scalar_ops.h, i.e. <cmath> on
// floats), the exact value being <cmath> in double. The bounds below are asserted by
// tests/unit/jit/vec_math_test.cc; for the unary routines the measured maximum ("max") is over
// all 2^32 inputs (VecMath.DISABLED_ExhaustiveUnary), identical on both ISAs. Special values
// follow the reference: NaN in -> NaN out, and results that are exactly +-0 or +-inf are the
// reference's, sign included.
//
// Both ISAs run the same algorithms and constants; the instructions differ (vec_math*.cc):
//   AVX-512                                   AVX2
//   vrangeps + vfixupimmps: clamp |x|, NaN    vmovaps bound + vminps/vmaxps (x as the second
//     kept (vrangeps alone drops quiet NaN)     operand, which they return for NaN)
//   vscalefps / vscalefpd: 2^n, one rounding  exponent bits by integer shifts; exp scales in
//     into subnormals and overflow              two steps 2^(n/2) 2^(n - n/2) so that one
//                                               multiplication rounds
//   vgetmantps / vgetexpps (subnormals too)   bit arithmetic after scaling subnormals by 2^23
//   vfixupimmps, vfpclassps, opmasks k2..k5   compares into vector masks, vblendvps
//   vrndscaleps, vreduceps                    1.5 * 2^23 added and subtracted, vroundps
//   erf: 16 intervals (vpermps on zmm)        erf: 8 intervals (vpermps on ymm), degree 7
//   vpternlogd for sign copies                vandps + vorps
// Instruction counts below are AVX-512 / AVX2.
#pragma once

#include "jit/vec_context.h"

namespace ferrite {
namespace jit {

// exp: error <= 1.25 ulp (max 1.20). +inf above 88.7228, correctly rounded subnormal results
// down to the underflow to +0 below -103.97. 14 / 24 instructions.
void emit_exp(VecContext& ctx, int dst, int src);

// log: error <= 1.25 ulp (max 1.11), subnormal inputs included. log(+-0) = -inf,
// log(x < 0) = NaN, log(+inf) = +inf, log(1) = +0. 18 / 28 instructions.
void emit_log(VecContext& ctx, int dst, int src);

// tanh: error <= 2.6 ulp (max 2.57, near |x| = 0.06: the rounding of expm1(2x) + 2 and the
// division). Odd (tanh(-0) = -0), tanh(x) = x for tiny x, exactly +-1 for |x| >= 9.1.
// 21 / 25 instructions, one division.
void emit_tanh(VecContext& ctx, int dst, int src);

// sigmoid = x >= 0 ? 1 / (1 + exp(-x)) : e / (1 + e), e = exp(x): error <= 2.5 ulp (max 2.40)
// against that function evaluated exactly. Never overflows; correctly rounded subnormal
// results for x < -87.3. 18 / 23 instructions, one division.
void emit_sigmoid(VecContext& ctx, int dst, int src);

// erf: error <= 1.5 ulp (max 1.48). Odd (erf(-0) = -0), full relative accuracy near 0
// (subnormals included), exactly +-1 for |x| >= 3.92. 21 / 27 instructions, of which 8 / 9
// vpermps coefficient lookups.
void emit_erf(VecContext& ctx, int dst, int src);

// dst = pow(a, b) as std::pow(float, float); dst differs from a and b. Computed in double
// (log2 with 2^-33 relative error, exp2 with 2^-28.5) and rounded once to f32: error <= 1 ulp,
// subnormal results included (max 0.73 over 6.7e7 random pairs spanning the normal and
// subnormal results, VecMath.DISABLED_PowManyRandomPairs, and a grid of special pairs).
// Special operands as C99 Annex F: pow(x, +-0) = 1 and pow(1, y) = 1 (NaN included),
// pow(-1, +-inf) = 1; a negative base with an odd integral exponent gives a negative result,
// with a non-integral finite exponent NaN; pow(+-0, b) and pow(+-inf, b) are 0 or inf,
// negative for a negative base and odd integral b; otherwise NaN propagates.
// 83 / 109 instructions.
void emit_pow(VecContext& ctx, int dst, int a, int b);

}  // namespace jit
}  // namespace ferrite
