// The dump disassembler: code assembled with xbyak comes back as a listing that names its
// instructions (or, in a build without Zydis, as a hex dump that says so).
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
    EXPECT_NE(text.find("Zydis was not found"), std::string::npos) << text;
    EXPECT_NE(text.find("62 "), std::string::npos) << text;  // the EVEX prefix, as hex
    return;
  }
  const std::vector<std::string> lines = lines_of(text);
  ASSERT_EQ(lines.size(), 5u) << text;
  EXPECT_NE(lines[0].find("vaddps zmm1 {k1}, zmm2, zmm3"), std::string::npos) << text;
  EXPECT_NE(lines[0].find("62 f1"), std::string::npos) << text;
  EXPECT_NE(lines[1].find("vfmadd231ps ymm0, ymm1, ymmword ptr [rax+rcx*4+0x20]"),
            std::string::npos)
      << text;
  EXPECT_NE(lines[2].find("vmovups zmmword ptr [rdi+0x40] {k2}, zmm4"), std::string::npos) << text;
  EXPECT_NE(lines[3].find("add rax, 0x40"), std::string::npos) << text;
  EXPECT_NE(lines[4].find("ret"), std::string::npos) << text;
  EXPECT_EQ(lines[0].rfind("     0:", 0), 0u) << text;  // offsets from the start
}

TEST(Disasm, AddressesStartAtTheGivenAddressAndBranchTargetsFollow) {
  if (!disassembler_available()) GTEST_SKIP() << "built without Zydis";
  using namespace Xbyak::util;
  Code c;
  Xbyak::Label top;
  c.L(top);
  c.dec(rcx);
  c.jnz(top);
  const std::vector<std::string> lines = lines_of(c.listing(0x1000));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("  1000:", 0), 0u) << lines[0];
  EXPECT_NE(lines[1].find("jnz 0x1000"), std::string::npos) << lines[1];
}

// AVX-512 instructions the JIT emits that capstone 4 (the previous decoder) could not decode (or
// misprinted, like vscatterdps): each is one line with its mnemonic and operands, and the listing
// stays in step with the code (the instruction after them decodes too).
TEST(Disasm, DecodesTheJitsAvx512Instructions) {
  if (!disassembler_available()) GTEST_SKIP() << "built without Zydis";
  using namespace Xbyak::util;
  Code c;
  Xbyak::Label data;
  c.vandps(zmm5 | k3 | T_z, zmm6, zmm7);
  c.vandps(zmm5, zmm6, c.ptr_b[rip + data]);            // RIP-relative, broadcast
  c.vpternlogd(zmm1, zmm2, c.ptr[rax + 0x1000], 0xca);  // EVEX map 3, disp32 and imm8
  c.vscalefps(zmm1, zmm2, zmm3);
  c.vpmovd2m(k1, zmm4);
  c.vextractf32x8(ymm1, zmm2, 1);
  c.vscatterdps(c.ptr[rax + zmm1 * 4] | k1, zmm2);
  c.vgatherdps(zmm3 | k2, c.ptr[rdi + zmm4 * 4 + 8]);
  c.vbroadcasti128(ymm1, c.ptr[r8]);  // VEX map 2
  c.vaddps(ymm1, ymm2, ymm3);
  c.ret();
  c.L(data);
  c.dd(0x7fffffff);
  const std::string text = c.listing();
  const std::vector<std::string> lines = lines_of(text);
  const char* expected[] = {
      "vandps zmm5 {k3} {z}, zmm6, zmm7",
      "vandps zmm5, zmm6, dword ptr [0x",  // the constant's offset
      "vpternlogd zmm1, zmm2, zmmword ptr [rax+0x1000], 0xca",
      "vscalefps zmm1, zmm2, zmm3",
      "vpmovd2m k1, zmm4",
      "vextractf32x8 ymm1, zmm2, 0x1",
      "vscatterdps dword ptr [rax+zmm1*4] {k1}, zmm2",
      "vgatherdps zmm3 {k2}, dword ptr [rdi+zmm4*4+0x8]",
      "vbroadcasti128 ymm1, xmmword ptr [r8]",
      "vaddps ymm1, ymm2, ymm3",
      "ret",
  };
  const size_t n = sizeof expected / sizeof expected[0];
  ASSERT_GE(lines.size(), n) << text;
  for (size_t i = 0; i < n; ++i) EXPECT_NE(lines[i].find(expected[i]), std::string::npos) << text;
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(lines[i].find("not decoded"), std::string::npos) << text;
  // The RIP-relative operand names the constant's offset, where the listing goes on.
  const size_t bracket = lines[1].find("[0x");
  ASSERT_NE(bracket, std::string::npos) << text;
  const std::string target = lines[1].substr(bracket + 3, lines[1].find(']') - bracket - 3);
  EXPECT_EQ(std::stoul(target, nullptr, 16), c.getSize() - 4) << text;
}

// Bytes that are no instruction are listed one by one, with the reason, and decoding picks up
// again at the next byte.
TEST(Disasm, ListsUndecodableBytesAndResumesAtTheNextByte) {
  if (!disassembler_available()) GTEST_SKIP() << "built without Zydis";
  using namespace Xbyak::util;
  Code c;
  c.db(0x06);  // push es: invalid in 64-bit mode
  c.vaddps(zmm1, zmm2, zmm3);
  c.db(0x62);  // an EVEX prefix cut off by the end of the code
  const std::vector<std::string> lines = lines_of(c.listing());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].rfind("     0:  06 ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("(not decoded by Zydis"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[1].rfind("     1:  62 f1 6c 48 58 cb", 0), 0u) << lines[1];
  EXPECT_NE(lines[1].find("vaddps zmm1, zmm2, zmm3"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[2].rfind("     7:  62 ", 0), 0u) << lines[2];
  EXPECT_NE(lines[2].find("cut off by the end of the code"), std::string::npos) << lines[2];
}

TEST(Disasm, EmptyCodeGivesAnEmptyListing) {
  uint8_t none = 0;
  const std::string text = disassemble_x86(&none, 0, 0);
  EXPECT_EQ(lines_of(text).size(), disassembler_available() ? 0u : 1u) << text;
}

TEST(Disasm, ListsDataAsWordsAndFloatsElidingRepeats) {
  // Two 64-byte vectors (1.0 and -2.5 in every lane) and 6 trailing bytes, at offset 0x40.
  std::vector<uint8_t> data;
  auto push = [&](uint32_t bits, int n) {
    for (int i = 0; i < n; ++i)
      for (int b = 0; b < 4; ++b) data.push_back(static_cast<uint8_t>(bits >> (8 * b)));
  };
  push(0x3f800000u, 16);
  push(0xc0200000u, 16);
  push(0x00000007u, 1);
  data.push_back(0xab);
  data.push_back(0xcd);
  const std::vector<std::string> lines = lines_of(data_listing(data.data(), data.size(), 0x40));
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0], "    40:  3f800000 3f800000 3f800000 3f800000  ; 1 1 1 1");
  EXPECT_EQ(lines[1], "     *");
  EXPECT_EQ(lines[2], "    80:  c0200000 c0200000 c0200000 c0200000  ; -2.5 -2.5 -2.5 -2.5");
  EXPECT_EQ(lines[3], "     *");
  EXPECT_EQ(lines[4].rfind("    c0:  00000007 ab cd ", 0), 0u) << lines[4];
  EXPECT_NE(lines[4].find("; 9.80908925e-45"), std::string::npos) << lines[4];
}

}  // namespace
}  // namespace jit
}  // namespace ferrite
