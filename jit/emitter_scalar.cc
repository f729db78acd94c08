// KernelEmitter: uniform instructions (the same value in every lane). They run once per
// row, step or call, so they favour simplicity: operands come from their homes, int64
// values are computed in general registers, F32 and Bool values as broadcast vectors in
// the temporaries, and every result goes back to its home (lane 0).
#include <cstring>
#include <limits>

#include "compiler/plan/error.h"
#include "compiler/plan/scalar_ops.h"
#include "jit/kernel_codegen.h"
#include "jit/kernel_emitter.h"

namespace ferrite {
namespace jit {

using namespace Xbyak;

void KernelEmitter::fail_exit(int id, const Reg64& value) {
  mov(rdx, misc(kCall));
  mov(qword[rdx + offsetof(JitCall, error_value)], value);
  mov(qword[rdx + offsetof(JitCall, error_id)], id + 1);
  jmp(exit_, T_NEAR);
}

void KernelEmitter::check_index(int id) {
  const Instr& in = k_.code[id];
  Label skip, nonneg, fail, done;
  if (in.mask >= 0) {
    cmp(home32(in.mask), 0);
    je(skip, T_NEAR);
  }
  mov(rax, home64(in.a));
  mov(rcx, rax);
  mov(rdx, in.iimm);
  test(rax, rax);
  jns(nonneg);
  add(rax, rdx);
  L(nonneg);
  cmp(rax, rdx);
  jae(fail, T_NEAR);  // unsigned: still negative, or >= n
  mov(home64(id), rax);
  jmp(done, T_NEAR);
  L(fail);
  fail_exit(id, rcx);
  L(skip);
  mov(qword[rsp + home_off_ + id * vbytes_], 0);  // an unchecked point's index is 0
  L(done);
}

// home32(id) = -1 when the flags' condition holds, else 0 (a Bool value).
void KernelEmitter::bool_from_flags(int id, void (CodeGenerator::*setcc)(const Operand&)) {
  (this->*setcc)(cl);
  movzx(ecx, cl);
  neg(ecx);
  mov(home32(id), ecx);
}

void KernelEmitter::uniform_i64_cast(int id) {
  const Instr& in = k_.code[id];
  const ScalarType from = k_.code[in.a].type;
  const Xbyak::Xmm t(temps_[0]);
  if (in.type == ScalarType::F32) {  // from I64
    mov(rax, home64(in.a));
    vcvtsi2ss(t, t, rax);
    vmovss(home32(id), t);
  } else if (in.type == ScalarType::Bool) {  // from I64
    cmp(home64(in.a), 0);
    bool_from_flags(id, &CodeGenerator::setne);
  } else if (from == ScalarType::Bool) {
    mov(eax, home32(in.a));
    and_(eax, 1);
    mov(home64(id), rax);
  } else if (from == ScalarType::F32) {
    // Truncate; NaN -> 0, saturating at both ends (cvttss2si gives INT64_MIN outside).
    Label nan, done;
    vmovss(t, home32(in.a));
    vcvttss2si(rax, t);
    vucomiss(t, t);
    jp(nan);
    vucomiss(t, consts_.f32(9223372036854775808.0f));  // 2^63
    jb(done);
    mov(rax, std::numeric_limits<int64_t>::max());
    jmp(done);
    L(nan);
    xor_(eax, eax);
    L(done);
    mov(home64(id), rax);
  } else {
    mov(rax, home64(in.a));
    mov(home64(id), rax);
  }
}

// rax = rax op home64(in.b) for Div, Mod and FMod, as the reference: x / 0 = 0, x % 0 = 0;
// x / -1 = -x (wrapping), x % -1 = 0.
void KernelEmitter::uniform_i64_divide(const Instr& in) {
  Label zero, minus_one, done;
  mov(rcx, home64(in.b));
  test(rcx, rcx);
  jz(zero, T_NEAR);
  cmp(rcx, -1);
  je(minus_one, T_NEAR);
  cqo();
  idiv(rcx);
  if (in.op != Op::Div) {
    if (in.op == Op::Mod) {  // the result takes the divisor's sign
      Label keep;
      test(rdx, rdx);
      jz(keep);
      mov(rax, rdx);
      xor_(rax, rcx);
      jns(keep);
      add(rdx, rcx);
      L(keep);
    }
    mov(rax, rdx);
  }
  jmp(done, T_NEAR);
  L(minus_one);
  if (in.op == Op::Div) {
    neg(rax);
    jmp(done, T_NEAR);
  }
  L(zero);
  xor_(eax, eax);
  L(done);
}

void KernelEmitter::uniform_i64(int id) {
  const Instr& in = k_.code[id];
  if (in.op == Op::Cast) return uniform_i64_cast(id);
  if (in.op == Op::Where) {
    mov(rax, home64(in.c));
    cmp(home32(in.a), 0);
    cmovne(rax, home64(in.b));
    mov(home64(id), rax);
    return;
  }
  if (op_is_compare(in.op)) {
    mov(rax, home64(in.a));
    cmp(rax, home64(in.b));
    switch (in.op) {
      case Op::Eq:
        return bool_from_flags(id, &CodeGenerator::sete);
      case Op::Lt:
        return bool_from_flags(id, &CodeGenerator::setl);
      case Op::Le:
        return bool_from_flags(id, &CodeGenerator::setle);
      case Op::Gt:
        return bool_from_flags(id, &CodeGenerator::setg);
      default:
        return bool_from_flags(id, &CodeGenerator::setge);
    }
  }
  mov(rax, home64(in.a));
  switch (in.op) {
    case Op::Neg:
      neg(rax);
      break;
    case Op::Abs:
      mov(rcx, rax);
      neg(rax);
      cmovl(rax, rcx);
      break;
    case Op::Relu:
      xor_(ecx, ecx);
      test(rax, rax);
      cmovs(rax, rcx);
      break;
    case Op::Sign:
      mov(rdx, rax);
      sar(rdx, 63);
      xor_(ecx, ecx);
      test(rax, rax);
      setg(cl);
      lea(rax, ptr[rcx + rdx]);
      break;
    case Op::Add:
      add(rax, home64(in.b));
      break;
    case Op::Sub:
      sub(rax, home64(in.b));
      break;
    case Op::Mul:
      imul(rax, home64(in.b));
      break;
    case Op::Max:
      cmp(rax, home64(in.b));
      cmovl(rax, home64(in.b));
      break;
    case Op::Min:
      cmp(rax, home64(in.b));
      cmovg(rax, home64(in.b));
      break;
    case Op::Div:
    case Op::Mod:
    case Op::FMod:
      uniform_i64_divide(in);
      break;
    default:
      fail("jit: uniform ", op_name(in.op), " on I64");
  }
  mov(home64(id), rax);
}

void KernelEmitter::uniform_instr(int id) {
  const Instr& in = k_.code[id];
  switch (in.op) {
    case Op::Const: {
      const Scalar s = make_const(in.type, in.fimm, in.iimm);
      if (in.type == ScalarType::I64) {
        mov(rax, s.i64);
        mov(home64(id), rax);
      } else if (in.type == ScalarType::F32) {
        uint32_t bits;
        std::memcpy(&bits, &s.f32, 4);
        mov(home32(id), bits);
      } else {
        mov(home32(id), s.b ? 0xFFFFFFFFu : 0u);
      }
      return;
    }
    case Op::LoopVar:
      mov(rax, var_slot(in.arg));
      mov(home64(id), rax);
      return;
    case Op::Load:
      return scalar_load(id);
    case Op::Store:
      return scalar_store(id);
    case Op::CheckIndex:
      return check_index(id);
    default:
      break;
  }
  const bool int_operand =
      in.a >= 0 && k_.code[in.a].type == ScalarType::I64 && !(in.op == Op::Where);
  if (in.type == ScalarType::I64 || int_operand) return uniform_i64(id);
  // F32 and Bool values: the vector code on broadcast operands, lane 0 kept.
  Xmm ops[4] = {Xmm(0), Xmm(0), Xmm(0), Xmm(0)};
  int n = 0;
  auto take = [&](int u) {
    ops[n] = fetch(u, n);
    ++n;
  };
  const int arity = op_arity(in.op);
  if (arity >= 1) take(in.a);
  if (arity >= 2) take(in.b);
  if (arity >= 3) take(in.c);
  const Xmm d = vec(temps_[static_cast<size_t>(n) < temps_.size() ? n : 0]);
  vector_instr(id, d, ops, false);
  vmovss(home32(id), Xbyak::Xmm(d.getIdx()));
}

}  // namespace jit
}  // namespace ferrite
