#include "jit/code_cache.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

namespace ferrite {
namespace jit {
namespace {

void put(std::string* s, int64_t v) {
  s->append(reinterpret_cast<const char*>(&v), sizeof v);
}

void put_index(std::string* s, const IndexNode& e) {
  put(s, static_cast<int64_t>(e.kind));
  put(s, e.kind == IndexKind::Const ? e.c : e.id);
  if (e.a) put_index(s, *e.a);
  if (e.b) put_index(s, *e.b);
}

struct Cache {
  std::mutex mu;
  std::map<std::string, std::weak_ptr<const CompiledCode>> entries;
  size_t prune_at = 64;  // entries whose code is gone are dropped when the map reaches this
};

// Drops the keys whose code no kernel holds any more, so that a process that compiles ever
// new kernels (a server loading models, a fuzzer) keeps only the live ones: each key is
// the kernel's whole structure, kilobytes. Amortized: the next pass is due at twice the
// size left.
void prune(Cache& c) {
  if (c.entries.size() < c.prune_at) return;
  for (auto it = c.entries.begin(); it != c.entries.end();)
    it = it->second.expired() ? c.entries.erase(it) : std::next(it);
  c.prune_at = std::max<size_t>(64, 2 * c.entries.size());
}

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: kernels may outlive static destruction
  return *c;
}

}  // namespace

std::string kernel_structure_key(const Kernel& k, Isa isa) {
  std::string s;
  put(&s, static_cast<int64_t>(isa));
  put(&s, static_cast<int64_t>(k.ranges.size()));
  for (int64_t r : k.ranges) put(&s, r);
  put(&s, k.num_reduce);
  put(&s, k.post_begin);
  put(&s, static_cast<int64_t>(k.loop_ends.size()));
  for (int32_t e : k.loop_ends) put(&s, e);
  put(&s, static_cast<int64_t>(k.args.size()));
  for (const KernelArg& a : k.args) {
    put(&s, static_cast<int64_t>(a.dtype));
    put(&s, a.elements);
    put(&s, a.output);
  }
  for (const Instr& in : k.code) {
    put(&s, static_cast<int64_t>(in.op) | static_cast<int64_t>(in.type) << 8 |
                static_cast<int64_t>(in.reduce) << 16);
    put(&s, in.a);
    put(&s, in.b);
    put(&s, in.c);
    put(&s, in.arg);
    put(&s, in.mask);
    int64_t bits;
    std::memcpy(&bits, &in.fimm, sizeof bits);
    put(&s, bits);
    put(&s, in.iimm);
    if (in.index) put_index(&s, *in.index);
    put(&s, -1);
  }
  return s;
}

std::shared_ptr<const CompiledCode> cached_code(
    const std::string& key, const std::function<std::unique_ptr<CompiledCode>()>& make,
    bool* reused) {
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.entries.find(key);
    if (it != c.entries.end()) {
      if (auto code = it->second.lock()) {
        *reused = true;
        return code;
      }
    }
  }
  // Generated outside the lock; two threads racing on one key both generate, one wins.
  std::shared_ptr<const CompiledCode> code(make().release());
  std::lock_guard<std::mutex> lock(c.mu);
  auto& slot = c.entries[key];
  if (auto existing = slot.lock()) {
    *reused = true;
    return existing;
  }
  slot = code;
  *reused = false;
  prune(c);
  return code;
}

size_t cached_code_keys() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.entries.size();
}

}  // namespace jit
}  // namespace ferrite
