// What a routine that emits vector code needs: the generator, the ISA, the constant pool,
// and the registers it may clobber. Vector values are named by register number; vec(i) is
// zmm i under AVX-512 and ymm i under AVX2 (f32 lanes: 16 or 8).
//
// Register conventions of generated kernels (jit/kernel_codegen.cc):
//   - Bool values are vectors of 32-bit lanes, all ones (true) or zero (false), on both ISAs.
//   - AVX-512 opmask registers k1..k7 are scratch: no value lives in them across routines.
//     k1 holds the tail mask of the current vector iteration while the body runs (it is
//     reloaded before each use by the code generator); routines here may clobber k2..k7.
//   - `scratch` lists the vector registers a routine may overwrite besides its destination.
#pragma once

#include <vector>

#include <xbyak/xbyak.h>

#include "jit/const_pool.h"
#include "jit/cpu_isa.h"

namespace ferrite {
namespace jit {

struct VecContext {
  Xbyak::CodeGenerator& g;
  Isa isa;
  ConstPool& consts;
  std::vector<int> scratch;

  Xbyak::Xmm vec(int i) const {
    if (isa == Isa::Avx512) return Xbyak::Zmm(i);
    return Xbyak::Ymm(i);
  }
  // The n-th scratch register (throws ferrite::Error if there are too few).
  Xbyak::Xmm tmp(size_t n) const;
  int lanes() const { return isa_lanes(isa); }
};

}  // namespace jit
}  // namespace ferrite
