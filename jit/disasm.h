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
// and decoding resumes at the next byte. Pass only the instructions: data decodes as
// whatever instructions its bytes happen to encode (list it with data_listing).
std::string disassemble_x86(const void* code, size_t bytes, uint64_t address = 0);

// A listing of data (the constant pool after a kernel's instructions): per 16 bytes, the
// address, four little-endian 32-bit words in hex and, after ';', the same words read as
// floats; a line equal to the previous one is elided into one "*" line (as hexdump does).
std::string data_listing(const void* data, size_t bytes, uint64_t address);

// True when disassemble_x86 decodes instructions (Zydis was found at build time).
bool disassembler_available();

}  // namespace jit
}  // namespace ferrite
