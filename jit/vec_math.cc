// Inline f32 transcendental functions for generated kernels (see vec_math.h for the contract
// and the error bounds). Every routine is straight-line vector code: FMA polynomials after a
// Cody-Waite range reduction, constants from the pool, no GPRs, no stack, no calls.
//
// AVX-512 and AVX2 run the same algorithms; vec_math.h lists the instructions that differ.
// The polynomial coefficients are minimax fits (Remez exchange, relative error) on the stated
// intervals, rounded to float.
#include "jit/vec_math.h"

#include "jit/vec_math_emit.h"

namespace ferrite {
namespace jit {
namespace {

using vmath::Emit;
using vmath::k2;
using vmath::Xmm;

// Minimax coefficients (Remez on the stated interval, relative error), highest degree first.
// exp(r) = 1 + r + ... (degree 6), |r| <= ln2/2: 2^-28.4.
const float kExp[] = {0.00140648964f, 0.00837997347f, 0.0416646972f, 0.166663527f,
                      0.50000006f,    1.0f,           1.0f};
// log(1+f) = f + f^2 q(f), f in [-1/4, 1/2): 2^-25.1.
const float kLog[] = {0.0541324951f, -0.120673694f, 0.149839163f, -0.16822812f,
                      0.199770778f,  -0.24993442f,  0.333335489f, -0.500000596f};
// expm1(r) = r + r^2 q(r), |r| <= ln2/2: 2^-26.1.
const float kExpm1[] = {0.00138823956f, 0.00836718082f, 0.041667223f, 0.16666539f, 0.49999997f};

constexpr float kLog2e = 1.44269504f;
// ln2 = kLn2Hi + kLn2Lo; kLn2Hi has 16 significant bits and kLn2Lo > 0, so that x - n*kLn2Hi
// is exact under FMA and e*kLn2Lo has the sign of e (log adds e*kLn2Lo first; e may be -inf).
constexpr float kLn2Hi = 0.693145751953125f;
constexpr float kLn2Lo = 1.42860677e-06f;
constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer in the low bits
constexpr uint32_t kSign = 0x80000000u;

// ---- exp --------------------------------------------------------------------------------
// n = round(x log2e), r = x - n ln2 (two FMA steps, the first exact), exp(x) = 2^n p(r).

void exp_avx512(Emit& e, const Xmm& d, const Xmm& x) {
  auto& g = e.g;
  const Xmm r = e.t(0), n = e.t(1), p = e.t(2);
  e.clamp_abs_keep_nan(r, x, 110.0f, 0);
  g.vmulps(n, r, e.f(kLog2e));
  g.vrndscaleps(n, n, 0x08);  // nearest
  g.vfnmadd231ps(r, n, e.f(kLn2Hi));
  g.vfnmadd231ps(r, n, e.f(kLn2Lo));
  e.horner(p, r, kExp);
  g.vscalefps(d, p, n);  // one rounding: correct overflow to inf and subnormal results
}

// n = round(x log2e) in the low bits of kMagic + x log2e; the scale 2^n is applied as
// 2^floor(n/2) * 2^(n - floor(n/2)): both factors are normal for |n| <= 159, and the second
// multiplication rounds once into the subnormal range or overflows to inf.
void exp_avx2(Emit& e, const Xmm& d, const Xmm& x) {
  auto& g = e.g;
  const Xmm r = e.t(0), m = e.t(1), p = e.t(2), h = e.t(3);
  e.clamp_keep_nan(r, x, -110.0f, 110.0f, m);
  g.vmovaps(m, e.f(kMagic));
  g.vfmadd231ps(m, r, e.f(kLog2e));  // m = kMagic + n
  g.vsubps(p, m, e.f(kMagic));       // n as a float
  g.vfnmadd231ps(r, p, e.f(kLn2Hi));
  g.vfnmadd231ps(r, p, e.f(kLn2Lo));
  e.horner(p, r, kExp);
  g.vpslld(m, m, 23);  // n << 23 (kMagic's own bits shift out)
  g.vpsrad(h, m, 1);
  g.vpand(h, h, e.u(0xFF800000u));  // floor(n/2) << 23
  g.vpsubd(m, m, h);                // (n - floor(n/2)) << 23
  g.vpaddd(h, h, e.u(0x3F800000u));
  g.vpaddd(m, m, e.u(0x3F800000u));
  g.vmulps(p, p, h);
  g.vmulps(d, p, m);
}

// ---- log --------------------------------------------------------------------------------
// x = 2^e m with m in [3/4, 3/2), f = m - 1 (exact), log x = e ln2 + f + f^2 q(f).
// The special inputs are folded into e: e = -inf (x = +-0), NaN (x < 0, NaN), +inf (x = inf);
// then f + f^2 q(f) is finite and the last two FMAs produce the special result.

void log_finish(Emit& e, const Xmm& d, const Xmm& f, const Xmm& ex, const Xmm& f2) {
  auto& g = e.g;
  e.horner(d, f, kLog);
  g.vmulps(f2, f, f);
  g.vfmadd213ps(d, f2, f);  // f + f^2 q(f)
  g.vfmadd231ps(d, ex, e.f(kLn2Lo));
  g.vfmadd231ps(d, ex, e.f(kLn2Hi));
}

void log_avx512(Emit& e, const Xmm& d, const Xmm& x) {
  auto& g = e.g;
  const Xmm f = e.t(0), ex = e.t(1), f2 = e.t(2);
  g.vgetmantps(f, x, 0x03);  // [3/4, 3/2); subnormals are normalized
  g.vgetexpps(ex, x);
  g.vcmpps(k2, f, e.f(1.0f), 0x11);  // LT_OQ: the mantissa was halved, the exponent grows
  g.vaddps(ex | k2, ex, e.f(1.0f));
  // Response per class of x: QNaN -> x, SNaN -> QNaN(x), 0 -> -inf, +1 -> keep, -inf -> NaN,
  // +inf -> +inf, negative -> NaN, positive -> keep.
  g.vfixupimmps(ex, x, e.u(0x03530421u), 0);
  g.vsubps(f, f, e.f(1.0f));
  log_finish(e, d, f, ex, f2);
}

void log_avx2(Emit& e, const Xmm& d, const Xmm& x) {
  auto& g = e.g;
  const Xmm ix = e.t(0), ex = e.t(1), s = e.t(2), c = e.t(3);
  // Subnormal inputs (and 0, negatives: fixed below) are scaled by 2^23 first.
  g.vcmpps(s, x, e.f(1.17549435e-38f), 0x11);  // LT_OQ FLT_MIN
  g.vmulps(ix, x, e.f(8388608.0f));
  g.vblendvps(ix, x, ix, s);
  g.vpsubd(ix, ix, e.u(0x3F400000u));  // bits - bits(0.75): exponent in the high bits
  g.vandps(s, s, e.u(23u << 23));
  g.vpsubd(ex, ix, s);
  g.vpsrad(ex, ex, 23);
  g.vcvtdq2ps(ex, ex);
  g.vpand(ix, ix, e.u(0x007FFFFFu));
  g.vpaddd(ix, ix, e.u(0x3F400000u));  // m in [3/4, 3/2)
  g.vsubps(ix, ix, e.f(1.0f));         // f
  // Specials: sign bit set -> NaN; +-0 -> -inf; +inf or NaN -> x.
  g.vblendvps(ex, ex, e.u(0x7FC00000u), x);
  g.vcmpps(c, x, e.f(0.0f), 0x00);  // EQ_OQ
  g.vblendvps(ex, ex, e.u(0xFF800000u), c);
  g.vcmpps(c, x, e.f(3.40282347e38f), 0x16);  // NLE_UQ FLT_MAX
  g.vblendvps(ex, ex, x, c);
  log_finish(e, d, ix, ex, s);
}

// ---- tanh -------------------------------------------------------------------------------
// tanh x = expm1(2x) / (expm1(2x) + 2) on x clamped to [-9.1, 9.1] (beyond, tanh rounds to +-1):
// no cancellation for small |x| (expm1(2x) ~ 2x) and none for negative x (the denominator is
// in (1, 2]). expm1(2x) = 2^n (expm1(r) + 1) - 1 = 2^n expm1(r) + (2^n - 1), with
// r = 2x - n ln2 and expm1(r) = r + r^2 q(r). The sign of x is or-ed into expm1(2x) so that
// tanh(-0) = -0.

void tanh_core(Emit& e, const Xmm& r, const Xmm& n, const Xmm& q, const Xmm& r2) {
  auto& g = e.g;
  g.vfnmadd231ps(r, n, e.f(kLn2Hi / 2));  // x - n ln2/2, exact
  g.vfnmadd231ps(r, n, e.f(kLn2Lo / 2));
  g.vaddps(r, r, r);  // r = 2x - n ln2
  g.vmulps(r2, r, r);
  e.horner(q, r, kExpm1);
  g.vfmadd213ps(q, r2, r);  // expm1(r)
}

void tanh_avx512(Emit& e, const Xmm& d, const Xmm& x) {
  auto& g = e.g;
  const Xmm r = e.t(0), n = e.t(1), r2 = e.t(2), q = e.t(3);
  e.clamp_abs_keep_nan(r, x, 9.1f, 0);
  g.vmulps(n, r, e.f(2 * kLog2e));
  g.vrndscaleps(n, n, 0x08);
  tanh_core(e, r, n, q, r2);
  g.vmovaps(r2, e.f(1.0f));
  g.vscalefps(r, r2, n);  // s = 2^n
  g.vsubps(n, r, e.f(1.0f));
  g.vfmadd231ps(n, r, q);                // expm1(2x) = s expm1(r) + (s - 1)
  g.vpternlogd(n, x, e.u(kSign), 0xF8);  // n |= x & sign
  g.vaddps(r, n, e.f(2.0f));
  g.vdivps(d, n, r);
}

void tanh_avx2(Emit& e, const Xmm& d, const Xmm& x) {
  auto& g = e.g;
  const Xmm r = e.t(0), m = e.t(1), r2 = e.t(2), q = e.t(3);
  e.clamp_keep_nan(r, x, -9.1f, 9.1f, m);
  g.vmovaps(m, e.f(kMagic));
  g.vfmadd231ps(m, r, e.f(2 * kLog2e));  // kMagic + n
  g.vsubps(r2, m, e.f(kMagic));
  tanh_core(e, r, /*n=*/r2, q, r2);  // n is consumed before r^2 takes its register
  g.vpslld(m, m, 23);
  g.vpaddd(m, m, e.u(0x3F800000u));  // s = 2^n, |n| <= 27
  g.vsubps(r2, m, e.f(1.0f));
  g.vfmadd231ps(r2, m, q);  // expm1(2x)
  g.vandps(r, x, e.u(kSign));
  g.vorps(r2, r2, r);
  g.vaddps(m, r2, e.f(2.0f));
  g.vdivps(d, r2, m);
}

// ---- sigmoid ----------------------------------------------------------------------------
// With e = exp(-|x|) in (0, 1]: sigmoid x = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0,
// as the reference; exp never sees a positive argument, and for very negative x the result is
// e itself, subnormal included.

void sigmoid_avx512(Emit& e, const Xmm& d, const Xmm& x) {
  auto& g = e.g;
  const Xmm r = e.t(0), n = e.t(1), p = e.t(2);
  e.clamp_abs_keep_nan(r, x, 110.0f, 3);  // -min(|x|, 110)
  g.vmulps(n, r, e.f(kLog2e));
  g.vrndscaleps(n, n, 0x08);
  g.vfnmadd231ps(r, n, e.f(kLn2Hi));
  g.vfnmadd231ps(r, n, e.f(kLn2Lo));
  e.horner(p, r, kExp);
  g.vscalefps(p, p, n);  // e
  g.vaddps(r, p, e.f(1.0f));
  g.vcmpps(k2, x, e.f(0.0f), 0x1D);  // GE_OQ
  g.vblendmps(p | k2, p, e.f(1.0f));
  g.vdivps(d, p, r);
}

void sigmoid_avx2(Emit& e, const Xmm& d, const Xmm& x) {
  auto& g = e.g;
  const Xmm r = e.t(0), m = e.t(1), p = e.t(2);
  g.vorps(r, x, e.u(kSign));  // -|x|
  g.vmovaps(m, e.f(-110.0f));
  g.vmaxps(r, m, r);  // NaN stays NaN (second operand)
  g.vmovaps(m, e.f(kMagic));
  g.vfmadd231ps(m, r, e.f(kLog2e));
  g.vsubps(p, m, e.f(kMagic));
  g.vfnmadd231ps(r, p, e.f(kLn2Hi));
  g.vfnmadd231ps(r, p, e.f(kLn2Lo));
  e.horner(p, r, kExp);
  // n is in [-159, 0]: p 2^(n+64) is normal, the multiplication by 2^-64 rounds once.
  g.vpslld(m, m, 23);
  g.vpaddd(m, m, e.u((127u + 64u) << 23));
  g.vmulps(p, p, m);
  g.vmulps(p, p, e.f(5.42101086e-20f));  // 2^-64
  g.vaddps(r, p, e.f(1.0f));
  g.vxorps(m, x, e.u(kSign));  // sign bit set where x >= +0
  g.vblendvps(p, p, e.f(1.0f), m);
  g.vdivps(d, p, r);
}

// ---- erf --------------------------------------------------------------------------------
// Piecewise polynomials on |x| in [0, 4) (erf rounds to +-1 beyond 3.92): y = |x| K,
// interval i = floor(y), t = y - i, erf = c0[i] + c1[i] t + ... with the coefficients of all
// intervals in one vector per degree, picked by vpermps (no GPRs, no gathers). Interval 0 has
// c0 = 0 and c1 = 2/(K sqrt(pi)) split into a per-interval c1 and the constant kErf*C1Lo, and
// the last FMA adds c1 t to the rest, so that erf keeps full relative accuracy near 0. The
// sign of x rides in bit 31 of the index vector (vpermps reads only the low bits) so that dst
// may equal src. Minimax fits per interval; rows c_deg .. c_2, c_0, c_1. K = 2 (8 intervals,
// degree 7, 2^-27.0 relative) for AVX2, K = 4 (16 intervals, degree 6, 2^-28.5) for AVX-512.
const float kErf8[8][8] = {
    {-0.000140098666f, 0.000138705465f, 2.97253519e-05f, -4.62573371e-05f, -5.68256883e-06f,
     4.95860422e-06f, 1.35932294e-06f, 1.3470671e-07f},
    {-0.000126118233f, -0.000900870014f, 0.000217793713f, 0.000303294044f, -2.35421558e-05f,
     -4.34148315e-05f, -9.03508317e-06f, -7.94789685e-07f},
    {0.00362233026f, 0.000311819022f, -0.00228422321f, -0.000460245152f, 0.000433606765f,
     0.000190349703f, 2.97683509e-05f, 2.24963924e-06f},
    {-3.58788166e-05f, 0.0114091216f, 0.00438053347f, -0.00279095746f, -0.00216388842f,
     -0.000538369583f, -6.43719468e-05f, -4.09456743e-06f},
    {-0.0470095426f, -0.0183005463f, 0.0172819942f, 0.0173451584f, 0.0060306075f, 0.00104360213f,
     9.84139551e-05f, 5.25367295e-06f},
    {-4.05815086e-07f, -0.109848641f, -0.103775136f, -0.0445990264f, -0.0103338268f,
     -0.00136140548f, -0.000104412451f, -4.72051124e-06f},
    {0.0f, 0.520499885f, 0.842700779f, 0.966105163f, 0.995322287f, 0.999593019f, 0.999977887f,
     0.999999285f},
    {0.564189613f, 0.439391345f, 0.2075537f, 0.0594651774f, 0.0103335334f, 0.00108916603f,
     6.96502757e-05f, 2.72455941e-06f},
};
constexpr float kErf8C1Lo = -2.50291752e-08f;
const float kErf16[7][16] = {
    {-4.74711715e-06f, -1.21101693e-05f, -1.00692114e-05f, -2.57070451e-06f, 3.73499665e-06f,
     5.37459209e-06f, 3.51519225e-06f, 1.01476553e-06f, -4.32787829e-07f, -7.55227177e-07f,
     -5.48232606e-07f, -2.7949585e-07f, -1.11382761e-07f, -3.62161003e-08f, -9.82394077e-09f,
     -2.25297048e-09f},
    {0.000115436575f, 8.0595848e-05f, 3.80636538e-06f, -5.74334663e-05f, -7.08350926e-05f,
     -4.60493029e-05f, -1.27948497e-05f, 8.01822898e-06f, 1.34509237e-05f, 1.04302662e-05f,
     5.7818188e-06f, 2.52570089e-06f, 9.0471633e-07f, 2.71323756e-07f, 6.89830983e-08f,
     1.49917341e-08f},
    {-2.68803001e-06f, 0.000494612555f, 0.000717541785f, 0.000592284661f, 0.000272363977f,
     -2.41681373e-05f, -0.000175408612f, -0.000188930921f, -0.000134978502f, -7.45460784e-05f,
     -3.35483164e-05f, -1.26165596e-05f, -4.02195656e-06f, -1.09666382e-06f, -2.57338939e-07f,
     -5.21954213e-08f},
    {-0.00587634975f, -0.00483036228f, -0.00228934526f, 0.000417310599f, 0.00216130796f,
     0.00261780433f, 0.00216842163f, 0.00140906288f, 0.000753627392f, 0.000339443766f,
     0.000130423316f, 4.30929686e-05f, 1.23099962e-05f, 3.05182425e-06f, 6.58451142e-07f,
     1.23899454e-07f},
    {-5.32397131e-08f, -0.0165627841f, -0.0274618138f, -0.0301371869f, -0.0259441044f,
     -0.0184782241f, -0.0111497855f, -0.00577232381f, -0.00258339639f, -0.00100438786f,
     -0.00034034907f, -0.000100760117f, -2.61067253e-05f, -5.92776814e-06f, -1.18073353e-06f,
     -2.06484842e-07f},
    {0.0f, 0.276326388f, 0.520499885f, 0.711155653f, 0.842700779f, 0.92290014f, 0.966105163f,
     0.986671686f, 0.995322287f, 0.998537302f, 0.999593019f, 0.999899387f, 0.999977887f,
     0.999995708f, 0.999999285f, 0.999999881f},
    {0.282094806f, 0.265003562f, 0.219695643f, 0.160732776f, 0.10377688f, 0.0591302961f,
     0.0297325905f, 0.0131937666f, 0.00516676158f, 0.00178559357f, 0.000544584473f, 0.000146582854f,
     3.48269896e-05f, 7.31110322e-06f, 1.36375638e-06f, 2.34275504e-07f},
};
constexpr float kErf16C1Lo = -1.39235867e-08f;

template <size_t D, size_t N>
void erf_common(Emit& e, const Xmm& d, const Xmm& x, const float (&tab)[D][N], float k,
                float c1lo) {
  auto& g = e.g;
  const Xmm t = e.t(0), idx = e.t(1), p = e.t(2), c = e.t(3);
  if (e.avx512) {
    e.clamp_abs_keep_nan(t, x, 3.99999976f, 2);  // min(|x|, 4-), sign cleared
    g.vmulps(t, t, e.f(k));
    g.vcvttps2dq(idx, t);  // NaN -> 0x80000000: any interval
    g.vpternlogd(idx, x, e.u(kSign), 0xF8);
    g.vreduceps(t, t, 0x09);  // y - floor(y)
  } else {
    g.vandps(t, x, e.u(~kSign));
    g.vmovaps(p, e.f(3.99999976f));
    g.vminps(t, p, t);
    g.vmulps(t, t, e.f(k));
    g.vroundps(p, t, 0x09);  // floor
    g.vsubps(t, t, p);
    g.vcvttps2dq(idx, p);
    g.vandps(p, x, e.u(kSign));
    g.vorps(idx, idx, p);
  }
  const Xbyak::Ymm yi = Emit::y(idx);
  g.vpermps(Emit::y(p), yi, e.table(tab[0]));
  for (size_t i = 1; i + 2 < D; ++i) {
    g.vpermps(Emit::y(c), yi, e.table(tab[i]));
    g.vfmadd213ps(p, t, c);
  }
  g.vfmadd213ps(p, t, e.f(c1lo));
  g.vpermps(Emit::y(c), yi, e.table(tab[D - 2]));
  g.vfmadd213ps(p, t, c);  // c0 + (c1lo + c2 t + ...) t
  g.vpermps(Emit::y(d), yi, e.table(tab[D - 1]));
  g.vfmadd213ps(d, t, p);
  if (e.avx512) {
    g.vpternlogd(d, idx, e.u(kSign), 0xF8);
  } else {
    g.vandps(p, idx, e.u(kSign));
    g.vorps(d, d, p);
  }
}

}  // namespace

void emit_exp(VecContext& ctx, int dst, int src) {
  Emit e(ctx);
  if (e.avx512)
    exp_avx512(e, ctx.vec(dst), ctx.vec(src));
  else
    exp_avx2(e, ctx.vec(dst), ctx.vec(src));
}

void emit_log(VecContext& ctx, int dst, int src) {
  Emit e(ctx);
  if (e.avx512)
    log_avx512(e, ctx.vec(dst), ctx.vec(src));
  else
    log_avx2(e, ctx.vec(dst), ctx.vec(src));
}

void emit_tanh(VecContext& ctx, int dst, int src) {
  Emit e(ctx);
  if (e.avx512)
    tanh_avx512(e, ctx.vec(dst), ctx.vec(src));
  else
    tanh_avx2(e, ctx.vec(dst), ctx.vec(src));
}

void emit_sigmoid(VecContext& ctx, int dst, int src) {
  Emit e(ctx);
  if (e.avx512)
    sigmoid_avx512(e, ctx.vec(dst), ctx.vec(src));
  else
    sigmoid_avx2(e, ctx.vec(dst), ctx.vec(src));
}

void emit_erf(VecContext& ctx, int dst, int src) {
  Emit e(ctx);
  if (e.avx512)
    erf_common(e, ctx.vec(dst), ctx.vec(src), kErf16, 4.0f, kErf16C1Lo);
  else
    erf_common(e, ctx.vec(dst), ctx.vec(src), kErf8, 2.0f, kErf8C1Lo);
}

}  // namespace jit
}  // namespace ferrite
