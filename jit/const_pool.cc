#include "jit/const_pool.h"

#include <cstring>

namespace ferrite {
namespace jit {

Xbyak::Address ConstPool::at(const std::vector<uint8_t>& bytes) {
  auto it = labels_.find(bytes);
  if (it == labels_.end()) {
    it = labels_.emplace(bytes, std::make_unique<Xbyak::Label>()).first;
    order_.emplace_back(&it->first, it->second.get());
  }
  return gen_->ptr[gen_->rip + *it->second];
}

Xbyak::Address ConstPool::u32(uint32_t bits) {
  std::vector<uint8_t> v(bytes_);
  for (int i = 0; i < bytes_; i += 4) std::memcpy(v.data() + i, &bits, 4);
  return at(v);
}

Xbyak::Address ConstPool::f32(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return u32(bits);
}

Xbyak::Address ConstPool::u64(uint64_t bits) {
  std::vector<uint8_t> v(bytes_);
  for (int i = 0; i < bytes_; i += 8) std::memcpy(v.data() + i, &bits, 8);
  return at(v);
}

Xbyak::Address ConstPool::raw(const std::vector<uint8_t>& bytes) {
  std::vector<uint8_t> v(bytes);
  v.resize(bytes_, 0);
  return at(v);
}

void ConstPool::emit() {
  if (order_.empty()) return;
  gen_->align(64);
  for (const auto& [bytes, label] : order_) {
    gen_->L(*label);
    for (uint8_t b : *bytes) gen_->db(b);
  }
}

}  // namespace jit
}  // namespace ferrite
