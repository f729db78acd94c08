// Vector constants of one generated function. Each distinct constant is one full vector
// (the same 32-bit or 64-bit pattern in every lane) placed after the code, 64-byte aligned,
// and read RIP-relative: loop bodies use it as a memory operand or load it once into a
// register (hoisting is the code generator's choice). Read-only once the code is sealed.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include <xbyak/xbyak.h>

namespace ferrite {
namespace jit {

class ConstPool {
 public:
  // `vector_bytes`: 64 (zmm) or 32 (ymm).
  ConstPool(Xbyak::CodeGenerator* gen, int vector_bytes) : gen_(gen), bytes_(vector_bytes) {}

  // A vector of `bits` repeated in every 32-bit lane.
  Xbyak::Address u32(uint32_t bits);
  Xbyak::Address f32(float v);
  // A vector of `bits` repeated in every 64-bit lane.
  Xbyak::Address u64(uint64_t bits);
  // Any vector: `lanes` (vector_bytes bytes, e.g. an iota index) exactly as given.
  Xbyak::Address raw(const std::vector<uint8_t>& bytes);

  bool empty() const { return order_.empty(); }

  // Places the data; call once, after the function's last instruction.
  void emit();

 private:
  Xbyak::Address at(const std::vector<uint8_t>& bytes);

  Xbyak::CodeGenerator* gen_;
  int bytes_;
  std::map<std::vector<uint8_t>, std::unique_ptr<Xbyak::Label>> labels_;
  std::vector<std::pair<const std::vector<uint8_t>*, Xbyak::Label*>> order_;
};

}  // namespace jit
}  // namespace ferrite
