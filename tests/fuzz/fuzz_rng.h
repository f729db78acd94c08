// The random choices the structure-aware mutators make: a seeded generator (libFuzzer passes
// the seed, so a mutation can be replayed) and the values that find bugs more often than
// uniform ones: boundaries of int32/int64, small counts, powers of two, and the floats
// where arithmetic misbehaves (NaN, infinities, denormals, huge and tiny magnitudes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace ferrite::fuzz {

class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}

  // Uniform in [0, n); n must be positive.
  size_t below(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(gen_); }
  int64_t range(int64_t lo, int64_t hi) {  // inclusive
    return std::uniform_int_distribution<int64_t>(lo, hi)(gen_);
  }
  bool chance(int percent) { return static_cast<int>(below(100)) < percent; }
  uint64_t bits() { return gen_(); }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }

  // An integer a mutator would set a count, dim, axis, id or attribute to: mostly small
  // (-2..8), sometimes a boundary (2^31-1, 2^32, 2^62, INT64_MIN, ...) or a random one.
  int64_t interesting_int();
  // The same near a known size n (n-1, n, n+1, -n, 2n), for ids and indices into lists.
  int64_t near(int64_t n);
  float interesting_float();
  double interesting_double();
  // A short string: empty, one of `known`, a known one with a byte changed, or odd bytes.
  std::string interesting_string(const std::vector<std::string>& known);

 private:
  std::mt19937_64 gen_;
};

}  // namespace ferrite::fuzz
