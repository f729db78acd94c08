#include "tests/fuzz/plan_mutator.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "tests/fuzz/fuzz_rng.h"
#include "tests/fuzz/plan_layout.h"

namespace ferrite::fuzz {
namespace {

using Bytes = std::vector<uint8_t>;

uint64_t read_le(const Bytes& b, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(b[at + i]) << (8 * i);
  return v;
}

void write_le(Bytes* b, size_t at, int n, uint64_t v) {
  for (int i = 0; i < n; ++i) (*b)[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

int64_t signed_value(uint64_t v, int n) {
  if (n == 4) return static_cast<int32_t>(static_cast<uint32_t>(v));
  if (n == 8) return static_cast<int64_t>(v);
  return static_cast<int64_t>(v);
}

// A new value for a field, by what it means.
uint64_t new_value(Rng& rng, const PlanField& f, int64_t old, const PlanLayout& l) {
  switch (f.slot) {
    case Slot::BufferId:
      return static_cast<uint64_t>(rng.chance(70) ? rng.range(-1, l.buffers) : rng.near(l.buffers));
    case Slot::StepIndex:
      return static_cast<uint64_t>(rng.chance(70) ? rng.range(-1, std::max(l.kernels, l.externs))
                                                  : rng.near(l.kernels));
    case Slot::ConstantId:
      return static_cast<uint64_t>(rng.chance(70) ? rng.range(-1, l.constants)
                                                  : rng.near(l.constants));
    case Slot::Operand:
    case Slot::InstrArg:
    case Slot::IndexId:
      return static_cast<uint64_t>(rng.chance(60) ? rng.range(-1, std::max<int64_t>(old + 2, 4))
                                                  : rng.interesting_int());
    case Slot::Enum:
      return static_cast<uint64_t>(rng.chance(95) ? rng.range(0, f.max) : f.max + 1);
    case Slot::Bool:
      return old ? 0 : 1;
    case Slot::DType: {
      static const std::vector<int64_t> kTypes = {1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 16};
      return static_cast<uint64_t>(rng.pick(kTypes));
    }
    case Slot::Float: {
      const double d = rng.interesting_double();
      uint64_t bits;
      std::memcpy(&bits, &d, 8);
      return bits;
    }
    default:  // dims, strides, offsets, index constants, immediates, other ints
      return static_cast<uint64_t>(rng.chance(50) ? rng.near(old) : rng.interesting_int());
  }
}

void edit_fields(Rng& rng, Bytes* b, const PlanLayout& l) {
  const int edits = rng.chance(70) ? 1 : static_cast<int>(rng.range(2, 4));
  for (int i = 0; i < edits; ++i) {
    const PlanField& f = l.fields[rng.below(l.fields.size())];
    const int64_t old = signed_value(read_le(*b, f.offset, f.size), f.size);
    write_le(b, f.offset, f.size, new_value(rng, f, old, l));
  }
}

void set_count(Bytes* b, const PlanList& list, int64_t delta) {
  const uint64_t n = read_le(*b, list.count_offset, 4);
  write_le(b, list.count_offset, 4, static_cast<uint64_t>(static_cast<int64_t>(n) + delta));
}

// An item of a list duplicated, dropped, or two swapped. Only the list's own count changes:
// lists nest, and an enclosing item's size is implied by its contents, not stored.
bool edit_list(Rng& rng, Bytes* b, const PlanLayout& l) {
  const PlanList& list = l.lists[rng.below(l.lists.size())];
  if (list.items.empty()) return false;
  const auto [begin, end] = list.items[rng.below(list.items.size())];
  const Bytes item(b->begin() + static_cast<long>(begin), b->begin() + static_cast<long>(end));
  switch (rng.below(3)) {
    case 0:
      b->insert(b->begin() + static_cast<long>(end), item.begin(), item.end());
      set_count(b, list, 1);
      return true;
    case 1:
      b->erase(b->begin() + static_cast<long>(begin), b->begin() + static_cast<long>(end));
      set_count(b, list, -1);
      return true;
    default: {
      const auto [b2, e2] = list.items[rng.below(list.items.size())];
      if (b2 <= begin) return false;  // the later one first, so the earlier span stays valid
      const Bytes other(b->begin() + static_cast<long>(b2), b->begin() + static_cast<long>(e2));
      b->erase(b->begin() + static_cast<long>(b2), b->begin() + static_cast<long>(e2));
      b->insert(b->begin() + static_cast<long>(b2), item.begin(), item.end());
      b->erase(b->begin() + static_cast<long>(begin), b->begin() + static_cast<long>(end));
      b->insert(b->begin() + static_cast<long>(begin), other.begin(), other.end());
      return true;
    }
  }
}

void replace_span(Bytes* b, std::pair<size_t, size_t> at, const Bytes& with) {
  b->erase(b->begin() + static_cast<long>(at.first), b->begin() + static_cast<long>(at.second));
  b->insert(b->begin() + static_cast<long>(at.first), with.begin(), with.end());
}

// An index tree replaced by another of the plan's (from another load or store), or removed.
bool edit_index(Rng& rng, Bytes* b, const PlanLayout& l) {
  if (l.index_trees.empty()) return false;
  const auto to = l.index_trees[rng.below(l.index_trees.size())];
  Bytes with = {0};
  if (rng.chance(80)) {
    const auto from = l.index_trees[rng.below(l.index_trees.size())];
    with.assign(b->begin() + static_cast<long>(from.first),
                b->begin() + static_cast<long>(from.second));
  }
  replace_span(b, to, with);
  return true;
}

size_t emit(const Bytes& b, uint8_t* out, size_t max_size) {
  if (b.empty() || b.size() > max_size) return 0;
  std::memcpy(out, b.data(), b.size());
  return b.size();
}

}  // namespace

size_t mutate_plan(uint8_t* data, size_t size, size_t max_size, unsigned seed, ByteMutator bytes) {
  Rng rng(seed);
  PlanLayout layout;
  if (rng.chance(5) || !walk_plan(data, size, &layout) || layout.fields.empty()) {
    return bytes(data, size, max_size);
  }
  Bytes b(data, data + size);
  const size_t kind = rng.below(10);
  bool done = false;
  if (kind < 6) {
    edit_fields(rng, &b, layout);
    done = true;
  } else if (kind < 9 && !layout.lists.empty()) {
    done = edit_list(rng, &b, layout);
  } else {
    done = edit_index(rng, &b, layout);
  }
  if (!done) edit_fields(rng, &b, layout);
  const size_t n = emit(b, data, max_size);
  return n ? n : bytes(data, size, max_size);
}

size_t cross_over_plan(const uint8_t* a, size_t a_size, const uint8_t* b, size_t b_size,
                       uint8_t* out, size_t max_out, unsigned seed) {
  Rng rng(seed);
  PlanLayout la, lb;
  if (walk_plan(a, a_size, &la) && walk_plan(b, b_size, &lb) && !la.lists.empty()) {
    Bytes result(a, a + a_size);
    // An item of b's into a's list of the same kind (a kernel, an instruction, a step, ...).
    for (int tries = 0; tries < 8; ++tries) {
      const PlanList& to = la.lists[rng.below(la.lists.size())];
      std::vector<const PlanList*> same;
      for (const PlanList& l : lb.lists) {
        if (l.kind == to.kind && !l.items.empty()) same.push_back(&l);
      }
      if (same.empty()) continue;
      const PlanList& from = *same[rng.below(same.size())];
      const auto [begin, end] = from.items[rng.below(from.items.size())];
      const size_t at =
          to.items.empty() ? to.count_offset + 4 : to.items[rng.below(to.items.size())].second;
      result.insert(result.begin() + static_cast<long>(at), b + begin, b + end);
      set_count(&result, to, 1);
      return emit(result, out, max_out);
    }
  }
  const size_t head = a_size ? rng.below(a_size + 1) : 0, tail = b_size ? rng.below(b_size) : 0;
  const size_t n = std::min(max_out, head + (b_size - tail));
  std::memcpy(out, a, std::min(head, n));
  if (n > head) std::memcpy(out + head, b + tail, n - head);
  return n;
}

}  // namespace ferrite::fuzz
