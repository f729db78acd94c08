// KernelEmitter: value instructions on vectors. F32 in 32-bit float lanes, Bool as 32-bit
// lane masks, I64 (proven to fit) as int32 lanes. Multi-instruction sequences compute into
// math scratch registers and write the destination last, so it may alias an operand.
#include <cmath>
#include <cstring>

#include "compiler/plan/error.h"
#include "jit/kernel_analysis.h"
#include "jit/kernel_emitter.h"
#include "jit/vec_math.h"

namespace ferrite {
namespace jit {

using namespace Xbyak;

namespace {

// vcmpps predicates.
constexpr uint8_t kEqOQ = 0x00, kLtOS = 0x01, kLeOS = 0x02, kUnordQ = 0x03, kOrdQ = 0x07,
                  kNeqUQ = 0x04, kGeOS = 0x0D, kGtOS = 0x0E;

uint8_t float_predicate(Op op) {
  switch (op) {
    case Op::Eq:
      return kEqOQ;
    case Op::Lt:
      return kLtOS;
    case Op::Le:
      return kLeOS;
    case Op::Gt:
      return kGtOS;
    default:
      return kGeOS;
  }
}

}  // namespace

void KernelEmitter::mask_to_k(const Opmask& k, const Xmm& m) {
  vpmovd2m(k, m);
}

void KernelEmitter::k_to_mask(const Xmm& d, const Opmask& k) {
  vpmovm2d(d, k);
}

void KernelEmitter::vector_instr(int id, const Xmm& d, const Xmm* ops, bool tail) {
  const Instr& in = k_.code[id];
  switch (in.op) {
    case Op::LoopVar: {
      if (in.arg != L_.vec_var) {  // a scalar loop's variable, the same in every lane
        vpbroadcastd(d, dword[rsp + var_off_ + in.arg * 8]);
        return;
      }
      if (avx512()) {
        vpbroadcastd(d, ebx);
      } else {
        vmovd(Xbyak::Xmm(d.getIdx()), ebx);
        vpbroadcastd(d, Xbyak::Xmm(d.getIdx()));
      }
      vpaddd(d, d, lane_ints(1));
      return;
    }
    case Op::Cast:
      if ((k_.code[in.a].op == Op::Load && L_.wide[in.a] == Wide::Float) ||
          L_.wide[id] == Wide::Convert) {  // loaded as f32, or converted by its stores
        if (d.getIdx() != ops[0].getIdx()) vmovaps(d, ops[0]);
        return;
      }
      vec_cast(k_.code[in.a].type, in.type, d, ops[0]);
      return;
    case Op::Where:
      vec_where(d, ops[0], ops[1], ops[2]);
      return;
    case Op::CheckIndex:
      vec_check_index(id, d, ops[0], in.mask >= 0 ? &ops[1] : nullptr, tail);
      return;
    case Op::And:
      vandps(d, ops[0], ops[1]);
      return;
    case Op::Or:
      vorps(d, ops[0], ops[1]);
      return;
    case Op::Xor:
      vxorps(d, ops[0], ops[1]);
      return;
    case Op::Not:
      vxorps(d, ops[0], consts_.u32(0xFFFFFFFFu));
      return;
    default:
      break;
  }
  if (op_is_compare(in.op)) return vec_compare(in.op, k_.code[in.a].type, d, ops[0], ops[1]);
  if (op_arity(in.op) == 1) return vec_unary(in, d, ops[0]);
  if (op_arity(in.op) == 2) return vec_binary(in, d, ops[0], ops[1]);
  fail("jit: kernel '", k_.name, "': no vector form of ", op_name(in.op));
}

// d = a + n where a < 0, else a, for an index a checked against [-n, n) in every active
// lane (not past the tail, mask true); a lane that fails ends the kernel with the error of
// check `id` (the backend re-runs a failed kernel on the portable backend for the message of
// the reference's first failing point). Masked-off lanes give 0, as the reference.
void KernelEmitter::vec_check_index(int id, const Xmm& d, const Xmm& a, const Xmm* mask,
                                    bool tail) {
  const int64_t n = k_.code[id].iimm;
  const Xmm s0 = vec(math_[0]), s1 = vec(math_[1]), s2 = vec(math_[2]);
  Label ok;
  vpsrad(s0, a, 31);
  vandps(s0, s0, consts_.u32(static_cast<uint32_t>(n)));
  vpaddd(s0, s0, a);
  if (avx512()) {
    active_lanes(tail, s1);
    if (mask) {
      vptestmd(k3, *mask, *mask);
      kandw(k2, k2, k3);
    }
    vpcmpud(k3 | k2, s0, consts_.u32(static_cast<uint32_t>(n)), 5);  // t >= n, unsigned
    kortestw(k3, k3);
    jz(ok, T_NEAR);
    kmovw(eax, k3);
  } else {
    vpxor(s1, s1, s1);
    vpcmpgtd(s1, s1, s0);                                         // t < 0
    vpcmpgtd(s2, s0, consts_.u32(static_cast<uint32_t>(n - 1)));  // t > n - 1
    vpor(s1, s1, s2);
    if (tail) vpand(s1, s1, Xbyak::Ymm(tail_vreg_));
    if (mask) vpand(s1, s1, *mask);
    vmovmskps(eax, s1);
    test(eax, eax);
    jz(ok, T_NEAR);
  }
  // The first failing lane's index, for the error.
  bsf(eax, eax);
  vmovups(ptr[rsp + buf_off_], a);
  movsxd(rcx, dword[rsp + buf_off_ + rax * 4]);
  fail_exit(id, rcx);
  L(ok);
  if (mask) {
    vandps(d, s0, *mask);
  } else {
    vmovaps(d, s0);
  }
}

void KernelEmitter::vec_cast(ScalarType from, ScalarType to, const Xmm& d, const Xmm& a) {
  const Xmm s0 = vec(math_[0]);
  if (from == to) {
    if (d.getIdx() != a.getIdx()) vmovaps(d, a);
    return;
  }
  if (to == ScalarType::F32) {
    if (from == ScalarType::Bool) return vandps(d, a, consts_.f32(1.0f));
    return vcvtdq2ps(d, a);  // int32 lanes
  }
  if (to == ScalarType::I64) {
    if (from == ScalarType::Bool) return vpsrld(d, a, 31);
    if (from != ScalarType::F32) fail("jit: vector cast to I64 from ", scalar_type_name(from));
    // Truncated into int32 lanes (the analysis proved the bounds), NaN to 0 as the reference.
    if (avx512()) {
      vcmpps(k2, a, a, kUnordQ);
      vcvttps2dq(d, a);
      vpxord(d | k2, d, d);
    } else {
      vcmpps(s0, a, a, kOrdQ);
      vcvttps2dq(d, a);
      vpand(d, d, s0);
    }
    return;
  }
  // to Bool: x != 0 (NaN != 0 is true).
  vxorps(s0, s0, s0);
  if (from == ScalarType::F32) {
    if (avx512()) {
      vcmpps(k2, a, s0, kNeqUQ);
      k_to_mask(d, k2);
    } else {
      vcmpps(d, a, s0, kNeqUQ);
    }
    return;
  }
  if (avx512()) {
    vpcmpd(k2, a, s0, 4);  // NE
    k_to_mask(d, k2);
  } else {
    vpcmpeqd(s0, a, s0);
    vpxor(d, s0, consts_.u32(0xFFFFFFFFu));
  }
}

void KernelEmitter::vec_where(const Xmm& d, const Xmm& c, const Xmm& b, const Xmm& e) {
  if (avx512()) {
    mask_to_k(k2, c);
    vblendmps(d | k2, e, b);
  } else {
    vblendvps(d, e, b, c);
  }
}

void KernelEmitter::vec_compare(Op op, ScalarType t, const Xmm& d, const Xmm& a, const Xmm& b) {
  if (t == ScalarType::F32) {
    const uint8_t p = float_predicate(op);
    if (avx512()) {
      vcmpps(k2, a, b, p);
      k_to_mask(d, k2);
    } else {
      vcmpps(d, a, b, p);
    }
    return;
  }
  // int32 lanes (I64) or masks (Bool: only Eq).
  if (avx512()) {
    uint8_t p = 0;
    switch (op) {
      case Op::Eq:
        p = 0;
        break;
      case Op::Lt:
        p = 1;
        break;
      case Op::Le:
        p = 2;
        break;
      case Op::Gt:
        p = 6;
        break;
      default:
        p = 5;
        break;
    }
    vpcmpd(k2, a, b, p);
    k_to_mask(d, k2);
    return;
  }
  const Xmm s0 = vec(math_[0]);
  switch (op) {
    case Op::Eq:
      vpcmpeqd(d, a, b);
      return;
    case Op::Gt:
      vpcmpgtd(d, a, b);
      return;
    case Op::Lt:
      vpcmpgtd(d, b, a);
      return;
    case Op::Le:
      vpcmpgtd(s0, a, b);
      vpxor(d, s0, consts_.u32(0xFFFFFFFFu));
      return;
    default:  // Ge
      vpcmpgtd(s0, b, a);
      vpxor(d, s0, consts_.u32(0xFFFFFFFFu));
      return;
  }
}

// d = op(a) on int64 values held as int32 lanes.
void KernelEmitter::vec_unary_i64(const Instr& in, const Xmm& d, const Xmm& a) {
  const Xmm s0 = vec(math_[0]), s1 = vec(math_[1]), s2 = vec(math_[2]);
  switch (in.op) {
    case Op::Neg:
      vxorps(s0, s0, s0);
      vpsubd(d, s0, a);
      return;
    case Op::Abs:
      vpabsd(d, a);
      return;
    case Op::Relu:
      vxorps(s0, s0, s0);
      vpmaxsd(d, a, s0);
      return;
    case Op::Sign:  // (a > 0) - (a < 0): masks are -1, so (a < 0) - (a > 0)
      vxorps(s0, s0, s0);
      if (avx512()) {
        vpcmpd(k2, a, s0, 6);
        k_to_mask(s1, k2);
        vpcmpd(k2, a, s0, 1);
        k_to_mask(s2, k2);
      } else {
        vpcmpgtd(s1, a, s0);
        vpcmpgtd(s2, s0, a);
      }
      vpsubd(d, s2, s1);
      return;
    default:
      fail("jit: vector ", op_name(in.op), " on I64");
  }
}

void KernelEmitter::vec_unary(const Instr& in, const Xmm& d, const Xmm& a) {
  const Xmm s0 = vec(math_[0]), s1 = vec(math_[1]), s2 = vec(math_[2]);
  if (k_.code[in.a].type == ScalarType::I64) return vec_unary_i64(in, d, a);
  switch (in.op) {
    case Op::Neg:
      return vxorps(d, a, consts_.u32(0x80000000u));
    case Op::Abs:
      return vandps(d, a, consts_.u32(0x7FFFFFFFu));
    case Op::Relu:  // vmaxps returns its second operand for NaN and for +-0 pairs
      vxorps(s0, s0, s0);
      return vmaxps(d, s0, a);
    case Op::Sqrt:
      return vsqrtps(d, a);
    case Op::Rsqrt:
      vsqrtps(s0, a);
      vmovups(s1, consts_.f32(1.0f));
      return vdivps(d, s1, s0);
    case Op::Reciprocal:
      vmovups(s1, consts_.f32(1.0f));
      return vdivps(d, s1, a);
    case Op::Floor:
    case Op::Ceil:
    case Op::Round: {
      const uint8_t imm = in.op == Op::Floor ? 0x09 : in.op == Op::Ceil ? 0x0A : 0x08;
      if (avx512()) return vrndscaleps(d, a, imm);
      return vroundps(d, a, imm);
    }
    case Op::Sign:  // +1, -1, or the value itself (+-0, NaN)
      vxorps(s0, s0, s0);
      if (avx512()) {
        vmovaps(s1, a);
        vcmpps(k2, a, s0, kGtOS);
        vmovups(s1 | k2, consts_.f32(1.0f));
        vcmpps(k2, a, s0, kLtOS);
        vmovups(s1 | k2, consts_.f32(-1.0f));
        return vmovaps(d, s1);
      }
      vcmpps(s1, a, s0, kGtOS);
      vcmpps(s2, a, s0, kLtOS);
      vblendvps(s1, a, consts_.f32(1.0f), s1);
      vmovups(s0, consts_.f32(-1.0f));
      return vblendvps(d, s1, s0, s2);
    case Op::Exp: {
      VecContext ctx = math_ctx();
      return emit_exp(ctx, d.getIdx(), a.getIdx());
    }
    case Op::Log: {
      VecContext ctx = math_ctx();
      return emit_log(ctx, d.getIdx(), a.getIdx());
    }
    case Op::Tanh: {
      VecContext ctx = math_ctx();
      return emit_tanh(ctx, d.getIdx(), a.getIdx());
    }
    case Op::Sigmoid: {
      VecContext ctx = math_ctx();
      return emit_sigmoid(ctx, d.getIdx(), a.getIdx());
    }
    case Op::Erf: {
      VecContext ctx = math_ctx();
      return emit_erf(ctx, d.getIdx(), a.getIdx());
    }
    case Op::IsNaN:
      if (avx512()) {
        vcmpps(k2, a, a, kUnordQ);
        return k_to_mask(d, k2);
      }
      return vcmpps(d, a, a, kUnordQ);
    case Op::IsInf:
      vandps(s0, a, consts_.u32(0x7FFFFFFFu));
      if (avx512()) {
        vcmpps(k2, s0, consts_.u32(0x7F800000u), kEqOQ);
        return k_to_mask(d, k2);
      }
      return vcmpps(d, s0, consts_.u32(0x7F800000u), kEqOQ);
    default:
      fail("jit: vector ", op_name(in.op), " on F32");
  }
}

void KernelEmitter::vec_pow_const(const Xmm& d, const Xmm& a, double e) {
  const Xmm s0 = vec(math_[0]);
  if (e == 1) {
    if (d.getIdx() != a.getIdx()) vmovaps(d, a);
  } else if (e == 2) {
    vmulps(d, a, a);
  } else if (e == 3) {
    vmulps(s0, a, a);
    vmulps(d, s0, a);
  } else {
    vmovups(s0, consts_.f32(1.0f));
    vdivps(d, s0, a);  // e == -1
  }
}

void KernelEmitter::vec_binary(const Instr& in, const Xmm& d, const Xmm& a, const Xmm& b) {
  const Xmm s0 = vec(math_[0]), s1 = vec(math_[1]), s2 = vec(math_[2]);
  if (k_.code[in.a].type == ScalarType::I64) {
    switch (in.op) {
      case Op::Add:
        return vpaddd(d, a, b);
      case Op::Sub:
        return vpsubd(d, a, b);
      case Op::Mul:
        return vpmulld(d, a, b);
      case Op::Max:
        return vpmaxsd(d, a, b);
      case Op::Min:
        return vpminsd(d, a, b);
      default:
        fail("jit: vector ", op_name(in.op), " on I64");
    }
  }
  switch (in.op) {
    case Op::Add:
      return vaddps(d, a, b);
    case Op::Sub:
      return vsubps(d, a, b);
    case Op::Mul:
      return vmulps(d, a, b);
    case Op::Div:
      return vdivps(d, a, b);
    case Op::Max:
    case Op::Min:
      // The reference propagates NaN (as a + b); vmaxps/vminps return the second operand.
      if (in.op == Op::Max) {
        vmaxps(s0, a, b);
      } else {
        vminps(s0, a, b);
      }
      vaddps(s1, a, b);
      if (avx512()) {
        vcmpps(k2, a, b, kUnordQ);
        vmovaps(s0 | k2, s1);
        return vmovaps(d, s0);
      }
      vcmpps(s2, a, b, kUnordQ);
      return vblendvps(d, s0, s1, s2);
    case Op::Pow: {
      if (small_integer_exponent(k_.code[in.b])) return vec_pow_const(d, a, k_.code[in.b].fimm);
      // emit_pow needs a destination apart from its operands; operands sit in temps 0 and 1
      // (or in pool registers), so the last temp is free.
      VecContext ctx = math_ctx();
      const bool aliased = d.getIdx() == a.getIdx() || d.getIdx() == b.getIdx();
      const int dst = aliased ? temps_.back() : d.getIdx();
      emit_pow(ctx, dst, a.getIdx(), b.getIdx());
      if (aliased) vmovaps(d, vec(dst));
      return;
    }
    default:
      fail("jit: vector ", op_name(in.op), " on F32");
  }
}

}  // namespace jit
}  // namespace ferrite
