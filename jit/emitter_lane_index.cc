// KernelEmitter: the per-lane byte offsets of a gather whose index has lane-varying terms
// (Access::vector_terms): Values that vary along the lanes, and products, floor divisions
// and remainders whose operands involve the vector variable (nearest upsampling's
// x[h / 2, w / 2] with lanes along w, DepthToSpace, reshapes of transposed views).
//
// Everything is computed in int32 lanes, lane l seeing the vector variable at rbx + l. The
// analysis (kernel_analysis.cc, lane_term) proved every operand form and term inside int32
// over the iteration space, so adds and multiplies (exact modulo 2^32) give exact values and
// each division sees its true numerator; lanes past the end of the vector dim (the tail)
// compute garbage that the gather's mask never reads. Each divisor is a positive int32
// constant (the analysis replaced its form by the constant). The values live in a stack of
// registers, `regs`: a form or term at `depth` leaves its value in regs[depth] and may use
// the registers above; the analysis checked that kLaneIndexRegs registers are enough.
#include <cstring>

#include "compiler/plan/error.h"
#include "jit/kernel_emitter.h"

namespace ferrite {
namespace jit {

using namespace Xbyak;

namespace {

// Multiplier of int32 lanes for an int64 factor: the same product modulo 2^32.
uint32_t lane_factor(int64_t f) {
  return static_cast<uint32_t>(static_cast<uint64_t>(f));
}

uint64_t f64_bits(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return bits;
}

}  // namespace

void KernelEmitter::lane_offsets(int a, const Xmm& off, const Xmm& spare) {
  const Access& acc = L_.accesses[a];
  // Free while a Load runs: math_[0] is `off`, math_[2] may keep the Load's mask and
  // temps_[0] holds it when fetched; `spare` is the Load's destination, written only by the
  // gather itself.
  const std::vector<Xmm> regs = {vec(math_[1]), vec(temps_[1]), vec(temps_[2]), vec(math_[3]),
                                 spare};
  static_assert(kLaneIndexRegs <= 5, "lane_offsets has five registers for the lane terms");
  if (acc.vec_coeff != 0) {
    vmovups(off, lane_ints(acc.vec_coeff * acc.esize));
  } else {
    vxorps(off, off, off);
  }
  for (const LinearTerm& t : acc.form.terms) {
    if (!lane_varying(L_, t)) continue;  // in the base pointer (base_of)
    lane_term(t, regs, 0);
    const Xmm v = regs[0];
    const int64_t f = t.factor * acc.esize;
    if (f != 1) vpmulld(v, v, consts_.u32(lane_factor(f)));
    vpaddd(off, off, v);
  }
}

void KernelEmitter::lane_form(const LinearForm& f, const std::vector<Xmm>& regs, size_t depth) {
  bool terms = false;  // some lane-varying term: one more register, above v
  for (const LinearTerm& t : f.terms) terms = terms || lane_varying(L_, t);
  if (depth + (terms ? 1 : 0) >= regs.size()) fail("jit: a per-lane index term nested too deep");
  const Xmm v = regs[depth], u = regs[terms ? depth + 1 : depth];
  // First what differs between the lanes: the lane-varying terms, the first one in v itself
  // (so that nested divisions need no more registers than a single one).
  bool first = true;
  for (const LinearTerm& t : f.terms) {
    if (!lane_varying(L_, t)) continue;
    const Xmm w = first ? v : u;
    lane_term(t, regs, first ? depth : depth + 1);
    if (t.factor != 1) vpmulld(w, w, consts_.u32(lane_factor(t.factor)));
    if (!first) vpaddd(v, v, w);
    first = false;
  }
  // Then the part every lane shares, in scalar code (which the terms' own scalar code would
  // have overwritten): f without its lane-varying terms and with the vector variable at its
  // lane-0 value rbx, broadcast (its low 32 bits: the same modulo 2^32); and vc * lane.
  LinearForm shared;
  shared.offset = f.offset;
  shared.coeff = f.coeff;
  int64_t vc = 0;
  if (L_.vec_var >= 0 && static_cast<size_t>(L_.vec_var) < f.coeff.size()) {
    vc = f.coeff[L_.vec_var];
    shared.coeff[L_.vec_var] = 0;
  }
  for (const LinearTerm& t : f.terms)
    if (!lane_varying(L_, t)) shared.terms.push_back(t);
  eval_form(shared, rax);
  if (vc != 0) {
    mov(rax, vc);
    imul(rax, rbx);
    add(misc(kExpr), rax);
  }
  const Address at = dword[rsp + misc_off_ + kExpr * 8];
  if (first) {
    vpbroadcastd(v, at);
  } else {
    vpbroadcastd(u, at);
    vpaddd(v, v, u);
  }
  if (vc != 0) vpaddd(v, v, lane_ints(vc));
}

void KernelEmitter::lane_term(const LinearTerm& t, const std::vector<Xmm>& regs, size_t depth) {
  if (depth >= regs.size()) fail("jit: a per-lane index term nested too deep");
  const Xmm v = regs[depth];
  if (t.kind == IndexKind::Value) {
    vmovups(v, home(t.id));  // lane-varying; index leaves always have their home
    return;
  }
  lane_form(t.operands[0], regs, depth);
  if (t.kind == IndexKind::Mul) {
    lane_form(t.operands[1], regs, depth + 1);
    vpmulld(v, v, regs[depth + 1]);
    return;
  }
  const LinearForm& divisor = t.operands[1];
  bool constant = divisor.terms.empty() && divisor.offset > 0;
  for (int64_t c : divisor.coeff) constant = constant && c == 0;
  if (!constant) fail("jit: a per-lane division by a divisor that is not a positive constant");
  if (depth + 2 >= regs.size()) fail("jit: a per-lane index term nested too deep");
  lane_floor_div(t.kind == IndexKind::Mod, divisor.offset, v, regs[depth + 1], regs[depth + 2]);
}

// Powers of two: an arithmetic shift is the floor division, the low bits the remainder
// (two's complement). Other divisors: each half of the lanes as doubles, divided, rounded
// down, converted back. That is exact for every int32 a and int32 c > 0: both are exact
// doubles; if a / c is an integer n the quotient rounds to n itself; else a / c = n + r / c
// with n = floor(a / c) and 1 <= r < c, so a / c lies at least 1 / c from both n and n + 1,
// while the rounding moves it by at most |a / c| * 2^-53 < 1 / c (as |a| < 2^53), and n and
// n + 1 are exact doubles, so the rounded quotient stays in [n, n + 1) and floors to n. The
// remainder a - n * c is exact in int32 lanes modulo 2^32, and lies in [0, c).
void KernelEmitter::lane_floor_div(bool mod, int64_t c, const Xmm& a, const Xmm& x, const Xmm& y) {
  if ((c & (c - 1)) == 0) {
    if (mod) {
      avx512() ? vpandd(a, a, consts_.u32(static_cast<uint32_t>(c - 1)))
               : vpand(a, a, consts_.u32(static_cast<uint32_t>(c - 1)));
    } else {
      int shift = 0;
      while ((int64_t{1} << shift) < c) ++shift;
      if (shift > 0) vpsrad(a, a, static_cast<uint8_t>(shift));
    }
    return;
  }
  const Address divisor = consts_.u64(f64_bits(static_cast<double>(c)));
  constexpr uint8_t kFloor = 0x09;  // round down, precision exception suppressed
  if (avx512()) {
    const Zmm za(a.getIdx()), zx(x.getIdx()), zy(y.getIdx());
    const Ymm ya(a.getIdx()), yx(x.getIdx()), yy(y.getIdx());
    vextracti32x8(yy, za, 1);
    vcvtdq2pd(zx, ya);
    vcvtdq2pd(zy, yy);
    vdivpd(zx, zx, divisor);
    vdivpd(zy, zy, divisor);
    vrndscalepd(zx, zx, kFloor);
    vrndscalepd(zy, zy, kFloor);
    vcvttpd2dq(yx, zx);
    vcvttpd2dq(yy, zy);
    vinserti32x8(zx, zx, yy, 1);
  } else {
    const Ymm ya(a.getIdx()), yx(x.getIdx()), yy(y.getIdx());
    const Xbyak::Xmm xa(a.getIdx()), xx(x.getIdx()), xy(y.getIdx());
    vextracti128(xy, ya, 1);
    vcvtdq2pd(yx, xa);
    vcvtdq2pd(yy, xy);
    vdivpd(yx, yx, divisor);
    vdivpd(yy, yy, divisor);
    vroundpd(yx, yx, kFloor);
    vroundpd(yy, yy, kFloor);
    vcvttpd2dq(xx, yx);
    vcvttpd2dq(xy, yy);
    vinserti128(yx, yx, xy, 1);
  }
  if (mod) {
    vpmulld(x, x, consts_.u32(static_cast<uint32_t>(c)));
    vpsubd(a, a, x);
  } else {
    vmovaps(a, x);
  }
}

}  // namespace jit
}  // namespace ferrite
