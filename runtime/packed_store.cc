#include "runtime/packed_store.h"

#define XXH_INLINE_ALL  // header-only: every target (wasm, aarch64) has it without a library
#include <xxhash.h>

#include "compiler/plan/error.h"

namespace ferrite {

std::string PackedStore::key(const std::string& layout, const PackedSource& source) {
  const size_t nbytes = static_cast<size_t>(source.elements) * dtype_size(source.dtype);
  const XXH128_hash_t digest = XXH3_128bits(source.data, source.data ? nbytes : 0);
  std::string k = str_cat(layout, " | ", dtype_name(source.dtype), " ", source.elements, " view");
  for (int64_t d : source.dims) k += str_cat(" ", d);
  k += " /";
  for (int64_t s : source.strides) k += str_cat(" ", s);
  return str_cat(k, " @", source.offset, " digest ", digest.high64, ":", digest.low64);
}

std::shared_ptr<const void> PackedStore::find_any(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  std::shared_ptr<const void> packed = it->second.packed.lock();
  if (!packed) {
    entries_.erase(it);
    return nullptr;
  }
  ++hits_;
  return packed;
}

void PackedStore::insert(const std::string& key, std::shared_ptr<const void> packed, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end();)  // drop what nothing holds now
    it = it->second.packed.expired() ? entries_.erase(it) : std::next(it);
  entries_[key] = Entry{packed, bytes};
}

int64_t PackedStore::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

size_t PackedStore::live_entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = 0;
  for (const auto& e : entries_) n += e.second.packed.expired() ? 0 : 1;
  return n;
}

size_t PackedStore::live_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = 0;
  for (const auto& e : entries_) n += e.second.packed.expired() ? 0 : e.second.bytes;
  return n;
}

}  // namespace ferrite
