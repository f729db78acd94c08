#include "jit/disasm.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <utility>

#if FERRITE_HAS_ZYDIS
#include <Zydis/Zydis.h>
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

#if FERRITE_HAS_ZYDIS

std::string decoder_name() {
  const ZyanU64 v = ZydisGetVersion();
  return "Zydis " + std::to_string(ZYDIS_VERSION_MAJOR(v)) + "." +
         std::to_string(ZYDIS_VERSION_MINOR(v)) + "." + std::to_string(ZYDIS_VERSION_PATCH(v));
}

// Why ZydisDecoderDecodeFull refused the bytes, in a few words.
const char* decode_error(ZyanStatus status) {
  switch (status) {
    case ZYDIS_STATUS_NO_MORE_DATA:
      return "cut off by the end of the code";
    case ZYDIS_STATUS_DECODING_ERROR:
      return "invalid instruction";
    case ZYDIS_STATUS_INSTRUCTION_TOO_LONG:
      return "longer than 15 bytes";
    case ZYDIS_STATUS_BAD_REGISTER:
      return "invalid register";
    case ZYDIS_STATUS_ILLEGAL_LOCK:
      return "illegal lock prefix";
    case ZYDIS_STATUS_ILLEGAL_LEGACY_PFX:
      return "illegal legacy prefix";
    case ZYDIS_STATUS_ILLEGAL_REX:
      return "illegal REX prefix";
    case ZYDIS_STATUS_INVALID_MAP:
      return "invalid opcode map";
    case ZYDIS_STATUS_MALFORMED_EVEX:
      return "malformed EVEX prefix";
    case ZYDIS_STATUS_MALFORMED_MVEX:
      return "malformed MVEX prefix";
    case ZYDIS_STATUS_INVALID_MASK:
      return "invalid mask register";
    default:
      return "decoding failed";
  }
}

std::string disassemble_zydis(const uint8_t* code, size_t bytes, uint64_t address) {
  ZydisDecoder decoder;
  ZydisFormatter formatter;
  bool ok =
      ZYAN_SUCCESS(ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)) &&
      ZYAN_SUCCESS(ZydisFormatterInit(&formatter, ZYDIS_FORMATTER_STYLE_INTEL));
  // Lower-case hex like the byte column; sizes on every memory operand ("zmmword ptr
  // [rax]", as objdump does); no zero padding ("jnz 0x40", "0x1", not "0x0000000000000040",
  // "0x01").
  const std::pair<ZydisFormatterProperty, ZyanUPointer> properties[] = {
      {ZYDIS_FORMATTER_PROP_HEX_UPPERCASE, ZYAN_FALSE},
      {ZYDIS_FORMATTER_PROP_FORCE_SIZE, ZYAN_TRUE},
      {ZYDIS_FORMATTER_PROP_ADDR_PADDING_ABSOLUTE, ZYDIS_PADDING_DISABLED},
      {ZYDIS_FORMATTER_PROP_ADDR_PADDING_RELATIVE, ZYDIS_PADDING_DISABLED},
      {ZYDIS_FORMATTER_PROP_DISP_PADDING, ZYDIS_PADDING_DISABLED},
      {ZYDIS_FORMATTER_PROP_IMM_PADDING, ZYDIS_PADDING_DISABLED},
  };
  for (const auto& [property, value] : properties)
    ok = ok && ZYAN_SUCCESS(ZydisFormatterSetProperty(&formatter, property, value));
  std::string out;
  if (!ok) {
    out = "; " + decoder_name() + " could not be initialized: hex dump only\n";
    append_hex_dump(&out, code, bytes, address);
    return out;
  }
  ZydisDecodedInstruction insn;
  ZydisDecodedOperand operands[ZYDIS_MAX_OPERAND_COUNT];
  char text[256];
  size_t offset = 0;
  while (offset < bytes) {
    const uint8_t* p = code + offset;
    const uint64_t at = address + offset;
    append_address(&out, at);
    const ZyanStatus decoded = ZydisDecoderDecodeFull(&decoder, p, bytes - offset, &insn, operands);
    if (ZYAN_SUCCESS(decoded) && ZYAN_SUCCESS(ZydisFormatterFormatInstruction(
                                     &formatter, &insn, operands, insn.operand_count_visible, text,
                                     sizeof text, at, nullptr))) {
      append_bytes(&out, p, insn.length, kByteColumn);
      out += text;
      out += "\n";
      offset += insn.length;
      continue;
    }
    append_bytes(&out, p, 1, kByteColumn);
    out += "(not decoded by " + decoder_name() + ": " +
           (ZYAN_SUCCESS(decoded) ? "formatting failed" : decode_error(decoded)) + ")\n";
    ++offset;
  }
  return out;
}

#endif  // FERRITE_HAS_ZYDIS

}  // namespace

bool disassembler_available() {
#if FERRITE_HAS_ZYDIS
  return true;
#else
  return false;
#endif
}

std::string disassemble_x86(const void* code, size_t bytes, uint64_t address) {
  const uint8_t* p = static_cast<const uint8_t*>(code);
#if FERRITE_HAS_ZYDIS
  return disassemble_zydis(p, bytes, address);
#else
  std::string out = "; Zydis was not found when Ferrite was built (libzydis-dev): hex dump only\n";
  append_hex_dump(&out, p, bytes, address);
  return out;
#endif
}

std::string data_listing(const void* data, size_t bytes, uint64_t address) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  std::string out;
  bool elided = false;
  for (size_t i = 0; i < bytes; i += 16) {
    const size_t n = bytes - i < 16 ? bytes - i : 16;
    if (i > 0 && n == 16 && std::memcmp(p + i, p + i - 16, 16) == 0) {
      if (!elided) out += "     *\n";
      elided = true;
      continue;
    }
    elided = false;
    append_address(&out, address + i);
    std::string floats;
    for (size_t w = 0; w + 4 <= n; w += 4) {
      uint32_t bits;
      float f;
      std::memcpy(&bits, p + i + w, 4);
      std::memcpy(&f, p + i + w, 4);
      char buf[48];
      std::snprintf(buf, sizeof buf, "%08" PRIx32 " ", bits);
      out += buf;
      std::snprintf(buf, sizeof buf, " %.9g", static_cast<double>(f));
      floats += buf;
    }
    for (size_t b = n - n % 4; b < n; ++b) {  // a last partial word, byte by byte
      char buf[8];
      std::snprintf(buf, sizeof buf, "%02x ", p[i + b]);
      out += buf;
    }
    out += floats.empty() ? "\n" : " ;" + floats + "\n";
  }
  return out;
}

}  // namespace jit
}  // namespace ferrite
