// KernelEmitter: the frame, the loop structure of each mode, and register allocation.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <functional>

#include "compiler/plan/error.h"
#include "compiler/plan/pairwise_sum.h"
#include "jit/kernel_codegen.h"
#include "jit/kernel_emitter.h"

namespace ferrite {
namespace jit {

using namespace Xbyak;

namespace {

int region_key(const Layout& L, int id) {
  const Where w = L.where[id];
  const bool per_loop = w == Where::Hoist || w == Where::Step || w == Where::Vec;
  return static_cast<int>(w) * 4096 + (per_loop ? L.loop[id] : 0);
}

}  // namespace

KernelEmitter::KernelEmitter(const Layout& layout, size_t max_code)
    : CodeGenerator(max_code, Xbyak::DontSetProtectRWE),
      L_(layout),
      k_(layout.k),
      isa_(layout.isa),
      lanes_(layout.lanes),
      vbytes_(layout.isa == Isa::Avx512 ? 64 : 32),
      consts_(this, vbytes_) {
  if (avx512()) {
    for (int i = 0; i < 24; ++i) pool_.push_back(i);
    temps_ = {24, 25, 26, 27};
    math_ = {28, 29, 30, 31};
  } else {
    for (int i = 0; i < 8; ++i) pool_.push_back(i);
    tail_vreg_ = 8;
    temps_ = {9, 10, 11};
    math_ = {12, 13, 14, 15};
  }
  ptr_regs_ = {rsi, rdi, r8, r9, r10, r11, r13, r14, r15, rbp};
  const size_t n = k_.code.size();
  reg_of_.assign(n, -1);
  next_use_.assign(n, kNever);
  owner_.assign(32, -1);
  fixed_.assign(32, false);
  acc_.assign(n, -1);
  acc_idx_.assign(n, -1);
  base_reg_.assign(L_.accesses.size(), -1);
  // Which values leave their region: read by an instruction of another region, used as an
  // index leaf (general-register code reads homes), uniform (uniform code reads homes), or
  // a Reduce result (ready only after its loop).
  outside_.assign(n, false);
  for (size_t i = 0; i < n; ++i) {
    const Instr& in = k_.code[i];
    if (L_.uniform[i] || in.op == Op::Reduce) outside_[i] = true;
    for_each_value_operand(in, [&](int id) {
      if (region_key(L_, id) != region_key(L_, static_cast<int>(i))) outside_[id] = true;
    });
    if (in.index) {
      std::vector<int> leaves;
      index_values(*in.index, &leaves);
      for (int id : leaves) outside_[id] = true;
    }
  }
}

Xbyak::Address KernelEmitter::lane_ints(int64_t step) {
  std::vector<uint8_t> bytes(static_cast<size_t>(vbytes_));
  for (int l = 0; l < lanes_; ++l) {
    // Modulo 2^32, as the lanes' vpaddd/vpmulld arithmetic: (any step a plan holds; the
    // product in uint64_t, where a signed one overflows).
    const uint64_t wrapped = static_cast<uint64_t>(l) * static_cast<uint64_t>(step);
    const int32_t v = static_cast<int32_t>(static_cast<uint32_t>(wrapped));
    std::memcpy(bytes.data() + 4 * l, &v, 4);
  }
  return consts_.raw(bytes);
}

VecContext KernelEmitter::math_ctx() {
  return VecContext{*this, isa_, consts_, math_};
}

std::vector<int> KernelEmitter::region(Where w, int loop) const {
  std::vector<int> ids;
  const bool per_loop = w == Where::Hoist || w == Where::Step || w == Where::Vec;
  for (size_t i = 0; i < k_.code.size(); ++i)
    if (L_.where[i] == w && (!per_loop || L_.loop[i] == loop)) ids.push_back(static_cast<int>(i));
  return ids;
}

// ---- frame ---------------------------------------------------------------------------------

void KernelEmitter::layout_frame() {
  auto round64 = [](int x) { return (x + 63) & ~63; };
  int off = 0;
  misc_off_ = off;
  off = round64(off + (kExpr + kExprSlots) * 8);
  buf_off_ = off;
  off += 256;
  var_off_ = off;
  off = round64(off + static_cast<int>(k_.ranges.size()) * 8);
  ptr_off_ = off;
  off = round64(off + static_cast<int>(L_.accesses.size()) * 16);
  home_off_ = off;
  const size_t homes = k_.code.size() * static_cast<size_t>(vbytes_);
  if (homes > (size_t(4) << 20)) fail("jit: kernel '", k_.name, "' has too many values");
  level_off_ = round64(off + static_cast<int>(homes));
  const auto sums =
      std::count_if(level_slot_.begin(), level_slot_.end(), [](int s) { return s >= 0; });
  frame_ = level_off_ + static_cast<int>(sums) * leaf_levels_ * vbytes_;
}

void KernelEmitter::prologue() {
  push(rbx);
  push(rbp);
  push(r12);
  push(r13);
  push(r14);
  push(r15);
  mov(rax, rsp);
  sub(rsp, frame_);
  and_(rsp, -64);
  mov(misc(kSavedRsp), rax);
  mov(misc(kCall), rdi);
  mov(rsi, qword[rdi + offsetof(JitCall, row_vars)]);
  for (size_t i = 0; i < L_.outer_scalar.size(); ++i) {
    mov(rax, qword[rsi + static_cast<int>(i) * 8]);
    mov(var_slot(L_.outer_scalar[i]), rax);
  }
  mov(rsi, qword[rdi + offsetof(JitCall, row_ptrs)]);
  for (size_t a = 0; a < L_.accesses.size(); ++a) {
    mov(rax, qword[rsi + static_cast<int>(a) * 8]);
    mov(row_ptr(static_cast<int>(a)), rax);
    mov(cur_ptr(static_cast<int>(a)), rax);
  }
  mov(rax, qword[rdi + offsetof(JitCall, rows)]);
  mov(misc(kRowsLeft), rax);
  mov(rax, qword[rdi + offsetof(JitCall, vec_begin)]);
  mov(misc(kVecBegin), rax);
  mov(rax, qword[rdi + offsetof(JitCall, vec_end)]);
  mov(misc(kVecEnd), rax);
}

void KernelEmitter::epilogue() {
  L(exit_);
  vzeroupper();
  mov(rsp, misc(kSavedRsp));
  pop(r15);
  pop(r14);
  pop(r13);
  pop(r12);
  pop(rbp);
  pop(rbx);
  ret();
}

void KernelEmitter::generate() {
  plan_pairwise();
  layout_frame();
  prologue();
  reset_regs();
  emit_uniform_region(region(Where::Entry, 0));
  run_rows();
  epilogue();
  if (!consts_.empty()) align(64);  // the pool's alignment: padding listed as nops
  instruction_bytes_ = getSize();
  consts_.emit();
}

// ---- loops ---------------------------------------------------------------------------------

// Moves the odometer over `vars` one point on (innermost first): the variable's slot and the
// pointers of the accesses that walk it (row pointers, or cur pointers for the step
// odometer). Jumps to `again` unless every variable wrapped.
void KernelEmitter::advance(const std::vector<int>& vars, bool cur, const Label& again) {
  if (cur) inc(misc(kStepLin));
  for (auto it = vars.rbegin(); it != vars.rend(); ++it) {
    const int v = *it;
    inc(var_slot(v));
    for (size_t a = 0; a < L_.accesses.size(); ++a) {
      const Access& acc = L_.accesses[a];
      if (acc.form.coeff[v] == 0) continue;
      mov(rax, acc.form.coeff[v] * acc.esize);
      add(cur ? cur_ptr(static_cast<int>(a)) : row_ptr(static_cast<int>(a)), rax);
    }
    mov(rax, var_slot(v));
    cmp(rax, static_cast<uint32_t>(k_.ranges[v]));
    jl(again, T_NEAR);
    mov(var_slot(v), 0);
    for (size_t a = 0; a < L_.accesses.size(); ++a) {
      const Access& acc = L_.accesses[a];
      if (acc.form.coeff[v] == 0) continue;
      mov(rax, acc.form.coeff[v] * acc.esize * k_.ranges[v]);
      sub(cur ? cur_ptr(static_cast<int>(a)) : row_ptr(static_cast<int>(a)), rax);
    }
  }
}

void KernelEmitter::run_rows() {
  Label row;
  cmp(misc(kRowsLeft), 0);
  jle(exit_, T_NEAR);
  L(row);
  emit_uniform_region(region(Where::Row, 0));
  switch (L_.mode) {
    case Mode::Pointwise:
      pointwise_row();
      break;
    case Mode::LanesInner:
      lanes_inner_row();
      break;
    case Mode::LanesOuter:
      lanes_outer_row();
      break;
  }
  dec(misc(kRowsLeft));
  jz(exit_, T_NEAR);
  advance(L_.outer_scalar, false, row);
  jmp(exit_, T_NEAR);
}

void KernelEmitter::pointwise_row() {
  if (L_.vec_var >= 0) vector_loop(0);
}

void KernelEmitter::vector_loop(int loop) {
  const std::vector<int> ids = region(Where::Vec, loop);
  if (ids.empty()) return;
  const int accs = static_cast<int>(std::count(fixed_.begin(), fixed_.end(), true));
  const int locals = avx512() ? 10 : 4;
  pin(ids, static_cast<int>(pool_.size()) - accs - locals);
  load_bases(ids);
  if (L_.mode == Mode::LanesInner) {
    xor_(ebx, ebx);
    mov(r12, k_.ranges[L_.vec_var]);
  } else {
    mov(rbx, misc(kVecBegin));
    mov(r12, misc(kVecEnd));
  }
  if (blocked_rows(loop)) {
    // A leaf per block of kInnerLeaf vectors: r12 ends each block, the last at the row's end
    // (only that one has a tail).
    const int64_t n = k_.ranges[L_.vec_var];
    Label block;
    L(block);
    lea(r12, ptr[rbx + static_cast<int>(kInnerLeaf * lanes_)]);
    mov(rax, n);
    cmp(r12, rax);
    cmovg(r12, rax);
    chunks([&](bool tail) { vec_body(loop, tail); });
    push_leaves(loop);
    mov(rax, n);
    cmp(r12, rax);
    jl(block, T_NEAR);
  } else {
    chunks([&](bool tail) { vec_body(loop, tail); });
  }
  release_bases();
  unpin();
}

void KernelEmitter::vec_body(int loop, bool tail) {
  emit_varying_region(region(Where::Vec, loop), tail);
}

void KernelEmitter::set_tail_mask() {
  mov(rcx, r12);
  sub(rcx, rbx);
  if (avx512()) {
    mov(eax, 1);
    shl(eax, cl);
    dec(eax);
    kmovw(k1, eax);
  } else {
    const Xbyak::Ymm t(tail_vreg_);
    vmovd(Xbyak::Xmm(tail_vreg_), ecx);
    vpbroadcastd(t, Xbyak::Xmm(tail_vreg_));
    vpcmpgtd(t, t, lane_ints(1));
  }
}

void KernelEmitter::step_odometer(int loop, bool lanes_outer, bool tail) {
  for (int v : L_.reduce_scalar) mov(var_slot(v), 0);
  mov(misc(kStepLin), 0);
  for (size_t a = 0; a < L_.accesses.size(); ++a) {
    if (!L_.accesses[a].uses_reduce_scalar) continue;
    mov(rax, row_ptr(static_cast<int>(a)));
    mov(cur_ptr(static_cast<int>(a)), rax);
  }
  const std::vector<int> step = region(Where::Step, loop);
  if (lanes_outer) {
    const int accs = static_cast<int>(std::count(fixed_.begin(), fixed_.end(), true));
    pin(step, static_cast<int>(pool_.size()) - accs - (avx512() ? 10 : 4));
  }
  Label again;
  L(again);
  if (lanes_outer) {
    load_bases(step);
    emit_varying_region(step, tail);
    release_bases();
    after_pairwise_step(loop);
  } else {
    emit_uniform_region(step);
    vector_loop(loop);
    after_pairwise_row(loop);
  }
  advance(L_.reduce_scalar, true, again);
  if (lanes_outer) unpin();
}

void KernelEmitter::lanes_inner_row() {
  for (int loop = 0; loop < L_.num_loops(); ++loop) {
    emit_uniform_region(region(Where::Hoist, loop));
    init_accumulators(loop);
    if (L_.reduce_scalar.empty()) {
      mov(misc(kStepLin), 0);
      vector_loop(loop);
    } else {
      step_odometer(loop, false, false);
    }
    finish_accumulators(loop);
  }
  emit_uniform_region(region(Where::Post, 0));
}

void KernelEmitter::lanes_outer_row() {
  mov(rbx, misc(kVecBegin));
  mov(r12, misc(kVecEnd));
  chunks([&](bool tail) { lanes_outer_chunk(tail); });
}

// Walks rbx over [rbx, r12) in whole vectors (body(false)), then the masked rest
// (body(true)).
void KernelEmitter::chunks(const std::function<void(bool tail)>& body) {
  Label top, tail, done;
  L(top);
  lea(rax, ptr[rbx + lanes_]);
  cmp(rax, r12);
  jg(tail, T_NEAR);
  body(false);
  add(rbx, lanes_);
  jmp(top, T_NEAR);
  L(tail);
  cmp(rbx, r12);
  jge(done, T_NEAR);
  set_tail_mask();
  body(true);
  L(done);
}

void KernelEmitter::lanes_outer_chunk(bool tail) {
  in_tail_ = tail;
  emit_varying_region(region(Where::Chunk, 0), tail);
  for (int loop = 0; loop < L_.num_loops(); ++loop) {
    emit_varying_region(region(Where::Hoist, loop), tail);
    init_accumulators(loop);
    step_odometer(loop, true, tail);
    finish_accumulators(loop);
  }
  emit_varying_region(region(Where::Post, 0), tail);
  in_tail_ = false;
}

// ---- registers ---------------------------------------------------------------------------

void KernelEmitter::reset_regs() {
  for (size_t r = 0; r < owner_.size(); ++r) {
    if (fixed_[r]) continue;
    if (owner_[r] >= 0) reg_of_[owner_[r]] = -1;
    owner_[r] = -1;
  }
}

void KernelEmitter::emit_uniform_region(const std::vector<int>& ids) {
  for (int id : ids) uniform_instr(id);
}

KernelEmitter::Xmm KernelEmitter::fetch(int id, int temp) {
  if (reg_of_[id] >= 0) return vec(reg_of_[id]);
  const Xmm t = vec(temps_.at(static_cast<size_t>(temp)));
  if (L_.uniform[id]) {
    if (k_.code[id].type == ScalarType::I64) {
      vpbroadcastd(t, home32(id));
    } else {
      vbroadcastss(t, home32(id));
    }
  } else {
    vmovups(t, home(id));
  }
  return t;
}

int KernelEmitter::alloc(int id) {
  for (int r : pool_) {
    if (!fixed_[r] && owner_[r] < 0) {
      owner_[r] = id;
      reg_of_[id] = r;
      return r;
    }
  }
  // Spill the value whose next use is furthest away.
  int best = -1;
  int best_next = 0;
  for (int r : pool_) {
    if (fixed_[r]) continue;
    const int v = owner_[r];
    if (std::find(cur_uses_.begin(), cur_uses_.end(), v) != cur_uses_.end()) continue;
    const int next = next_use_[v];
    if (best < 0 || next > best_next) {
      best = r;
      best_next = next;
    }
  }
  if (best < 0) fail("jit: kernel '", k_.name, "': out of vector registers");
  const int v = owner_[best];
  if (!outside_[v]) {
    // Spilled for good: from now on the value lives in its home.
    vmovups(home(v), vec(best));
    outside_[v] = true;
  }
  reg_of_[v] = -1;
  owner_[best] = id;
  reg_of_[id] = best;
  return best;
}

void KernelEmitter::pin(const std::vector<int>& ids, int budget) {
  std::vector<int> defined(k_.code.size(), 0), uses(k_.code.size(), 0);
  for (int id : ids) defined[id] = 1;
  for (int id : ids)
    for_each_value_operand(k_.code[id], [&](int u) {
      if (!defined[u] && reg_of_[u] < 0 && acc_[u] < 0) ++uses[u];
    });
  std::vector<int> live_in;
  for (size_t v = 0; v < uses.size(); ++v)
    if (uses[v] > 0) live_in.push_back(static_cast<int>(v));
  std::stable_sort(live_in.begin(), live_in.end(), [&](int a, int b) { return uses[a] > uses[b]; });
  for (int v : live_in) {
    if (budget <= 0) break;
    int reg = -1;
    for (int r : pool_)
      if (!fixed_[r] && owner_[r] < 0) {
        reg = r;
        break;
      }
    if (reg < 0) break;
    const Xmm t = fetch(v, 0);
    vmovaps(vec(reg), t);
    reg_of_[v] = reg;
    owner_[reg] = v;
    fixed_[reg] = true;
    pinned_.push_back(v);
    --budget;
  }
}

void KernelEmitter::unpin() {
  for (int v : pinned_) {
    const int r = reg_of_[v];
    fixed_[r] = false;
    owner_[r] = -1;
    reg_of_[v] = -1;
  }
  pinned_.clear();
}

void KernelEmitter::plan_uses(const std::vector<int>& ids) {
  operand_begin_.assign(ids.size() + 1, 0);
  for (size_t pos = 0; pos < ids.size(); ++pos) {
    int n = 0;
    next_use_[ids[pos]] = kNever;
    for_each_value_operand(k_.code[ids[pos]], [&](int u) {
      next_use_[u] = kNever;
      ++n;
    });
    operand_begin_[pos + 1] = operand_begin_[pos] + n;
  }
  // Backwards, next_use_ is the first read at or after the position being visited.
  operand_next_.assign(static_cast<size_t>(operand_begin_.back()), kNever);
  def_next_.assign(ids.size(), kNever);
  for (size_t pos = ids.size(); pos-- > 0;) {
    const Instr& in = k_.code[ids[pos]];
    def_next_[pos] = next_use_[ids[pos]];
    int k = operand_begin_[pos];
    for_each_value_operand(in,
                           [&](int u) { operand_next_[static_cast<size_t>(k++)] = next_use_[u]; });
    for_each_value_operand(in, [&](int u) { next_use_[u] = static_cast<int>(pos); });
  }
}

void KernelEmitter::consume_operands(const std::vector<int>& ids, size_t pos) {
  int k = operand_begin_[pos];
  for_each_value_operand(k_.code[ids[pos]],
                         [&](int u) { next_use_[u] = operand_next_[static_cast<size_t>(k++)]; });
}

void KernelEmitter::free_dead(const std::vector<int>& ids, size_t pos) {
  const Instr& in = k_.code[ids[pos]];
  for_each_value_operand(in, [&](int u) {
    const int r = reg_of_[u];
    if (r < 0 || fixed_[r] || next_use_[u] != kNever) return;
    owner_[r] = -1;
    reg_of_[u] = -1;
  });
}

void KernelEmitter::emit_varying_region(const std::vector<int>& ids, bool tail) {
  reset_regs();
  const bool saved_tail = in_tail_;
  in_tail_ = tail;
  plan_uses(ids);
  for (size_t pos = 0; pos < ids.size(); ++pos) {
    const int id = ids[pos];
    const Instr& in = k_.code[id];
    if (in.op == Op::Load && L_.wide[id] == Wide::Copy) {  // copied by its Stores
      consume_operands(ids, pos);
      continue;
    }
    if (in.op == Op::Store && L_.wide[in.a] == Wide::Copy) {
      copy_i64_store(id, tail);
      consume_operands(ids, pos);
      continue;
    }
    cur_uses_.clear();
    for_each_value_operand(in, [&](int u) { cur_uses_.push_back(u); });
    Xmm ops[4] = {Xmm(0), Xmm(0), Xmm(0), Xmm(0)};
    int n = 0;
    for_each_value_operand(in, [&](int u) {
      ops[n] = fetch(u, n);
      ++n;
    });
    consume_operands(ids, pos);
    if (in.op == Op::Store) {
      vector_store(id, ops[0], in.mask >= 0 ? &ops[1] : nullptr, tail);
      free_dead(ids, pos);
      continue;
    }
    if (in.op == Op::Reduce) {
      accumulate(id, ops[0], tail);
      free_dead(ids, pos);
      continue;
    }
    free_dead(ids, pos);
    const int r = alloc(id);
    const Xmm d = vec(r);
    if (in.op == Op::Load) {
      vector_load(id, d, in.mask >= 0 ? &ops[0] : nullptr, tail);
    } else {
      vector_instr(id, d, ops, tail);
    }
    if (outside_[id]) vmovups(home(id), d);
    next_use_[id] = def_next_[pos];
    if (def_next_[pos] == kNever) {
      owner_[r] = -1;
      reg_of_[id] = -1;
    }
  }
  reset_regs();
  in_tail_ = saved_tail;
}

void KernelEmitter::load_bases(const std::vector<int>& ids) {
  size_t next = 0;
  for (int id : ids) {
    const int a = L_.access[id];
    if (a < 0 || base_reg_[a] >= 0) continue;
    if (next >= ptr_regs_.size()) break;
    base_of(a, ptr_regs_[next]);
    base_reg_[a] = static_cast<int>(next++);
  }
}

void KernelEmitter::release_bases() {
  std::fill(base_reg_.begin(), base_reg_.end(), -1);
}

}  // namespace jit
}  // namespace ferrite
