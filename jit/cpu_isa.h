// The x86 instruction sets the JIT generates code for, and which one this CPU runs.
//   Avx512: AVX-512 F, DQ, BW and VL (Skylake-SP and later): zmm registers, k-mask tails.
//   Avx2:   AVX2, FMA and F16C (Haswell and later): ymm registers, masked or scalar tails.
// A CPU with neither gets no JIT: the jit backend then runs every kernel on the portable one.
#pragma once

#include <cstdint>
#include <string>

namespace ferrite {
namespace jit {

enum class Isa : uint8_t { None = 0, Avx2, Avx512 };

const char* isa_name(Isa isa);
// The best ISA this CPU supports.
Isa host_isa();
bool host_supports(Isa isa);
// The ISA a backend uses: `requested` ("avx2", "avx512"), else the FERRITE_ISA environment
// variable, else host_isa(). Throws ferrite::Error for an unknown name or an ISA this CPU
// lacks ("FERRITE_ISA=avx512: this CPU does not support AVX-512 ...").
Isa choose_isa(const std::string& requested);

// f32 lanes per vector register.
inline int isa_lanes(Isa isa) {
  return isa == Isa::Avx512 ? 16 : 8;
}

}  // namespace jit
}  // namespace ferrite
