// The dump disassembler: code assembled with xbyak comes back as a listing that names its
// instructions (or, in a build without capstone, as a hex dump that says so).
#include "jit/disasm.h"

#include <gtest/gtest.h>
#include <xbyak/xbyak.h>

#include <sstream>
#include <string>
#include <vector>

namespace ferrite {
namespace jit {
namespace {

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Never executed: no need for executable pages.
struct Code : Xbyak::CodeGenerator {
  Code() : Xbyak::CodeGenerator(4096, Xbyak::DontSetProtectRWE) {}
  std::string listing(uint64_t address = 0) {
    return disassemble_x86(getCode(), getSize(), address);
  }
};

TEST(Disasm, ListsAvx512AndAvx2Instructions) {
  using namespace Xbyak::util;
  Code c;
  c.vaddps(zmm1 | k1, zmm2, zmm3);
  c.vfmadd231ps(ymm0, ymm1, c.ptr[rax + rcx * 4 + 32]);
  c.vmovups(c.ptr[rdi + 64] | k2, zmm4);
  c.add(rax, 64);
  c.ret();
  const std::string text = c.listing();
  if (!disassembler_available()) {
    EXPECT_NE(text.find("capstone was not found"), std::string::npos) << text;
    EXPECT_NE(text.find("62 "), std::string::npos) << text;  // the EVEX prefix, as hex
    return;
  }
  const std::vector<std::string> lines = lines_of(text);
  ASSERT_EQ(lines.size(), 5u) << text;
  EXPECT_NE(lines[0].find("vaddps zmm1 {k1}, zmm2, zmm3"), std::string::npos) << text;
  EXPECT_NE(lines[0].find("62 f1"), std::string::npos) << text;
  EXPECT_NE(lines[1].find("vfmadd231ps ymm0, ymm1, ymmword ptr [rax + rcx*4 + 0x20]"),
            std::string::npos)
      << text;
  EXPECT_NE(lines[2].find("vmovups zmmword ptr [rdi + 0x40] {k2}, zmm4"), std::string::npos)
      << text;
  EXPECT_NE(lines[3].find("add rax, 0x40"), std::string::npos) << text;
  EXPECT_NE(lines[4].find("ret"), std::string::npos) << text;
  EXPECT_EQ(lines[0].rfind("     0:", 0), 0u) << text;  // offsets from the start
}

TEST(Disasm, AddressesStartAtTheGivenAddressAndBranchTargetsFollow) {
  if (!disassembler_available()) GTEST_SKIP() << "built without capstone";
  using namespace Xbyak::util;
  Code c;
  Xbyak::Label top;
  c.L(top);
  c.dec(rcx);
  c.jnz(top);
  const std::vector<std::string> lines = lines_of(c.listing(0x1000));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("  1000:", 0), 0u) << lines[0];
  EXPECT_NE(lines[1].find("jne 0x1000"), std::string::npos) << lines[1];
}

// capstone 4.0 does not know many AVX-512 instructions (vpternlogd, vscalefps, vandps
// zmm, ...): each is listed with its bytes, and decoding goes on after it.
TEST(Disasm, ResumesAfterAnInstructionTheDecoderDoesNotKnow) {
  if (!disassembler_available()) GTEST_SKIP() << "built without capstone";
  using namespace Xbyak::util;
  Code c;
  c.vpternlogd(zmm1, zmm2, c.ptr[rax + 0x1000], 0xca);  // EVEX map 3, disp32 and imm8
  c.vscalefps(zmm1, zmm2, zmm3);                        // EVEX map 2
  c.vandps(zmm5, zmm6, c.ptr_b[rip + 64]);              // EVEX map 1, RIP-relative
  c.vbroadcasti128(ymm1, c.ptr[r8]);                    // VEX map 2
  c.vaddps(ymm1, ymm2, ymm3);
  c.ret();
  const std::string text = c.listing();
  const std::vector<std::string> lines = lines_of(text);
  ASSERT_EQ(lines.size(), 6u) << text;
  const char* names[] = {"vpternlogd", "vscalefps", "vandps", "vbroadcasti128"};
  for (int i = 0; i < 4; ++i) {
    const bool named = lines[i].find(names[i]) != std::string::npos;
    const bool noted = lines[i].find("not decoded by capstone") != std::string::npos;
    EXPECT_TRUE(named || noted) << lines[i];
  }
  EXPECT_NE(lines[4].find("vaddps ymm1, ymm2, ymm3"), std::string::npos) << text;
  EXPECT_NE(lines[5].find("ret"), std::string::npos) << text;
}

TEST(Disasm, EmptyCodeGivesAnEmptyListing) {
  uint8_t none = 0;
  const std::string text = disassemble_x86(&none, 0, 0);
  EXPECT_EQ(lines_of(text).size(), disassembler_available() ? 0u : 1u) << text;
}

}  // namespace
}  // namespace jit
}  // namespace ferrite
