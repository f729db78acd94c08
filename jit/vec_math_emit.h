// Internal to jit/vec_math*.cc: a thin helper over VecContext for writing the vector math
// routines (constants by value, scratch registers by index, Horner steps, NaN-keeping clamps).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "jit/vec_context.h"

namespace ferrite {
namespace jit {
namespace vmath {

using Xbyak::Xmm;

inline const Xbyak::Opmask k2(2), k3(3), k4(4), k5(5);

struct Emit {
  explicit Emit(VecContext& c) : ctx(c), g(c.g), avx512(c.isa == Isa::Avx512) {}

  VecContext& ctx;
  Xbyak::CodeGenerator& g;
  const bool avx512;

  Xmm t(size_t i) const { return ctx.tmp(i); }
  // The same register, typed for instructions that xbyak declares on Ymm (a Zmm stays a Zmm).
  static Xbyak::Ymm y(const Xmm& v) {
    if (v.isZMM()) return Xbyak::Zmm(v.getIdx());
    return Xbyak::Ymm(v.getIdx());
  }
  // The lower half of a register: ymm of a zmm, xmm of a ymm.
  static Xmm half(const Xmm& v) {
    if (v.isZMM()) return Xbyak::Ymm(v.getIdx());
    return Xmm(v.getIdx());
  }

  Xbyak::Address f(float v) { return ctx.consts.f32(v); }
  Xbyak::Address u(uint32_t bits) { return ctx.consts.u32(bits); }
  Xbyak::Address d(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    return ctx.consts.u64(bits);
  }
  // A vector of per-lane floats (lanes() values).
  Xbyak::Address table(const float* v) {
    std::vector<uint8_t> bytes(sizeof(float) * ctx.lanes());
    std::memcpy(bytes.data(), v, bytes.size());
    return ctx.consts.raw(bytes);
  }

  // p = c[0]; p = p * x + c[i] for the others (highest degree first).
  template <size_t N>
  void horner(const Xmm& p, const Xmm& x, const float (&c)[N]) {
    g.vmovaps(p, f(c[0]));
    for (size_t i = 1; i < N; ++i) g.vfmadd213ps(p, x, f(c[i]));
  }
  template <size_t N>
  void horner_pd(const Xmm& p, const Xmm& x, const double (&c)[N]) {
    g.vmovapd(p, d(c[0]));
    for (size_t i = 1; i < N; ++i) g.vfmadd213pd(p, x, d(c[i]));
  }

  // AVX-512: dst = x with |x| clamped to `limit`, then the sign by vrangeps's imm8[3:2] (0: x's,
  // 2: cleared, 3: set). vrangeps returns the number when one operand is a quiet NaN, so
  // vfixupimmps puts NaN inputs back (response 1 for QNaN x, 2 = QNaN(x) for SNaN x).
  void clamp_abs_keep_nan(const Xmm& dst, const Xmm& x, float limit, int sign_imm) {
    g.vrangeps(dst, x, f(limit), static_cast<uint8_t>(0x02 | (sign_imm << 2)));
    g.vfixupimmps(dst, x, u(0x00000021u), 0);
  }

  // AVX2: dst = min(max(x, lo), hi) with NaN kept (AVX2: vminps/vmaxps return their second operand
  // when either is NaN, so x goes second and the bounds are loaded into registers).
  void clamp_keep_nan(const Xmm& dst, const Xmm& x, float lo, float hi, const Xmm& tmp) {
    g.vmovaps(dst, f(hi));
    g.vminps(dst, dst, x);
    g.vmovaps(tmp, f(lo));
    g.vmaxps(dst, tmp, dst);
  }
};

}  // namespace vmath
}  // namespace jit
}  // namespace ferrite
