#include "jit/disasm.h"

#include <cinttypes>
#include <cstdio>

#if FERRITE_HAS_CAPSTONE
#include <capstone/capstone.h>
#endif

namespace ferrite {
namespace jit {
namespace {

constexpr size_t kByteColumn = 12;  // bytes shown before the text column is padded to

void append_bytes(std::string* out, const uint8_t* p, size_t n, size_t pad_to) {
  char buf[4];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%02x ", p[i]);
    *out += buf;
  }
  for (size_t i = n; i < pad_to; ++i) *out += "   ";
}

void append_address(std::string* out, uint64_t address) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%6" PRIx64 ":  ", address);
  *out += buf;
}

// Sixteen bytes a line, from `p` on.
void append_hex_dump(std::string* out, const uint8_t* p, size_t n, uint64_t address) {
  for (size_t i = 0; i < n; i += 16) {
    append_address(out, address + i);
    append_bytes(out, p + i, n - i < 16 ? n - i : 16, 0);
    out->back() = '\n';
  }
}

#if FERRITE_HAS_CAPSTONE

// Length of the VEX- or EVEX-encoded instruction at p (after optional address-size and
// segment prefixes), or 0 if it is neither or runs past n. *map and *opcode describe it.
// In 64-bit mode C4, C5 and 62 always start VEX/EVEX, whose length follows from the map,
// the opcode and ModRM alone: no other prefixes, no operand-size games.
size_t vex_length(const uint8_t* p, size_t n, int* map, int* opcode) {
  size_t i = 0;
  auto is_prefix = [](uint8_t b) {
    return b == 0x67 || b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x64 || b == 0x65;
  };
  while (i < n && i < 4 && is_prefix(p[i])) ++i;
  if (i + 1 >= n) return 0;
  if (p[i] == 0xc5) {
    *map = 1;
    i += 2;
  } else if (p[i] == 0xc4) {
    *map = p[i + 1] & 0x1f;
    i += 3;
  } else if (p[i] == 0x62) {
    *map = p[i + 1] & 0x07;
    i += 4;
  } else {
    return 0;
  }
  if (*map < 1 || *map > 6 || *map == 4 || i + 1 >= n) return 0;  // 4: APX, not handled
  *opcode = p[i++];
  if (*map == 1 && *opcode == 0x77) return i;  // vzeroupper/vzeroall: no ModRM
  const uint8_t modrm = p[i++];
  const int mod = modrm >> 6, rm = modrm & 7;
  size_t disp = 0;
  if (mod != 3) {
    if (rm == 4) {
      if (i >= n) return 0;
      if (mod == 0 && (p[i] & 7) == 5) disp = 4;  // SIB without base: disp32
      ++i;
    }
    if (mod == 1) disp = 1;  // EVEX scales it (disp8*N), its size stays one byte
    if (mod == 2 || (mod == 0 && rm == 5)) disp = 4;
  }
  const int op = *opcode;
  const bool imm8 = *map == 3 || (*map == 1 && ((op >= 0x70 && op <= 0x73) || op == 0xc2 ||
                                                op == 0xc4 || op == 0xc5 || op == 0xc6));
  i += disp + (imm8 ? 1 : 0);
  return i <= n ? i : 0;
}

// capstone 4 pads some operands ("zmm1 , zmm2"): drop spaces before commas and doubles.
std::string tidy_operands(const char* s) {
  std::string out;
  for (; *s; ++s) {
    if (*s == ' ' && (s[1] == ',' || s[1] == ' ' || s[1] == '\0')) continue;
    out += *s;
  }
  return out;
}

std::string decoder_name() {
  int major = 0, minor = 0;
  cs_version(&major, &minor);
  return "capstone " + std::to_string(major) + "." + std::to_string(minor);
}

// One instruction capstone did not decode. Returns its length, or 0 when it cannot be
// delimited (then the caller dumps the rest as hex).
size_t append_undecoded(std::string* out, const uint8_t* p, size_t n, uint64_t address) {
  int map = 0, opcode = 0;
  const size_t len = vex_length(p, n, &map, &opcode);
  if (len == 0) return 0;
  append_address(out, address);
  append_bytes(out, p, len, kByteColumn);
  char buf[128];
  std::snprintf(buf, sizeof buf, "(not decoded by %s: %s map %d opcode 0x%02x)\n",
                decoder_name().c_str(), p[0] == 0x62 ? "EVEX" : "VEX", map, opcode);
  *out += buf;
  return len;
}

std::string disassemble_capstone(const uint8_t* code, size_t bytes, uint64_t address) {
  csh handle;
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK) {
    std::string out = "; capstone could not be opened: hex dump only\n";
    append_hex_dump(&out, code, bytes, address);
    return out;
  }
  cs_option(handle, CS_OPT_SYNTAX, CS_OPT_SYNTAX_INTEL);
  cs_insn* insn = cs_malloc(handle);
  std::string out;
  size_t offset = 0;
  while (offset < bytes) {
    const uint8_t* p = code + offset;
    size_t left = bytes - offset;
    uint64_t at = address + offset;
    if (cs_disasm_iter(handle, &p, &left, &at, insn)) {
      append_address(&out, address + offset);
      append_bytes(&out, insn->bytes, insn->size, kByteColumn);
      out += insn->mnemonic;
      const std::string ops = tidy_operands(insn->op_str);
      if (!ops.empty()) out += " " + ops;
      out += "\n";
      offset += insn->size;
      continue;
    }
    const size_t len = append_undecoded(&out, code + offset, bytes - offset, address + offset);
    if (len == 0) {
      out += "; " + decoder_name() + " cannot decode from here on: hex dump\n";
      append_hex_dump(&out, code + offset, bytes - offset, address + offset);
      break;
    }
    offset += len;
  }
  cs_free(insn, 1);
  cs_close(&handle);
  return out;
}

#endif  // FERRITE_HAS_CAPSTONE

}  // namespace

bool disassembler_available() {
#if FERRITE_HAS_CAPSTONE
  return true;
#else
  return false;
#endif
}

std::string disassemble_x86(const void* code, size_t bytes, uint64_t address) {
  const uint8_t* p = static_cast<const uint8_t*>(code);
#if FERRITE_HAS_CAPSTONE
  return disassemble_capstone(p, bytes, address);
#else
  std::string out =
      "; capstone was not found when Ferrite was built (libcapstone-dev): hex dump only\n";
  append_hex_dump(&out, p, bytes, address);
  return out;
#endif
}

}  // namespace jit
}  // namespace ferrite
