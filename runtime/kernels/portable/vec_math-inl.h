// Per-target vector math shared by the portable loops (simd_f32.cc) and the fused epilogues of
// the GEMM and convolutions (epilogue-inl.h): erf, sigmoid, NaN-propagating max/min, and
// the escape hatch that recomputes rare lanes (NaN, inf, arguments outside a formula's
// accurate range) with a scalar function, so special values match the reference exactly.
// Included once per target, after hwy/highway.h, by files compiled with foreach_target.h.

// Per-target include guard (the Highway convention for -inl.h headers).
#if defined(FERRITE_PORTABLE_VEC_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef FERRITE_PORTABLE_VEC_MATH_INL_H_
#undef FERRITE_PORTABLE_VEC_MATH_INL_H_
#else
#define FERRITE_PORTABLE_VEC_MATH_INL_H_
#endif

#include <cstdint>
#include <cstring>

#include "compiler/plan/scalar_ops.h"

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ferrite {
namespace HWY_NAMESPACE {
namespace vm {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;
constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);

// Lanes where `special` is set are recomputed with scalar(x) (special lanes are rare, so
// the common case costs one mask test).
template <class M, class F>
HWY_INLINE VF FixLanes(DF d, VF x, VF r, M special, F scalar) {
  if (HWY_LIKELY(hn::AllFalse(d, special))) return r;
  HWY_ALIGN float xs[kMaxLanes], rs[kMaxLanes], ms[kMaxLanes];
  hn::Store(x, d, xs);
  hn::Store(r, d, rs);
  hn::Store(hn::VecFromMask(d, special), d, ms);
  for (size_t l = 0; l < hn::Lanes(d); ++l) {
    uint32_t bits;
    std::memcpy(&bits, &ms[l], sizeof bits);
    if (bits) rs[l] = scalar(xs[l]);
  }
  return hn::Load(d, rs);
}

HWY_INLINE hn::Mask<DF> Outside(DF d, VF x, float lo, float hi) {
  // Written as "not inside" so that NaN counts as outside.
  return hn::Not(hn::And(hn::Ge(x, hn::Set(d, lo)), hn::Le(x, hn::Set(d, hi))));
}

// erf(x) = x * P(x^2) / Q(x^2) on [-4, 4] and +-1 beyond: the rational minimax form Eigen
// and XLA use for float. Against double-precision erf on a dense grid of [-5, 5]
// (tests/unit/runtime/kernels/portable/simd_f32_test.cc): max error 5.5 ulp with FMA (AVX3), 6.7
// ulp without (WASM); at most 4e-7 relative.
HWY_INLINE VF Erf(DF d, VF a) {
  const VF x = hn::Min(hn::Max(a, hn::Set(d, -4.0f)), hn::Set(d, 4.0f));
  const VF x2 = hn::Mul(x, x);
  VF p = hn::MulAdd(x2, hn::Set(d, -2.72614225801306e-10f), hn::Set(d, 2.77068142495902e-08f));
  p = hn::MulAdd(x2, p, hn::Set(d, -2.10102402082508e-06f));
  p = hn::MulAdd(x2, p, hn::Set(d, -5.69250639462346e-05f));
  p = hn::MulAdd(x2, p, hn::Set(d, -7.34990630326855e-04f));
  p = hn::MulAdd(x2, p, hn::Set(d, -2.95459980854025e-03f));
  p = hn::MulAdd(x2, p, hn::Set(d, -1.60960333262415e-02f));
  p = hn::Mul(x, p);
  VF q = hn::MulAdd(x2, hn::Set(d, -1.45660718464996e-05f), hn::Set(d, -2.13374055278905e-04f));
  q = hn::MulAdd(x2, q, hn::Set(d, -1.68282697438203e-03f));
  q = hn::MulAdd(x2, q, hn::Set(d, -7.37332916720468e-03f));
  q = hn::MulAdd(x2, q, hn::Set(d, -1.42647390514189e-02f));
  return hn::Div(p, q);
}

// Accurate for |x| <= 87 (callers fix the other lanes).
HWY_INLINE VF Sigmoid(DF d, VF x) {
  // Same split as the scalar form: exp of a non-positive number only.
  const VF e = hn::Exp(d, hn::Neg(hn::Abs(x)));
  const VF r = hn::Div(hn::Set(d, 1.0f), hn::Add(hn::Set(d, 1.0f), e));
  return hn::IfThenElse(hn::Ge(x, hn::Zero(d)), r, hn::Mul(e, r));
}

// scalar_ops' Max/Min: NaN if either operand is NaN.
HWY_INLINE VF MaxNaN(VF a, VF b) {
  return hn::IfThenElse(hn::Or(hn::IsNaN(a), hn::IsNaN(b)), hn::Add(a, b), hn::Max(a, b));
}
HWY_INLINE VF MinNaN(VF a, VF b) {
  return hn::IfThenElse(hn::Or(hn::IsNaN(a), hn::IsNaN(b)), hn::Add(a, b), hn::Min(a, b));
}

// The unary ops of the Kernel contract the activations use (compiler/plan/activations.h),
// as the pointwise kernels (simd_f32.cc) and the fused epilogue (epilogue-inl.h) both
// compute them: a vector formula, and scalar_ops' value for the lanes it does not get
// right (NaN, infinities, and arguments outside its accurate range).
template <Op O>
HWY_INLINE VF UnaryOp(DF d, VF x) {
  auto scalar = [](float v) { return eval_unary(O, ScalarType::F32, scalar_f32(v)).f32; };
  if constexpr (O == Op::Relu) {
    return hn::IfThenZeroElse(hn::Lt(x, hn::Zero(d)), x);
  } else if constexpr (O == Op::Exp) {
    // Below -104 exp rounds to +0 in float (e^-104 < half the least denormal): those lanes
    // (masked attention scores, -1e4 or -inf) stay vectorized; only the denormal range
    // [-104, -87.3), overflow and NaN go scalar.
    const auto tiny = hn::Lt(x, hn::Set(d, -104.0f));
    return FixLanes(d, x, hn::IfThenZeroElse(tiny, hn::Exp(d, x)),
                    hn::AndNot(tiny, Outside(d, x, -87.3f, 88.7f)), scalar);
  } else if constexpr (O == Op::Sigmoid) {
    return FixLanes(d, x, Sigmoid(d, x), Outside(d, x, -87.0f, 87.0f), scalar);
  } else if constexpr (O == Op::Tanh) {
    return FixLanes(d, x, hn::Tanh(d, x), hn::IsNaN(x), scalar);
  } else {
    static_assert(O == Op::Erf, "UnaryOp: no vector formula for this op");
    return FixLanes(d, x, Erf(d, x), hn::IsNaN(x), scalar);
  }
}

}  // namespace vm
}  // namespace HWY_NAMESPACE
}  // namespace ferrite
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
