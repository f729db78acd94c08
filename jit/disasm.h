// Disassembly of generated machine code, for the JIT's dumps (FERRITE_DUMP / --dump).
// Decoded with Zydis 4 when the build found it (libzydis-dev); without it the listing is a
// hex dump under a one-line note saying so, so a build never depends on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ferrite {
namespace jit {

// An Intel-syntax listing of `bytes` bytes of x86-64 code, one instruction per line:
//   "    40:  62 f1 6c 49 58 cb                   vaddps zmm1 {k1}, zmm2, zmm3"
// The first column is address + offset (pass address 0 for offsets from the start, which
// also makes branch targets and RIP-relative operands offsets, and listings comparable
// across runs). A byte sequence that does not decode (an invalid encoding, or an instruction
// cut off by the end of the code) is listed as its first byte in hex with a note saying why,
// and decoding resumes at the next byte. Data in the code (the JIT's constant pool after the
// last instruction) is listed as whatever instructions its bytes happen to encode.
std::string disassemble_x86(const void* code, size_t bytes, uint64_t address = 0);

// True when disassemble_x86 decodes instructions (Zydis was found at build time).
bool disassembler_available();

}  // namespace jit
}  // namespace ferrite
