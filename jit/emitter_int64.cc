// KernelEmitter: int64 storage read or written along the vector lanes (Wide in
// kernel_analysis.h): saturated to int32 lanes, converted to f32, or copied 64-bit.
#include <limits>

#include "jit/kernel_emitter.h"

namespace ferrite {
namespace jit {

using namespace Xbyak;

namespace {

constexpr uint8_t kUnordQ = 0x03, kGeOQ = 0x1D;  // vcmpps predicates

}  // namespace

// d = int64 elements (contiguous or one for all lanes) saturated to int32 lanes
// (Wide::Narrow: only vector index checks read them, and saturation keeps their verdict).
void KernelEmitter::narrow_i64_load(int a, const Reg64& b, const Xmm& d, bool tail) {
  const Access& acc = L_.accesses[a];
  const Xmm s0 = vec(math_[0]), s1 = vec(math_[1]), s3 = vec(math_[3]);
  if (acc.vec_coeff == 0) {
    mov(rax, qword[b]);
    mov(rcx, std::numeric_limits<int32_t>::max());
    cmp(rax, rcx);
    cmovg(rax, rcx);
    mov(rcx, std::numeric_limits<int32_t>::min());
    cmp(rax, rcx);
    cmovl(rax, rcx);
    vmovd(Xbyak::Xmm(d.getIdx()), eax);
    vpbroadcastd(d, Xbyak::Xmm(d.getIdx()));
    return;
  }
  const int half = vbytes_;  // bytes of lanes/2 int64 values
  lea(rdx, ptr[lane0(a, b)]);
  if (avx512()) {
    if (tail) {
      kshiftrw(k3, k1, 8);
      vmovdqu64(s0 | k1 | T_z, ptr[rdx]);
      vmovdqu64(s1 | k3 | T_z, ptr[rdx + half]);
    } else {
      vmovdqu64(s0, ptr[rdx]);
      vmovdqu64(s1, ptr[rdx + half]);
    }
    vpmovsqd(Xbyak::Ymm(s0.getIdx()), Xbyak::Zmm(s0.getIdx()));
    vpmovsqd(Xbyak::Ymm(s1.getIdx()), Xbyak::Zmm(s1.getIdx()));
    vinserti32x8(Xbyak::Zmm(d.getIdx()), Xbyak::Zmm(s0.getIdx()), Xbyak::Ymm(s1.getIdx()), 1);
    return;
  }
  if (tail) {
    stage_in(rdx, 8);
    lea(rdx, ptr[rsp + buf_off_]);
  }
  vmovdqu(s0, ptr[rdx]);
  vmovdqu(s1, ptr[rdx + half]);
  const int64_t lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
  for (const Xmm& q : {s0, s1}) {  // clamp the four int64 lanes, then keep their low halves
    vpcmpgtq(s3, q, consts_.u64(static_cast<uint64_t>(hi)));
    vblendvpd(q, q, consts_.u64(static_cast<uint64_t>(hi)), s3);
    vmovdqu(s3, consts_.u64(static_cast<uint64_t>(lo)));
    vpcmpgtq(s3, s3, q);
    vblendvpd(q, q, consts_.u64(static_cast<uint64_t>(lo)), s3);
  }
  vmovdqu(s3, consts_.raw({0, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 6, 0, 0, 0,  //
                           0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  const Xbyak::Ymm y0(s0.getIdx()), y1(s1.getIdx()), y3(s3.getIdx());
  vpermd(y0, y3, y0);
  vpermd(y1, y3, y1);
  vinserti128(Xbyak::Ymm(d.getIdx()), Xbyak::Ymm(s0.getIdx()), Xbyak::Xmm(s1.getIdx()), 1);
}

// d = the f32 values of int64 elements (contiguous or one for all lanes), each rounded once
// as the reference's cast: AVX-512DQ converts 8 at a time, AVX2 one at a time in
// general-purpose registers.
void KernelEmitter::float_i64_load(int a, const Reg64& b, const Xmm& d, bool tail) {
  const Access& acc = L_.accesses[a];
  const Xbyak::Xmm x(d.getIdx());
  if (acc.vec_coeff == 0) {
    vcvtsi2ss(x, x, qword[b]);
    vbroadcastss(d, x);
    return;
  }
  lea(rdx, ptr[lane0(a, b)]);
  if (avx512()) {
    const Xmm s0 = vec(math_[0]), s1 = vec(math_[1]);
    if (tail) {
      kshiftrw(k3, k1, 8);
      vcvtqq2ps(Xbyak::Ymm(s0.getIdx()) | k1 | T_z, ptr[rdx]);
      vcvtqq2ps(Xbyak::Ymm(s1.getIdx()) | k3 | T_z, ptr[rdx + vbytes_]);
    } else {
      vcvtqq2ps(Xbyak::Ymm(s0.getIdx()), ptr[rdx]);
      vcvtqq2ps(Xbyak::Ymm(s1.getIdx()), ptr[rdx + vbytes_]);
    }
    vinsertf32x8(Xbyak::Zmm(d.getIdx()), Xbyak::Zmm(s0.getIdx()), Xbyak::Ymm(s1.getIdx()), 1);
    return;
  }
  Label next;
  vxorps(Xbyak::Xmm(math_[0]), Xbyak::Xmm(math_[0]), Xbyak::Xmm(math_[0]));
  vmovups(ptr[rsp + buf_off_], Xbyak::Ymm(math_[0]));  // lanes past the tail read 0
  if (tail) {
    mov(rcx, r12);
    sub(rcx, rbx);
  } else {
    mov(rcx, lanes_);
  }
  xor_(eax, eax);
  L(next);
  vcvtsi2ss(Xbyak::Xmm(math_[0]), Xbyak::Xmm(math_[0]), qword[rdx + rax * 8]);
  vmovss(dword[rsp + buf_off_ + rax * 4], Xbyak::Xmm(math_[0]));
  inc(rax);
  cmp(rax, rcx);
  jb(next);
  vmovups(d, ptr[rsp + buf_off_]);
}

// Stores f32 lanes `v` at `at` (lane 0, contiguous int64) converted as the reference's cast
// F32 -> I64: truncation, NaN -> 0, saturation at both ends. AVX-512DQ converts 8 lanes at a
// time (vcvttps2qq gives INT64_MIN for NaN and out-of-range lanes: NaN and x >= 2^63 are
// patched); AVX2 converts one lane at a time in general-purpose registers.
void KernelEmitter::convert_i64_store(const Xbyak::RegExp& at, const Xmm& v, bool tail) {
  const Xmm s0 = vec(math_[0]), s1 = vec(math_[1]);
  const float two63 = 9223372036854775808.0f;
  lea(rdx, ptr[at]);
  if (avx512()) {
    const Xbyak::Zmm z0(s0.getIdx()), z1(s1.getIdx());
    const Xbyak::Ymm y1(s1.getIdx());
    vextractf32x8(y1, Xbyak::Zmm(v.getIdx()), 1);
    vcvttps2qq(z1, y1);
    vcvttps2qq(z0, Xbyak::Ymm(v.getIdx()));
    for (int half = 0; half < 2; ++half) {
      const Xbyak::Zmm& z = half ? z1 : z0;
      vcmpps(k2, v, consts_.f32(two63), kGeOQ);  // +overflow
      if (half) kshiftrw(k2, k2, 8);
      vmovdqu64(z | k2, consts_.u64(static_cast<uint64_t>(std::numeric_limits<int64_t>::max())));
      vcmpps(k2, v, v, kUnordQ);  // NaN
      if (half) kshiftrw(k2, k2, 8);
      vpxorq(z | k2, z, z);
    }
    if (tail) {
      kshiftrw(k3, k1, 8);
      vmovdqu64(ptr[rdx] | k1, z0);
      vmovdqu64(ptr[rdx + vbytes_] | k3, z1);
    } else {
      vmovdqu64(ptr[rdx], z0);
      vmovdqu64(ptr[rdx + vbytes_], z1);
    }
    return;
  }
  vmovups(ptr[rsp + buf_off_], v);
  const Xbyak::Xmm x0(s0.getIdx());
  Label done;
  if (tail) {
    mov(rcx, r12);
    sub(rcx, rbx);
  }
  for (int l = 0; l < lanes_; ++l) {
    Label nan, ok;
    if (tail) {
      cmp(rcx, l);
      jle(done, T_NEAR);
    }
    vmovss(x0, dword[rsp + buf_off_ + 4 * l]);
    vcvttss2si(rax, x0);
    vucomiss(x0, x0);
    jp(nan);
    vucomiss(x0, consts_.f32(two63));
    jb(ok);
    mov(rax, std::numeric_limits<int64_t>::max());
    jmp(ok);
    L(nan);
    xor_(eax, eax);
    L(ok);
    mov(qword[rdx + 8 * l], rax);
  }
  L(done);
}

// Store `id` of a Wide::Copy value: its int64 elements go from the Load's address (lane 0,
// contiguous, or one element for every lane) to the Store's (contiguous).
void KernelEmitter::copy_i64_store(int id, bool tail) {
  const Instr& in = k_.code[id];
  const int src = L_.access[in.a], dst = L_.access[id];
  const bool bcast = L_.accesses[src].vec_coeff == 0;
  const Xmm s0 = vec(math_[0]), s1 = vec(math_[1]);
  lea(rcx, ptr[lane0(src, base_reg(src))]);
  mov(misc(kCopySrc), rcx);  // base_reg may evaluate terms (rax, rcx, rdx)
  lea(rdx, ptr[lane0(dst, base_reg(dst))]);
  mov(rcx, misc(kCopySrc));
  const int half = vbytes_;
  if (avx512() || !tail) {
    if (bcast) {
      vpbroadcastq(s0, qword[rcx]);
      vmovaps(s1, s0);
    } else if (avx512() && tail) {
      kshiftrw(k3, k1, 8);
      vmovdqu64(s0 | k1 | T_z, ptr[rcx]);
      vmovdqu64(s1 | k3 | T_z, ptr[rcx + half]);
    } else {
      vmovups(s0, ptr[rcx]);
      vmovups(s1, ptr[rcx + half]);
    }
    if (avx512() && tail) {
      kshiftrw(k3, k1, 8);
      vmovdqu64(ptr[rdx] | k1, s0);
      vmovdqu64(ptr[rdx + half] | k3, s1);
    } else {
      vmovups(ptr[rdx], s0);
      vmovups(ptr[rdx + half], s1);
    }
    return;
  }
  // AVX2 tail: one element at a time.
  Label next;
  mov(rax, r12);
  sub(rax, rbx);
  L(next);
  vmovq(Xbyak::Xmm(s0.getIdx()), qword[rcx]);
  vmovq(qword[rdx], Xbyak::Xmm(s0.getIdx()));
  if (!bcast) add(rcx, 8);
  add(rdx, 8);
  dec(rax);
  jnz(next);
}

}  // namespace jit
}  // namespace ferrite
