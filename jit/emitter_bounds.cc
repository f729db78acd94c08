// KernelEmitter: run-time bounds checks of the masked loads that the analysis could not prove
// inside their arg where their mask holds (Access::checked). The compiler's kernels never
// need them (their masks prove their loads, mask_bounds.h); a plan from elsewhere may. The
// address of each lane a load reads is compared with its arg's first and last element
// (JitCall::bounds); the first one outside ends the kernel with the Load's id, which the
// backend reports as the reference does. The analysis bounded the index far from
// overflowing (kMaxMaskedIndex), so the addresses compared never wrap around.
#include "jit/kernel_codegen.h"
#include "jit/kernel_emitter.h"

namespace ferrite {
namespace jit {

using namespace Xbyak;

void KernelEmitter::check_address(int a, const Reg64& addr, const Label& outside) {
  mov(rcx, misc(kCall));
  mov(rcx, qword[rcx + offsetof(JitCall, bounds)]);
  cmp(addr, qword[rcx + a * 16]);
  jb(outside, T_NEAR);
  cmp(addr, qword[rcx + a * 16 + 8]);
  ja(outside, T_NEAR);
}

void KernelEmitter::check_scalar_read(int id, int a) {
  Label ok, outside;
  check_address(a, rax, outside);
  jmp(ok, T_NEAR);
  L(outside);
  fail_exit(id, rax);
  L(ok);
}

void KernelEmitter::check_lane_reads(int id, int a, const Reg64& b, const Xbyak::Ymm& avx2_lanes) {
  const Access& acc = L_.accesses[a];
  const int stride = static_cast<int>(acc.vec_coeff * acc.esize);  // analysis: inside int32
  Label ok, outside;
  if (avx512()) {
    kmovw(ecx, k2);
  } else {
    vmovmskps(ecx, avx2_lanes);
  }
  test(ecx, ecx);
  jz(ok, T_NEAR);
  // Lane addresses are monotonic in the lane: the lowest and the highest lane read bound
  // the others.
  bsf(edx, ecx);
  bsr(ecx, ecx);
  add(rdx, rbx);
  imul(rdx, rdx, stride);
  add(rdx, b);
  add(rcx, rbx);
  imul(rcx, rcx, stride);
  add(rcx, b);
  mov(misc(kCheck), rcx);
  check_address(a, rdx, outside);
  mov(rdx, misc(kCheck));
  check_address(a, rdx, outside);
  jmp(ok, T_NEAR);
  L(outside);
  mov(rax, rdx);  // fail_exit takes rdx; the read is abandoned, rax (maybe b) with it
  fail_exit(id, rax);
  L(ok);
}

}  // namespace jit
}  // namespace ferrite
