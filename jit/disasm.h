// Disassembly of generated machine code, for the JIT's dumps (FERRITE_DUMP / --dump).
// Decoded with capstone when the build found it (pkg-config `capstone`); without it the
// listing is a hex dump under a one-line note saying so, so a build never depends on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ferrite {
namespace jit {

// An Intel-syntax listing of `bytes` bytes of x86-64 code, one instruction per line:
//   "    40:  62 f1 6c 49 58 cb                   vaddps zmm1 {k1}, zmm2, zmm3"
// The first column is address + offset (pass address 0 for offsets from the start, which
// also makes branch targets offsets and listings comparable across runs). An instruction
// the decoder does not know (capstone 4 misses many AVX-512 ones, e.g. vpternlogd,
// vscalefps, vandps zmm) is listed with its bytes and a note, and decoding resumes after
// it when it is VEX/EVEX-encoded (its length is computed here); otherwise the rest of the
// code is listed as hex.
std::string disassemble_x86(const void* code, size_t bytes, uint64_t address = 0);

// True when disassemble_x86 decodes instructions (capstone was found at build time).
bool disassembler_available();

}  // namespace jit
}  // namespace ferrite
