// KernelEmitter: addresses, loads and stores.
//
// Every index was proven inside its arg for every point of the iteration space
// (kernel_analysis.cc), so a full vector may be read without looking at a Load's mask (the
// masked-off lanes are zeroed afterwards); only lanes past the end of the vector dim (the
// tail) must not be touched: AVX-512 masks them with k1, AVX2 uses vmaskmov for 32-bit
// elements and copies the tail through a stack buffer for narrower ones.
#include <cstring>

#include "compiler/plan/error.h"
#include "jit/kernel_emitter.h"

namespace ferrite {
namespace jit {

using namespace Xbyak;

namespace {

bool scale_ok(int64_t s) {
  return s == 1 || s == 2 || s == 4 || s == 8;
}

}  // namespace

// expr[d] = the value of f (no vector variable in it); rax, rcx, rdx clobbered.
void KernelEmitter::eval_form(const LinearForm& f, const Reg64& /*unused*/) {
  struct Eval {
    KernelEmitter& e;
    void form(const LinearForm& f, int d) {
      if (d >= kExprSlots) fail("jit: index expression too deep");
      e.mov(e.rax, f.offset);
      e.mov(e.misc(kExpr + d), e.rax);
      for (size_t v = 0; v < f.coeff.size(); ++v) {
        if (f.coeff[v] == 0) continue;
        e.mov(e.rax, e.var_slot(static_cast<int>(v)));
        e.mov(e.rcx, f.coeff[v]);
        e.imul(e.rax, e.rcx);
        e.add(e.misc(kExpr + d), e.rax);
      }
      for (const LinearTerm& t : f.terms) {
        term(t, d + 1);
        e.mov(e.rax, e.misc(kExpr + d + 1));
        e.mov(e.rcx, t.factor);
        e.imul(e.rax, e.rcx);
        e.add(e.misc(kExpr + d), e.rax);
      }
    }
    void term(const LinearTerm& t, int d) {
      if (d + 1 >= kExprSlots) fail("jit: index expression too deep");
      if (t.kind == IndexKind::Value) {
        e.mov(e.rax, e.home64(t.id));
        e.mov(e.misc(kExpr + d), e.rax);
        return;
      }
      form(t.operands[0], d);
      form(t.operands[1], d + 1);
      e.mov(e.rax, e.misc(kExpr + d));
      if (t.kind == IndexKind::Mul) {
        e.imul(e.rax, e.misc(kExpr + d + 1));
        e.mov(e.misc(kExpr + d), e.rax);
        return;
      }
      // Floor division / Python modulo by a positive divisor (proven by the analysis).
      Label done;
      e.cqo();
      e.idiv(e.misc(kExpr + d + 1));
      e.test(e.rdx, e.rdx);
      e.jns(done);
      e.dec(e.rax);
      e.add(e.rdx, e.misc(kExpr + d + 1));
      e.L(done);
      e.mov(e.misc(kExpr + d), t.kind == IndexKind::Mod ? e.rdx : e.rax);
    }
  };
  Eval{*this}.form(f, 0);
}

void KernelEmitter::base_of(int a, const Reg64& r) {
  const Access& acc = L_.accesses[a];
  LinearForm terms;  // the uniform terms (lane-varying ones are per lane: lane_offsets)
  terms.coeff.assign(acc.form.coeff.size(), 0);
  for (const LinearTerm& t : acc.form.terms)
    if (!lane_varying(L_, t)) terms.terms.push_back(t);
  if (!terms.terms.empty()) {
    eval_form(terms, rax);
    mov(rax, misc(kExpr));
    imul(rax, rax, acc.esize);
    mov(misc(kExpr), rax);
  }
  mov(r, acc.uses_reduce_scalar ? cur_ptr(a) : row_ptr(a));
  if (!terms.terms.empty()) add(r, misc(kExpr));
}

KernelEmitter::Reg64 KernelEmitter::base_reg(int a) {
  if (base_reg_[a] >= 0) return ptr_regs_[static_cast<size_t>(base_reg_[a])];
  base_of(a, rax);
  return rax;
}

RegExp KernelEmitter::lane0(int a, const Reg64& b) {
  const Access& acc = L_.accesses[a];
  const int64_t s = acc.vec_coeff * acc.esize;
  if (acc.vec_coeff == 0) return RegExp(b);
  if (scale_ok(s)) return b + rbx * static_cast<int>(s);
  imul(rdx, rbx, static_cast<int>(s));
  add(rdx, b);
  return RegExp(rdx);
}

// Copies the tail's n = r12 - rbx lanes between memory at `at` (lane 0) and the buffer.
void KernelEmitter::stage_in(const Reg64& at, int bytes_per_lane) {
  Label copy;
  mov(rcx, r12);
  sub(rcx, rbx);
  imul(rcx, rcx, bytes_per_lane);
  L(copy);
  mov(al, byte[at + rcx - 1]);
  mov(byte[rsp + buf_off_ + rcx - 1], al);
  dec(rcx);
  jnz(copy);
}

void KernelEmitter::stage_out(const Reg64& at, int bytes_per_lane) {
  Label copy;
  mov(rcx, r12);
  sub(rcx, rbx);
  imul(rcx, rcx, bytes_per_lane);
  L(copy);
  mov(al, byte[rsp + buf_off_ + rcx - 1]);
  mov(byte[at + rcx - 1], al);
  dec(rcx);
  jnz(copy);
}

// d = the one element at b in every lane, widened to 32 bits (Bool: nonzero -> all ones).
void KernelEmitter::broadcast_load(DType dt, const Reg64& b, const Xmm& d) {
  if (dt == DType::F32 || dt == DType::I32) {
    vbroadcastss(d, dword[b]);
  } else if (dt == DType::Bool || dt == DType::U8 || dt == DType::I8) {
    if (dt == DType::I8) {
      movsx(ecx, byte[b]);
    } else if (dt == DType::U8) {
      movzx(ecx, byte[b]);
    } else {  // Bool: nonzero -> all ones
      cmp(byte[b], 0);
      setne(cl);
      movzx(ecx, cl);
      neg(ecx);
    }
    vmovd(Xbyak::Xmm(d.getIdx()), ecx);
    vpbroadcastd(d, Xbyak::Xmm(d.getIdx()));
  } else {  // F16
    movzx(ecx, word[b]);
    vmovd(Xbyak::Xmm(d.getIdx()), ecx);
    vcvtph2ps(Xbyak::Xmm(d.getIdx()), Xbyak::Xmm(d.getIdx()));
    vbroadcastss(d, Xbyak::Xmm(d.getIdx()));
  }
}

// d = the lanes' consecutive elements from `at`, widened to 32 bits; a tail leaves the
// lanes past it zero and reads nothing there.
void KernelEmitter::contiguous_load(DType dt, const RegExp& at, const Xmm& d, bool tail) {
  const Xmm s0 = vec(math_[0]);
  switch (dt) {
    case DType::F32:
    case DType::I32:
      if (!tail) {
        vmovups(d, ptr[at]);
      } else if (avx512()) {
        vmovups(d | k1 | T_z, ptr[at]);
      } else {
        vmaskmovps(d, Xbyak::Ymm(tail_vreg_), ptr[at]);
      }
      break;
    case DType::F16:
      if (avx512()) {
        if (tail) {
          vcvtph2ps(d | k1 | T_z, ptr[at]);
        } else {
          vcvtph2ps(d, ptr[at]);
        }
      } else if (!tail) {
        vcvtph2ps(d, ptr[at]);
      } else {
        lea(rdx, ptr[at]);
        stage_in(rdx, 2);
        vcvtph2ps(d, ptr[rsp + buf_off_]);
      }
      break;
    case DType::Bool:
    case DType::U8:
    case DType::I8: {
      const bool sign = dt == DType::I8;
      if (avx512()) {
        if (tail) {
          sign ? vpmovsxbd(d | k1 | T_z, ptr[at]) : vpmovzxbd(d | k1 | T_z, ptr[at]);
        } else {
          sign ? vpmovsxbd(d, ptr[at]) : vpmovzxbd(d, ptr[at]);
        }
      } else if (!tail) {
        sign ? vpmovsxbd(d, ptr[at]) : vpmovzxbd(d, ptr[at]);
      } else {
        lea(rdx, ptr[at]);
        stage_in(rdx, 1);
        sign ? vpmovsxbd(d, ptr[rsp + buf_off_]) : vpmovzxbd(d, ptr[rsp + buf_off_]);
      }
      if (dt == DType::Bool) {
        if (avx512()) {
          vptestmd(k2, d, d);
          k_to_mask(d, k2);
        } else {
          vpxor(s0, s0, s0);
          vpcmpeqd(s0, d, s0);
          vpxor(d, s0, consts_.u32(0xFFFFFFFFu));
        }
      }
      break;
    }
    default:
      fail("jit: vector load of ", dtype_name(dt));
  }
}

void KernelEmitter::vector_load(int id, const Xmm& d, const Xmm* mask, bool tail) {
  const Instr& in = k_.code[id];
  const int a = L_.access[id];
  const Access& acc = L_.accesses[a];
  const DType dt = k_.args[in.arg].dtype;
  const Xmm s0 = vec(math_[0]), s1 = vec(math_[1]), s2 = vec(math_[2]);
  if (mask && mask->getIdx() == d.getIdx()) {
    // The mask dies here and d took its register: keep it where the load leaves it alone
    // (the load itself uses at most s0, s1, math_[3], temps_[1], temps_[2] and d).
    vmovaps(s2, *mask);
    mask = &s2;
  }
  if (acc.vector_terms) {
    vector_gather(a, d, tail);
    if (mask) vandps(d, d, *mask);
    return;
  }
  const Reg64 b = base_reg(a);
  if (dt == DType::I64) {
    if (L_.wide[id] == Wide::Float) {
      float_i64_load(a, b, d, tail);
    } else {
      narrow_i64_load(a, b, d, tail);
    }
    if (mask) vandps(d, d, *mask);
    return;
  }
  if (acc.masked_reads) return masked_read(a, b, d, *mask, tail);
  if (acc.vec_coeff == 0) {
    // One element for every lane (the load varies only through its mask).
    broadcast_load(dt, b, d);
    if (mask) vandps(d, d, *mask);
    return;
  }
  if (acc.vec_coeff != 1) {
    // Strided 32-bit elements: a gather with lane offsets lane * stride bytes.
    const int64_t stride = acc.vec_coeff * acc.esize;
    imul(rdx, rbx, static_cast<int>(stride));
    add(rdx, b);
    vmovups(s0, lane_ints(stride));
    active_lanes(tail, s1);
    gather32(dt, d, s0, s1, vec(math_[3]));
    if (mask) vandps(d, d, *mask);
    return;
  }
  contiguous_load(dt, lane0(a, b), d, tail);
  if (mask) vandps(d, d, *mask);
}

// d = the 32-bit elements at base + (the lane-varying terms + lane * vec_coeff) * esize, per
// lane (a gather; the analysis proved every active lane's index inside the arg and the byte
// offsets inside int32).
void KernelEmitter::vector_gather(int a, const Xmm& d, bool tail) {
  const Access& acc = L_.accesses[a];
  const DType dt = k_.args[k_.code[acc.instr].arg].dtype;
  const Xmm off = vec(math_[0]), m = vec(math_[3]);
  lane_offsets(a, off, d);  // first: its scalar code clobbers rax, which may hold the base
  const Reg64 b = base_reg(a);
  imul(rdx, rbx, static_cast<int>(acc.vec_coeff * acc.esize));
  add(rdx, b);
  active_lanes(tail, m);
  gather32(dt, d, off, m, vec(math_[1]));
}

void KernelEmitter::active_lanes(bool tail, const Xmm& avx2_mask) {
  if (avx512()) {
    if (tail) {
      kmovw(k2, k1);
    } else {
      kxnorw(k2, k2, k2);
    }
  } else if (tail) {
    vmovaps(avx2_mask, Xbyak::Ymm(tail_vreg_));
  } else {
    vpcmpeqd(avx2_mask, avx2_mask, avx2_mask);
  }
}

void KernelEmitter::gather32(DType dt, const Xmm& d, const Xmm& offsets, const Xmm& avx2_mask,
                             const Xmm& spare) {
  const bool bytes = dt == DType::U8 || dt == DType::I8;
  const bool half = dt == DType::F16;
  if (bytes || half) {
    // Each lane reads the aligned dword holding its byte (or 2-aligned halfword, as every
    // buffer is 64-byte aligned), which never crosses a page boundary, so it faults only
    // where the element itself would; then shifts the element down.
    // Lane offset t = offset + (base & 3) from base & ~3: dword at t & ~3, byte t & 3.
    mov(eax, edx);
    and_(eax, 3);
    and_(rdx, -4);
    vmovd(Xbyak::Xmm(spare.getIdx()), eax);
    vpbroadcastd(spare, Xbyak::Xmm(spare.getIdx()));
    vpaddd(offsets, offsets, spare);
    // vpand has no EVEX form (zmm registers, or any of 16-31): vpandd on AVX-512.
    if (avx512()) {
      vpandd(spare, offsets, consts_.u32(3));
      vpslld(spare, spare, 3);
      vpandd(offsets, offsets, consts_.u32(~3u));
    } else {
      vpand(spare, offsets, consts_.u32(3));
      vpslld(spare, spare, 3);
      vpand(offsets, offsets, consts_.u32(~3u));
    }
  }
  vxorps(d, d, d);
  const bool f32 = dt == DType::F32;
  if (avx512()) {
    f32 ? vgatherdps(d | k2, ptr[rdx + offsets]) : vpgatherdd(d | k2, ptr[rdx + offsets]);
  } else {
    f32 ? vgatherdps(d, ptr[rdx + offsets], avx2_mask)
        : vpgatherdd(d, ptr[rdx + offsets], avx2_mask);
  }
  if (!bytes && !half) return;
  vpsrlvd(d, d, spare);
  if (half) {
    // The halfwords (the high ones are shifted out) packed to consecutive words, widened.
    if (avx512()) {
      const Xbyak::Ymm w(d.getIdx());
      vpmovdw(w, d);
      vcvtph2ps(d, w);
    } else {
      const Xbyak::Ymm y(d.getIdx());
      const Xbyak::Xmm x(d.getIdx());
      vpand(y, y, consts_.u32(0xFFFFu));
      vpackusdw(y, y, y);  // per 128-bit half: its 4 words twice
      vpermq(y, y, 0x08);  // qwords 0 and 2: the 8 words in order
      vcvtph2ps(y, x);
    }
  } else if (dt == DType::I8) {
    vpslld(d, d, 24);
    vpsrad(d, d, 24);
  } else {
    avx512() ? vpandd(d, d, consts_.u32(0xFFu)) : vpand(d, d, consts_.u32(0xFFu));
  }
}

// A masked 32-bit load whose masked-off lanes may be outside the arg: only lanes that are
// active (before the tail) and true in `mask` are read (masked moves and gathers suppress
// faults of the others), the rest are 0.
void KernelEmitter::masked_read(int a, const Reg64& b, const Xmm& d, const Xmm& mask, bool tail) {
  const Access& acc = L_.accesses[a];
  const DType dt = k_.args[k_.code[acc.instr].arg].dtype;
  const Xmm s0 = vec(math_[0]), s1 = vec(math_[1]);
  const Xbyak::Ymm y1(s1.getIdx());
  // The lanes to read: k2 (AVX-512) or s1 (AVX2).
  if (avx512()) {
    mask_to_k(k2, mask);
    if (tail) kandw(k2, k2, k1);
  } else if (tail) {
    vpand(y1, Xbyak::Ymm(mask.getIdx()), Xbyak::Ymm(tail_vreg_));
  } else {
    vmovaps(y1, Xbyak::Ymm(mask.getIdx()));
  }
  if (acc.checked) check_lane_reads(acc.instr, a, b, y1);
  // Elements narrower than 32 bits are gathered through their dwords (gather32).
  const bool narrow = dt == DType::U8 || dt == DType::I8 || dt == DType::F16;
  if (acc.vec_coeff == 0) {  // one element, read when some lane needs it
    Label none, done;
    if (avx512()) {
      kortestw(k2, k2);
    } else {
      vtestps(y1, y1);
    }
    jz(none, T_NEAR);
    if (narrow) {
      broadcast_load(dt, b, d);
    } else {
      vbroadcastss(d, dword[b]);
    }
    vandps(d, d, mask);
    jmp(done, T_NEAR);
    L(none);
    vxorps(d, d, d);
    L(done);
    return;
  }
  if (acc.vec_coeff == 1 && !narrow) {
    // Skipped when no lane is read: a masked move whose masked-off lanes lie in unmapped
    // pages takes a fault-suppression assist, about 500 times the cost of the move (a pool
    // with pads of 10^6 ran 475 ns per output, 5 s over 9 million).
    Label none, done;
    if (avx512()) {
      kortestw(k2, k2);
    } else {
      vtestps(y1, y1);
    }
    jz(none, T_NEAR);
    const Xbyak::RegExp at = lane0(a, b);
    if (avx512()) {
      vmovups(d | k2 | T_z, ptr[at]);
    } else {
      vmaskmovps(d, y1, ptr[at]);
    }
    jmp(done, T_NEAR);
    L(none);
    vxorps(d, d, d);
    L(done);
    return;
  }
  // Strided, or consecutive narrow elements: a gather of the lanes to read.
  const int64_t stride = acc.vec_coeff * acc.esize;
  imul(rdx, rbx, static_cast<int>(stride));
  add(rdx, b);
  vmovups(s0, lane_ints(stride));
  gather32(dt, d, s0, s1, vec(math_[3]));
}

// v's 32-bit lanes to b + lane * stride bytes (vec_coeff 0 is refused by the analysis).
void KernelEmitter::strided_store(DType dt, const Reg64& b, int64_t stride, const Xmm& v,
                                  bool tail) {
  const Xmm s0 = vec(math_[0]), s1 = vec(math_[1]);
  imul(rdx, rbx, static_cast<int>(stride));
  add(rdx, b);
  if (avx512()) {
    vmovups(s0, lane_ints(stride));
    active_lanes(tail, s1);
    if (dt == DType::F32) {
      vscatterdps(ptr[rdx + s0] | k2, v);
    } else {
      vpscatterdd(ptr[rdx + s0] | k2, v);
    }
    return;
  }
  vmovups(ptr[rsp + buf_off_], v);
  Label done;
  if (tail) {
    mov(rcx, r12);
    sub(rcx, rbx);
  }
  for (int l = 0; l < lanes_; ++l) {
    if (tail) {
      cmp(rcx, l);
      jle(done, T_NEAR);
    }
    mov(eax, dword[rsp + buf_off_ + 4 * l]);
    mov(dword[rdx + static_cast<int>(l * stride)], eax);
  }
  L(done);
}

// The int64 elements of value `value` (in v) to the consecutive elements at `at`.
void KernelEmitter::i64_store(int value, const RegExp& at, const Xmm& v, bool tail) {
  const Xmm s0 = vec(math_[0]), s1 = vec(math_[1]), s2 = vec(math_[2]);
  if (L_.wide[value] == Wide::Convert) return convert_i64_store(at, v, tail);
  // int32 lanes, sign-extended; a uniform value is broadcast at full width.
  const bool wide = L_.uniform[value];
  const int half = vbytes_;  // bytes of one half: lanes/2 int64 values
  if (avx512()) {
    if (wide) {
      vpbroadcastq(s0, home64(value));
      vmovaps(s1, s0);
    } else {
      vpmovsxdq(s0, Xbyak::Ymm(v.getIdx()));
      vextracti32x8(Xbyak::Ymm(s1.getIdx()), Xbyak::Zmm(v.getIdx()), 1);
      vpmovsxdq(s1, Xbyak::Ymm(s1.getIdx()));
    }
    if (tail) {
      kshiftrw(k3, k1, 8);
      vmovdqu64(ptr[at] | k1, s0);
      vmovdqu64(ptr[at + half] | k3, s1);
    } else {
      vmovdqu64(ptr[at], s0);
      vmovdqu64(ptr[at + half], s1);
    }
    return;
  }
  if (wide) {
    vpbroadcastq(s0, home64(value));
    vmovaps(s1, s0);
  } else {
    vpmovsxdq(s0, Xbyak::Xmm(v.getIdx()));
    vextracti128(Xbyak::Xmm(s1.getIdx()), Xbyak::Ymm(v.getIdx()), 1);
    vpmovsxdq(s1, Xbyak::Xmm(s1.getIdx()));
  }
  if (!tail) {
    vmovdqu(ptr[at], s0);
    vmovdqu(ptr[at + half], s1);
    return;
  }
  lea(rdx, ptr[at]);
  vpmovsxdq(s2, Xbyak::Xmm(tail_vreg_));
  vpmaskmovq(ptr[rdx], s2, s0);
  vextracti128(Xbyak::Xmm(s2.getIdx()), Xbyak::Ymm(tail_vreg_), 1);
  vpmovsxdq(s2, Xbyak::Xmm(s2.getIdx()));
  vpmaskmovq(ptr[rdx + half], s2, s1);
  return;
}

// The low byte of each int32 lane of v (a Bool's 0 or 1; an integer's, as the reference's
// store wraps) to the consecutive bytes at `at`.
void KernelEmitter::byte_store(const RegExp& at, const Xmm& v, bool tail) {
  if (avx512()) {
    if (tail) {
      vpmovdb(ptr[at] | k1, v);
    } else {
      vpmovdb(ptr[at], v);
    }
    return;
  }
  const Xmm s0 = vec(math_[0]);
  vpand(s0, v, consts_.u32(0xFFu));  // 0..255: the unsigned packs below are exact
  vpackusdw(s0, s0, s0);
  vpermq(Xbyak::Ymm(s0.getIdx()), Xbyak::Ymm(s0.getIdx()), 0x08);
  vpackuswb(s0, s0, s0);
  if (!tail) {
    vmovq(ptr[at], Xbyak::Xmm(s0.getIdx()));
  } else {
    lea(rdx, ptr[at]);
    vmovq(ptr[rsp + buf_off_], Xbyak::Xmm(s0.getIdx()));
    stage_out(rdx, 1);
  }
}

void KernelEmitter::vector_store(int id, const Xmm& v, const Xmm* /*mask*/, bool tail) {
  const Instr& in = k_.code[id];
  const int a = L_.access[id];
  const Access& acc = L_.accesses[a];
  const DType dt = k_.args[in.arg].dtype;
  const Xmm s0 = vec(math_[0]);
  const Reg64 b = base_reg(a);
  if (acc.vec_coeff != 1) return strided_store(dt, b, acc.vec_coeff * acc.esize, v, tail);
  const RegExp at = lane0(a, b);
  switch (dt) {
    case DType::F32:
    case DType::I32:
      if (!tail) {
        vmovups(ptr[at], v);
      } else if (avx512()) {
        vmovups(ptr[at] | k1, v);
      } else {
        vmaskmovps(ptr[at], Xbyak::Ymm(tail_vreg_), v);
      }
      return;
    case DType::F16:
      if (avx512()) {
        if (tail) {
          vcvtps2ph(ptr[at] | k1, v, 0);
        } else {
          vcvtps2ph(ptr[at], v, 0);
        }
      } else {
        vcvtps2ph(Xbyak::Xmm(s0.getIdx()), v, 0);
        if (!tail) {
          vmovups(ptr[at], Xbyak::Xmm(s0.getIdx()));
        } else {
          lea(rdx, ptr[at]);
          vmovups(ptr[rsp + buf_off_], Xbyak::Xmm(s0.getIdx()));
          stage_out(rdx, 2);
        }
      }
      return;
    case DType::Bool:
      vpsrld(s0, v, 31);
      return byte_store(at, s0, tail);
    case DType::U8:
    case DType::I8:
      return byte_store(at, v, tail);
    case DType::I64:
      return i64_store(in.a, at, v, tail);
    default:
      fail("jit: vector store of ", dtype_name(dt));
  }
}

void KernelEmitter::scalar_load(int id) {
  const Instr& in = k_.code[id];
  const DType dt = k_.args[in.arg].dtype;
  const Xbyak::Xmm t(temps_[0]);  // uniform code keeps no value in registers
  Label zero, done;
  if (in.mask >= 0) {
    cmp(home32(in.mask), 0);
    je(zero, T_NEAR);
  }
  base_of(L_.access[id], rax);
  if (L_.accesses[L_.access[id]].checked) check_scalar_read(id, L_.access[id]);
  switch (dt) {
    case DType::F32:
      mov(ecx, dword[rax]);
      mov(home32(id), ecx);
      break;
    case DType::F16:
      movzx(ecx, word[rax]);
      vmovd(t, ecx);
      vcvtph2ps(t, t);
      vmovss(home32(id), t);
      break;
    case DType::Bool:
      cmp(byte[rax], 0);
      setne(cl);
      movzx(ecx, cl);
      neg(ecx);
      mov(home32(id), ecx);
      break;
    case DType::U8:
      movzx(ecx, byte[rax]);
      mov(home64(id), rcx);
      break;
    case DType::I8:
      movsx(rcx, byte[rax]);
      mov(home64(id), rcx);
      break;
    case DType::U16:
      movzx(ecx, word[rax]);
      mov(home64(id), rcx);
      break;
    case DType::I16:
      movsx(rcx, word[rax]);
      mov(home64(id), rcx);
      break;
    case DType::I32:
      movsxd(rcx, dword[rax]);
      mov(home64(id), rcx);
      break;
    case DType::U32:
      mov(ecx, dword[rax]);
      mov(home64(id), rcx);
      break;
    default:  // I64, U64
      mov(rcx, qword[rax]);
      mov(home64(id), rcx);
      break;
  }
  if (in.mask >= 0) {
    jmp(done, T_NEAR);
    L(zero);
    mov(home64(id), 0);
    L(done);
  }
}

void KernelEmitter::scalar_store(int id) {
  const Instr& in = k_.code[id];
  const DType dt = k_.args[in.arg].dtype;
  const Xbyak::Xmm t(temps_[0]);
  base_of(L_.access[id], rax);
  switch (dt) {
    case DType::F32:
      mov(ecx, home32(in.a));
      mov(dword[rax], ecx);
      break;
    case DType::F16:
      vmovss(t, home32(in.a));
      vcvtps2ph(t, t, 0);
      vpextrw(word[rax], t, 0);
      break;
    case DType::Bool:
      mov(ecx, home32(in.a));
      and_(ecx, 1);
      mov(byte[rax], cl);
      break;
    default:
      mov(rcx, home64(in.a));
      switch (dtype_size(dt)) {
        case 1:
          mov(byte[rax], cl);
          break;
        case 2:
          mov(word[rax], cx);
          break;
        case 4:
          mov(dword[rax], ecx);
          break;
        default:
          mov(qword[rax], rcx);
          break;
      }
      break;
  }
}

}  // namespace jit
}  // namespace ferrite
