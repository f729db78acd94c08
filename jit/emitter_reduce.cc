// KernelEmitter: reduction accumulators. LanesInner keeps one vector accumulator per Reduce
// (lane l sums the elements l, l + lanes, ... of each row), blends the reduction's identity
// into the tail's missing lanes, and reduces horizontally when the row is done. LanesOuter
// gives each lane its own outer point, so the accumulators add in the reference's order
// and need no horizontal step. Long f32 Sums add pairwise (pairwise_sum.h): in LanesOuter
// with the reference's leaves and tree, so the bits stay the reference's.
#include <cstring>
#include <limits>

#include "compiler/plan/error.h"
#include "compiler/plan/pairwise_sum.h"
#include "jit/kernel_emitter.h"

namespace ferrite {
namespace jit {

using namespace Xbyak;

namespace {

constexpr uint8_t kUnordQ = 0x03, kOrdQ = 0x07, kNleUS = 0x06, kNgeUS = 0x09;

float identity(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::Sum:
      return 0.0f;
    case ReduceKind::Prod:
      return 1.0f;
    case ReduceKind::Max:
    case ReduceKind::ArgMax:
      return -std::numeric_limits<float>::infinity();
    default:
      return std::numeric_limits<float>::infinity();
  }
}

bool is_arg(ReduceKind kind) {
  return kind == ReduceKind::ArgMax || kind == ReduceKind::ArgMin;
}

int bit_length(int64_t x) {
  int b = 0;
  for (; x > 0; x >>= 1) ++b;
  return b;
}

}  // namespace

void KernelEmitter::plan_pairwise() {
  level_slot_.assign(k_.code.size(), -1);
  leaf_levels_ = 0;
  leaf_rows_ = 0;
  if (L_.mode == Mode::Pointwise) return;
  int64_t rows = 1;  // LanesOuter: every reduce point is a step
  for (int v : L_.reduce_scalar) rows *= k_.ranges[v];
  int64_t leaves = 0;
  if (L_.mode == Mode::LanesOuter) {
    leaves = rows / kPairwiseLeaf;  // a leaf at every kPairwiseLeaf-th step, as the reference
  } else {
    const int64_t vecs = (k_.ranges[L_.vec_var] + lanes_ - 1) / lanes_;
    if (vecs > kInnerLeaf) {
      leaves = rows * ((vecs + kInnerLeaf - 1) / kInnerLeaf);
    } else if (vecs * rows > kInnerLeaf) {
      leaf_rows_ = kInnerLeaf / vecs;
      leaves = rows / leaf_rows_;
    }
  }
  int slots = 0;
  for (int i = 0; i < k_.post_begin && leaves > 0; ++i) {
    const Instr& in = k_.code[i];
    if (in.op == Op::Reduce && in.reduce == ReduceKind::Sum && in.type == ScalarType::F32)
      level_slot_[i] = slots++;
  }
  if (slots == 0) {
    leaf_rows_ = 0;
    return;
  }
  // A push with the count's bits 0..j-1 set fills level j; one level spare.
  leaf_levels_ = bit_length(leaves) + 1;
}

bool KernelEmitter::pairwise_loop(int loop) const {
  for (int i = 0; i < k_.post_begin && leaf_levels_ > 0; ++i)
    if (level_slot_[i] >= 0 && L_.loop[i] == loop) return true;
  return false;
}

// The binary counter of pairwise_sum.h: merge the accumulators with the full levels below
// the first empty one, store them there, restart them at 0.
void KernelEmitter::push_leaves(int loop) {
  std::vector<int> ids;
  for (int i = 0; i < k_.post_begin; ++i)
    if (level_slot_[i] >= 0 && L_.loop[i] == loop) ids.push_back(i);
  std::vector<Label> store(static_cast<size_t>(leaf_levels_));
  Label done;
  mov(rax, misc(kLeaves));
  for (int j = 0; j + 1 < leaf_levels_; ++j) {
    bt(rax, j);
    jnc(store[j], T_NEAR);
    for (int i : ids) vaddps(vec(acc_[i]), vec(acc_[i]), level(i, j));
  }
  for (int j = leaf_levels_ - 1; j >= 0; --j) {
    L(store[j]);
    for (int i : ids) vmovups(level(i, j), vec(acc_[i]));
    if (j > 0) jmp(done, T_NEAR);
  }
  L(done);
  for (int i : ids) vxorps(vec(acc_[i]), vec(acc_[i]), vec(acc_[i]));
  inc(misc(kLeaves));
}

// The levels still full, smallest first, into the accumulators (which hold the last leaf).
void KernelEmitter::finish_leaves(int loop) {
  mov(rax, misc(kLeaves));
  for (int j = 0; j < leaf_levels_; ++j) {
    Label skip;
    bt(rax, j);
    jnc(skip, T_NEAR);
    for (int i = 0; i < k_.post_begin; ++i)
      if (level_slot_[i] >= 0 && L_.loop[i] == loop)
        vaddps(vec(acc_[i]), vec(acc_[i]), level(i, j));
    L(skip);
  }
}

void KernelEmitter::after_pairwise_step(int loop) {
  if (!pairwise_loop(loop)) return;
  Label skip;
  mov(rax, misc(kStepLin));  // the steps before this one
  inc(rax);
  test(eax, static_cast<uint32_t>(kPairwiseLeaf - 1));
  jnz(skip, T_NEAR);
  push_leaves(loop);
  L(skip);
}

void KernelEmitter::after_pairwise_row(int loop) {
  if (leaf_rows_ == 0 || !pairwise_loop(loop)) return;
  Label skip;
  dec(misc(kRowsToLeaf));
  jnz(skip, T_NEAR);
  mov(misc(kRowsToLeaf), static_cast<uint32_t>(leaf_rows_));
  push_leaves(loop);
  L(skip);
}

void KernelEmitter::init_accumulators(int loop) {
  auto take = [&]() {
    for (int r : pool_)
      if (!fixed_[r] && owner_[r] < 0) {
        fixed_[r] = true;
        return r;
      }
    fail("jit: kernel '", k_.name, "': out of vector registers for accumulators");
  };
  for (int i = 0; i < k_.post_begin; ++i) {
    const Instr& in = k_.code[i];
    if (in.op != Op::Reduce || L_.loop[i] != loop) continue;
    acc_[i] = take();
    vmovups(vec(acc_[i]), consts_.f32(identity(in.reduce)));
    if (is_arg(in.reduce)) {
      acc_idx_[i] = take();
      vxorps(vec(acc_idx_[i]), vec(acc_idx_[i]), vec(acc_idx_[i]));
    }
  }
  if (pairwise_loop(loop)) {
    mov(misc(kLeaves), 0);
    if (leaf_rows_ > 0) mov(misc(kRowsToLeaf), static_cast<uint32_t>(leaf_rows_));
  }
}

void KernelEmitter::accumulate(int id, const Xmm& x_in, bool tail) {
  const Instr& in = k_.code[id];
  const Xmm acc = vec(acc_[id]);
  const Xmm s0 = vec(math_[0]), s1 = vec(math_[1]), s2 = vec(math_[2]);
  Xmm x = x_in;
  if (tail && L_.mode == Mode::LanesInner) {
    vmovups(s0, consts_.f32(identity(in.reduce)));
    if (avx512()) {
      vmovaps(s0 | k1, x);
    } else {
      vblendvps(s0, s0, x, Xbyak::Ymm(tail_vreg_));
    }
    x = s0;
  }
  switch (in.reduce) {
    case ReduceKind::Sum:
      return vaddps(acc, acc, x);
    case ReduceKind::Prod:
      return vmulps(acc, acc, x);
    case ReduceKind::Max:
    case ReduceKind::Min:
      // NaN sticks: vmaxps(x, acc) keeps a NaN acc; a NaN x is blended in.
      if (in.reduce == ReduceKind::Max) {
        vmaxps(acc, x, acc);
      } else {
        vminps(acc, x, acc);
      }
      if (avx512()) {
        vcmpps(k2, x, x, kUnordQ);
        return vmovaps(acc | k2, x);
      }
      vcmpps(s1, x, x, kUnordQ);
      return vblendvps(acc, acc, x, s1);
    default:
      break;
  }
  // ArgMax / ArgMin: the lane's linear reduction index, then take x where it is better:
  // acc is not NaN and (x is NaN or x beats acc).
  const Xmm idx = vec(acc_idx_[id]);
  mov(rax, misc(kStepLin));
  if (L_.mode == Mode::LanesInner) {
    imul(rax, rax, static_cast<int>(k_.ranges[L_.vec_var]));
    add(rax, rbx);
  }
  if (avx512()) {
    vpbroadcastd(s2, eax);
  } else {
    vmovd(Xbyak::Xmm(s2.getIdx()), eax);
    vpbroadcastd(s2, Xbyak::Xmm(s2.getIdx()));
  }
  if (L_.mode == Mode::LanesInner) {
    vpaddd(s2, s2, lane_ints(1));
  }
  const uint8_t pred = in.reduce == ReduceKind::ArgMax ? kNleUS : kNgeUS;
  if (avx512()) {
    vcmpps(k2, x, acc, pred);
    vcmpps(k3, acc, acc, kOrdQ);
    kandw(k2, k2, k3);
    vmovaps(acc | k2, x);
    vmovdqa32(idx | k2, s2);
    return;
  }
  const Xmm s3 = vec(math_[3]);
  vcmpps(s1, x, acc, pred);
  vcmpps(s3, acc, acc, kOrdQ);
  vandps(s1, s1, s3);
  vblendvps(acc, acc, x, s1);
  vblendvps(idx, idx, s2, s1);
}

void KernelEmitter::horizontal(ReduceKind kind, int acc_r, int idx_r) {
  const Xmm acc = vec(acc_r);
  const Xbyak::Xmm x0(math_[0]), x1(math_[1]);
  const Xbyak::Ymm y0(math_[0]), y1(math_[1]);
  if (is_arg(kind)) {
    // Lane by lane: NaN first (lowest index), else the extremum, ties to the lowest index.
    vmovups(ptr[rsp + buf_off_], acc);
    vmovups(ptr[rsp + buf_off_ + vbytes_], vec(idx_r));
    vmovss(x0, dword[rsp + buf_off_]);
    mov(eax, dword[rsp + buf_off_ + vbytes_]);
    mov(ecx, 1);
    Label loop, best_nan, take, next, tie;
    L(loop);
    vmovss(x1, dword[rsp + buf_off_ + rcx * 4]);
    mov(edx, dword[rsp + buf_off_ + vbytes_ + rcx * 4]);
    vucomiss(x0, x0);
    jp(best_nan, T_NEAR);
    vucomiss(x1, x1);
    jp(take, T_NEAR);
    vucomiss(x1, x0);
    if (kind == ReduceKind::ArgMax) {
      ja(take, T_NEAR);
      jb(next, T_NEAR);
    } else {
      jb(take, T_NEAR);
      ja(next, T_NEAR);
    }
    jmp(tie, T_NEAR);
    L(best_nan);
    vucomiss(x1, x1);
    jnp(next, T_NEAR);
    L(tie);
    cmp(edx, eax);
    jge(next, T_NEAR);
    L(take);
    vmovaps(x0, x1);
    mov(eax, edx);
    L(next);
    inc(ecx);
    cmp(ecx, lanes_);
    jl(loop, T_NEAR);
    movsxd(rax, eax);
    return;
  }
  auto op = [&](const Xmm& d, const Xmm& a, const Xmm& b) {
    switch (kind) {
      case ReduceKind::Sum:
        return vaddps(d, a, b);
      case ReduceKind::Prod:
        return vmulps(d, a, b);
      case ReduceKind::Max:
        return vmaxps(d, a, b);
      default:
        return vminps(d, a, b);
    }
  };
  if (avx512()) {
    vextractf32x8(y1, Xbyak::Zmm(acc_r), 1);
    op(y0, Xbyak::Ymm(acc_r), y1);
  } else {
    vmovaps(y0, acc);
  }
  if (avx512()) {
    vextractf32x4(x1, y0, 1);
  } else {
    vextractf128(x1, y0, 1);
  }
  op(x0, x0, x1);
  vmovhlps(x1, x1, x0);
  op(x0, x0, x1);
  vmovshdup(x1, x0);
  op(x0, x0, x1);
  if (kind == ReduceKind::Max || kind == ReduceKind::Min) {
    Label ok;
    if (avx512()) {
      vcmpps(k2, acc, acc, kUnordQ);
      kortestw(k2, k2);
    } else {
      vcmpps(y1, acc, acc, kUnordQ);
      vmovmskps(eax, y1);
      test(eax, eax);
    }
    jz(ok);
    vmovss(x0, consts_.u32(0x7FC00000u));
    L(ok);
  }
}

void KernelEmitter::finish_accumulators(int loop) {
  if (pairwise_loop(loop)) finish_leaves(loop);
  for (int i = 0; i < k_.post_begin; ++i) {
    const Instr& in = k_.code[i];
    if (in.op != Op::Reduce || L_.loop[i] != loop) continue;
    const bool arg = is_arg(in.reduce);
    if (L_.mode == Mode::LanesInner) {
      horizontal(in.reduce, acc_[i], acc_idx_[i]);
      if (arg) {
        mov(home64(i), rax);
      } else {
        vmovss(home32(i), Xbyak::Xmm(math_[0]));
      }
    } else {
      vmovups(home(i), vec(arg ? acc_idx_[i] : acc_[i]));
    }
    fixed_[acc_[i]] = false;
    acc_[i] = -1;
    if (arg) {
      fixed_[acc_idx_[i]] = false;
      acc_idx_[i] = -1;
    }
  }
}

}  // namespace jit
}  // namespace ferrite
