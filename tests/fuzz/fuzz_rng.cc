#include "tests/fuzz/fuzz_rng.h"

#include <cmath>
#include <limits>

namespace ferrite::fuzz {

int64_t Rng::interesting_int() {
  static const std::vector<int64_t> kBoundaries = {INT32_MAX,
                                                   INT32_MIN,
                                                   int64_t{1} << 31,
                                                   int64_t{1} << 32,
                                                   (int64_t{1} << 32) + 1,
                                                   int64_t{1} << 40,
                                                   int64_t{1} << 62,
                                                   INT64_MAX,
                                                   INT64_MIN,
                                                   INT64_MIN + 1,
                                                   -(int64_t{1} << 31),
                                                   65535,
                                                   65536,
                                                   1 << 20,
                                                   1000000,
                                                   255,
                                                   256,
                                                   1023,
                                                   1024,
                                                   -1000000};
  const size_t kind = below(10);
  if (kind < 6) return range(-2, 8);
  if (kind < 8) return pick(kBoundaries);
  if (kind < 9) return int64_t{1} << below(63);
  return static_cast<int64_t>(bits());
}

int64_t Rng::near(int64_t n) {
  // In unsigned arithmetic: wrapping at the int64 boundaries is part of the point.
  const auto u = static_cast<uint64_t>(n);
  switch (below(8)) {
    case 0:
      return static_cast<int64_t>(u - 1);
    case 1:
      return n;
    case 2:
      return static_cast<int64_t>(u + 1);
    case 3:
      return static_cast<int64_t>(0 - u);
    case 4:
      return static_cast<int64_t>(2 * u);
    case 5:
      return -1;
    default:
      return interesting_int();
  }
}

float Rng::interesting_float() {
  static const std::vector<float> kValues = {0.0f,
                                             -0.0f,
                                             1.0f,
                                             -1.0f,
                                             0.5f,
                                             2.0f,
                                             1e-30f,
                                             1e30f,
                                             -1e30f,
                                             3.4e38f,
                                             std::numeric_limits<float>::denorm_min(),
                                             std::numeric_limits<float>::min(),
                                             std::numeric_limits<float>::epsilon(),
                                             std::numeric_limits<float>::infinity(),
                                             -std::numeric_limits<float>::infinity(),
                                             std::numeric_limits<float>::quiet_NaN(),
                                             88.7f,
                                             -88.7f,
                                             65504.0f,
                                             16777217.0f,
                                             2147483648.0f,
                                             9.3e18f};
  if (chance(80)) return pick(kValues);
  return static_cast<float>(range(-1000, 1000)) / 8.0f;
}

double Rng::interesting_double() {
  if (chance(10)) return 1e300;
  if (chance(10)) return std::numeric_limits<double>::denorm_min();
  return interesting_float();
}

std::string Rng::interesting_string(const std::vector<std::string>& known) {
  switch (below(6)) {
    case 0:
      return "";
    case 1: {
      std::string s = known.empty() ? "x" : pick(known);
      if (!s.empty()) s[below(s.size())] = static_cast<char>(bits());
      return s;
    }
    case 2:
      return std::string("\x1b[2J\n\r\t", 7);  // control bytes that must not reach a terminal
    case 3:
      return std::string(static_cast<size_t>(range(1, 300)), 'A');
    default:
      return known.empty() ? "x" : pick(known);
  }
}

}  // namespace ferrite::fuzz
