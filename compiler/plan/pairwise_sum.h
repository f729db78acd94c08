// Pairwise summation for long float reductions, shared by the reference interpreter and the
// portable backend (the JIT emits the same scheme): each accumulator adds kPairwiseLeaf
// elements in order (a leaf), then the leaves are added as a binary tree. The rounding
// error then grows with the leaf length plus log2 of the number of leaves instead of with
// the element count: float32 sums of 2^30 ones are exact (one running sum stops at 2^24),
// and the result depends only on the element order, never on threads or addresses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ferrite {

// Elements an accumulator lane adds in order before its partial sum becomes a leaf. Kernels
// reducing at most this many elements per lane sum exactly as one running sum does.
constexpr int64_t kPairwiseLeaf = 128;

// The leaves of `width` lanes pushed one at a time sit in levels like the bits of a binary
// counter: level j holds the sum of 2^j leaves while bit j of the count is set. A push
// merges the new leaf with the full levels below the first empty one; finish adds the levels
// that remain, smallest first. Memory grows with log2 of the leaves (reused across resets).
template <class T>
class PairwiseSum {
 public:
  void reset(size_t width) {
    width_ = width;
    count_ = 0;
  }
  // The leaf acc[0, width) joins the tree; acc is set to 0 (a Sum's identity) for the next.
  void push(T* acc) {
    size_t j = 0;
    for (uint64_t c = count_; c & 1; c >>= 1, ++j) {
      const T* l = level(j);
      for (size_t i = 0; i < width_; ++i) acc[i] = l[i] + acc[i];
    }
    T* l = level(j);
    for (size_t i = 0; i < width_; ++i) {
      l[i] = acc[i];
      acc[i] = T(0);
    }
    ++count_;
  }
  // acc[i] += every leaf pushed since reset (acc holds the last, unfinished leaf).
  void finish(T* acc) {
    size_t j = 0;
    for (uint64_t c = count_; c != 0; c >>= 1, ++j) {
      if ((c & 1) == 0) continue;
      const T* l = level(j);
      for (size_t i = 0; i < width_; ++i) acc[i] = acc[i] + l[i];
    }
    count_ = 0;
  }

 private:
  T* level(size_t j) {
    if (levels_.size() <= j) levels_.resize(j + 1);
    if (levels_[j].size() < width_) levels_[j].resize(width_);
    return levels_[j].data();
  }

  size_t width_ = 0;
  uint64_t count_ = 0;
  std::vector<std::vector<T>> levels_;
};

}  // namespace ferrite
