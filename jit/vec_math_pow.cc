// pow(a, b) for generated kernels (the contract is in vec_math.h). The core runs in double
// precision, one half of the lanes at a time: log2|a| = e + f P(f) (m = 2^-e |a| in
// [3/4, 3/2), f = m - 1, both exact in float), y = b log2|a|, 2^y = 2^round(y) 2^r, and the
// final conversion to float is the only rounding that matters, subnormal and overflowing
// results included. Special operands are then patched in float: the sign for negative bases
// with odd integral exponents, NaN for negative finite bases with non-integral exponents,
// and 1 for pow(x, +-0), pow(1, y) and pow(-1, +-inf).
#include "jit/vec_math.h"

#include "jit/vec_math_emit.h"

namespace ferrite {
namespace jit {
namespace {

using vmath::Emit;
using vmath::k2;
using vmath::k3;
using vmath::k4;
using vmath::k5;
using vmath::Xmm;

// Minimax (Remez), highest degree first. log2(1+f) = f P(f), f in [-1/4, 1/2]: 2^-33.2
// relative. 2^r = 1 + r Q(r), |r| <= 1/2: 2^-28.5 relative.
const double kLog2P[] = {-0.04495411796270884, 0.11550309308074368,  -0.15287028844755532,
                         0.16465712801571888,  -0.18031463514872706, 0.20582039540966898,
                         -0.2404282175958322,  0.2885460234328266,   -0.3606743593543338,
                         0.48089828222690106,  -0.7213475168561481,  1.4426950409945458};
const double kExp2Q[] = {0.0001559467744740788,
                         0.0013406643902749153,
                         0.009617692975232767,
                         0.05550310551002508,
                         0.24022652782873644,
                         0.6931472149680362,
                         1.0};

constexpr uint32_t kAbs = 0x7FFFFFFFu;
constexpr uint32_t kNaN = 0x7FC00000u;

// Registers of the core: f and ex hold the float stage (all lanes); the halves run on w, p and
// q (and f once its upper half is taken).
struct PowRegs {
  Xmm f, ex, w, p, q;
};

// AVX2: f and e by bit arithmetic (subnormal |a| scaled by 2^23 first), with e = -inf for
// a = +-0 and e = |a| for infinite or NaN a, so that log2|a| is -inf, +inf or NaN there.
void pow_split_avx2(Emit& e, const PowRegs& r, const Xmm& a) {
  auto& g = e.g;
  const Xmm abs = r.w, s = r.p, c = r.q;
  g.vandps(abs, a, e.u(kAbs));
  g.vcmpps(s, abs, e.f(1.17549435e-38f), 0x11);  // LT_OQ FLT_MIN
  g.vmulps(r.f, abs, e.f(8388608.0f));
  g.vblendvps(r.f, abs, r.f, s);
  g.vpsubd(r.f, r.f, e.u(0x3F400000u));
  g.vandps(s, s, e.u(23u << 23));
  g.vpsubd(r.ex, r.f, s);
  g.vpsrad(r.ex, r.ex, 23);
  g.vcvtdq2ps(r.ex, r.ex);
  g.vpand(r.f, r.f, e.u(0x007FFFFFu));
  g.vpaddd(r.f, r.f, e.u(0x3F400000u));
  g.vsubps(r.f, r.f, e.f(1.0f));
  g.vcmpps(c, abs, e.f(0.0f), 0x00);  // EQ_OQ
  g.vblendvps(r.ex, r.ex, e.u(0xFF800000u), c);
  g.vcmpps(c, abs, e.f(3.40282347e38f), 0x16);  // NLE_UQ: inf or NaN
  g.vblendvps(r.ex, r.ex, abs, c);
}

// AVX-512: getexp gives -inf for 0, +inf for infinities and NaN for NaN by itself.
void pow_split_avx512(Emit& e, const PowRegs& r, const Xmm& a) {
  auto& g = e.g;
  g.vgetmantps(r.f, a, 0x07);  // [3/4, 3/2), sign cleared
  g.vgetexpps(r.ex, a);
  g.vcmpps(k2, r.f, e.f(1.0f), 0x11);  // LT_OQ
  g.vaddps(r.ex | k2, r.ex, e.f(1.0f));
  g.vsubps(r.f, r.f, e.f(1.0f));
}

// Brings the float lanes of `src`'s half `h` into `dst` as doubles.
void load_half(Emit& e, const Xmm& dst, const Xmm& src, int h) {
  auto& g = e.g;
  const Xmm lo = Emit::half(dst);
  if (h == 0) {
    g.vcvtps2pd(dst, Emit::half(src));
  } else if (e.avx512) {
    g.vextractf32x8(lo, Xbyak::Zmm(src.getIdx()), 1);
    g.vcvtps2pd(dst, lo);
  } else {
    g.vextractf128(lo, Xbyak::Ymm(src.getIdx()), 1);
    g.vcvtps2pd(dst, lo);
  }
}

// pow for half `h` of the lanes, with that half of f already in fd as doubles; p and q are
// scratch. The float results end in the low half of fd.
void pow_half(Emit& e, const Xmm& fd, const Xmm& p, const Xmm& q, const Xmm& ex, const Xmm& b,
              int h) {
  auto& g = e.g;
  e.horner_pd(p, fd, kLog2P);
  load_half(e, q, ex, h);
  g.vfmadd213pd(p, fd, q);  // log2|a| = e + f P(f)
  load_half(e, q, b, h);
  g.vmulpd(p, p, q);  // y
  // |y| <= 200 keeps 2^round(y) a normal double; beyond, the float result is 0 or inf anyway.
  // NaN becomes +-200 here: the specials restore it.
  if (e.avx512) {
    g.vrangepd(p, p, e.d(200.0), 0x02);
    g.vrndscalepd(q, p, 0x08);
    g.vsubpd(p, p, q);
    e.horner_pd(fd, p, kExp2Q);
    g.vscalefpd(fd, fd, q);
  } else {
    g.vminpd(p, p, e.d(200.0));
    g.vmaxpd(p, p, e.d(-200.0));
    g.vaddpd(q, p, e.d(6755399441055744.0));  // 1.5 * 2^52: round(y) in the low bits
    g.vsubpd(fd, q, e.d(6755399441055744.0));
    g.vsubpd(p, p, fd);
    e.horner_pd(fd, p, kExp2Q);
    g.vpsllq(q, q, 52);
    g.vpaddq(q, q, e.d(1.0));  // 2^round(y)
    g.vmulpd(fd, fd, q);
  }
  g.vcvtpd2ps(Emit::half(fd), fd);
}

// dst = pow(|a|, b) for all lanes; clobbers the registers of r. The upper half's f is taken
// before the lower half runs, so that the two halves do not wait for each other.
void pow_core(Emit& e, const PowRegs& r, const Xmm& a, const Xmm& b, const Xmm& dst) {
  auto& g = e.g;
  if (e.avx512)
    pow_split_avx512(e, r, a);
  else
    pow_split_avx2(e, r, a);
  load_half(e, r.w, r.f, 0);
  load_half(e, r.p, r.f, 1);
  pow_half(e, r.w, r.f, r.q, r.ex, b, 0);  // low results in w
  pow_half(e, r.p, r.f, r.q, r.ex, b, 1);  // high results in p
  if (e.avx512)
    g.vinsertf32x8(Xbyak::Zmm(dst.getIdx()), Xbyak::Zmm(r.w.getIdx()), Emit::half(r.p), 1);
  else
    g.vinsertf128(Xbyak::Ymm(dst.getIdx()), Xbyak::Ymm(r.w.getIdx()), Emit::half(r.p), 1);
}

void pow_specials_avx512(Emit& e, const Xmm& d, const Xmm& a, const Xmm& b, const Xmm& t0,
                         const Xmm& t1) {
  auto& g = e.g;
  g.vrndscaleps(t0, b, 0x08);
  g.vcmpps(k3, t0, b, 0x00);  // EQ_OQ: b integral (+-inf included)
  g.vcmpps(k4, t0, b, 0x04);  // NEQ_UQ: b not integral, or NaN
  g.vcvtps2dq(t1, b);         // |b| >= 2^31 gives 0x80000000: even, as such floats are
  g.vpslld(t1, t1, 31);
  g.vpternlogd(d | k3, t1, a, 0xF8);             // odd b: d |= sign(a)
  g.vcmpps(k4 | k4, a, e.f(0.0f), 0x11);         // ... and a < 0
  g.vcmpps(k4 | k4, a, e.u(0xFF800000u), 0x0C);  // ... and a != -inf (NEQ_OQ)
  g.vcmpps(k5, a, b, 0x03);                      // UNORD_Q: NaN operands
  g.korw(k4, k4, k5);
  g.vmovaps(d | k4, e.u(kNaN));
  // vfixupimmps on b: +-0 -> +1; on a: +1 -> +1; other classes keep d.
  g.vfixupimmps(d, b, e.u(0x00000A00u), 0);
  g.vfixupimmps(d, a, e.u(0x0000A000u), 0);
  g.vfpclassps(k5, b, 0x18);  // +-inf
  g.vcmpps(k5 | k5, a, e.f(-1.0f), 0x00);
  g.vmovaps(d | k5, e.f(1.0f));
}

void pow_specials_avx2(Emit& e, const Xmm& d, const Xmm& a, const Xmm& b, const Xmm& t0,
                       const Xmm& t1, const Xmm& t2) {
  auto& g = e.g;
  g.vroundps(t0, b, 0x08);
  g.vcmpps(t0, t0, b, 0x04);  // NEQ_UQ: b not integral, or NaN
  g.vcvtps2dq(t1, b);
  g.vpslld(t1, t1, 31);
  g.vandnps(t1, t0, t1);
  g.vandps(t1, t1, a);
  g.vorps(d, d, t1);                        // odd integral b: d |= sign(a)
  g.vcmpps(t1, a, e.f(0.0f), 0x11);         // LT_OQ
  g.vcmpps(t2, a, e.u(0xFF800000u), 0x0C);  // NEQ_OQ -inf
  g.vandps(t1, t1, t2);
  g.vandps(t1, t1, t0);
  g.vcmpps(t2, a, b, 0x03);  // UNORD_Q: NaN operands (the core loses them in its clamp)
  g.vorps(t1, t1, t2);
  g.vorps(d, d, t1);  // all ones: NaN
  g.vcmpps(t0, b, e.f(0.0f), 0x00);
  g.vcmpps(t1, a, e.f(1.0f), 0x00);
  g.vorps(t0, t0, t1);
  g.vandps(t1, b, e.u(kAbs));
  g.vcmpps(t1, t1, e.u(0x7F800000u), 0x00);
  g.vcmpps(t2, a, e.f(-1.0f), 0x00);
  g.vandps(t1, t1, t2);
  g.vorps(t0, t0, t1);
  g.vblendvps(d, d, e.f(1.0f), t0);
}

}  // namespace

void emit_pow(VecContext& ctx, int dst, int a, int b) {
  Emit e(ctx);
  const Xmm d = ctx.vec(dst), va = ctx.vec(a), vb = ctx.vec(b);
  const PowRegs r{e.t(0), e.t(1), e.t(2), e.t(3), d};
  pow_core(e, r, va, vb, d);
  if (e.avx512)
    pow_specials_avx512(e, d, va, vb, r.f, r.ex);
  else
    pow_specials_avx2(e, d, va, vb, r.f, r.ex, r.w);
}

}  // namespace jit
}  // namespace ferrite
