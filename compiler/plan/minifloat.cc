#include "compiler/plan/minifloat.h"

#include <cmath>

#include "compiler/plan/error.h"

namespace ferrite {
namespace {

// Where a format keeps NaN and infinity.
enum class Specials : uint8_t {
  Ieee,  // exponent all ones: infinity (mantissa 0) or NaN
  Fn,    // only S.1111.111 is NaN; no infinity
  Fnuz,  // only 0x80 (negative zero's code) is NaN; no infinity, no -0
  None,  // neither: saturates, NaN -> 0x8
};

struct Format {
  int exp_bits, man_bits, bias;
  Specials specials;
};

Format format_of(DType t) {
  switch (t) {
    case DType::F8E4M3FN:
      return {4, 3, 7, Specials::Fn};
    case DType::F8E4M3FNUZ:
      return {4, 3, 8, Specials::Fnuz};
    case DType::F8E5M2:
      return {5, 2, 15, Specials::Ieee};
    case DType::F8E5M2FNUZ:
      return {5, 2, 16, Specials::Fnuz};
    case DType::F4E2M1:
      return {2, 1, 1, Specials::None};
    default:
      fail("minifloat: ", dtype_name(t), " is not a minifloat type");
  }
}

int sign_shift(const Format& f) {
  return f.exp_bits + f.man_bits;
}

double format_max(const Format& f) {
  const int top = (1 << f.exp_bits) - 1;
  const int mant = (1 << f.man_bits) - 1;
  switch (f.specials) {
    case Specials::Ieee:  // the largest exponent below all ones, every mantissa bit
      return std::ldexp(1.0 + mant / double(1 << f.man_bits), top - 1 - f.bias);
    case Specials::Fn:  // all ones but the NaN mantissa
      return std::ldexp(1.0 + (mant - 1) / double(1 << f.man_bits), top - f.bias);
    case Specials::Fnuz:
    case Specials::None:
      return std::ldexp(1.0 + mant / double(1 << f.man_bits), top - f.bias);
  }
  return 0;
}

uint8_t nan_code(const Format& f, bool negative) {
  const int s = sign_shift(f);
  switch (f.specials) {
    case Specials::Ieee:  // the quiet NaN: exponent all ones, the mantissa's top bit
      return static_cast<uint8_t>((negative << s) | (((1 << f.exp_bits) - 1) << f.man_bits) |
                                  (1 << (f.man_bits - 1)));
    case Specials::Fn:
      return static_cast<uint8_t>((negative << s) | ((1 << s) - 1));
    case Specials::Fnuz:
    case Specials::None:
      return static_cast<uint8_t>(1 << s);
  }
  return 0;
}

// Rounds v >= 0 to the nearest integer, ties to even, independent of the rounding mode.
double round_even(double v) {
  const double lo = std::floor(v);
  const double d = v - lo;
  if (d > 0.5 || (d == 0.5 && std::fmod(lo, 2.0) != 0)) return lo + 1;
  return lo;
}

uint8_t encode(const Format& f, float x) {
  const int s = sign_shift(f);
  const bool negative = std::signbit(x);
  if (std::isnan(x)) return nan_code(f, negative);
  const uint8_t sign = static_cast<uint8_t>(negative << s);
  const double max = format_max(f);
  const uint8_t max_code = static_cast<uint8_t>(
      sign | (f.specials == Specials::Ieee
                  ? ((((1 << f.exp_bits) - 2) << f.man_bits) | ((1 << f.man_bits) - 1))
                  : (f.specials == Specials::Fn ? (1 << s) - 2 : (1 << s) - 1)));
  auto overflow = [&]() -> uint8_t {
    switch (f.specials) {
      case Specials::Ieee:
        return static_cast<uint8_t>(sign | (((1 << f.exp_bits) - 1) << f.man_bits));
      case Specials::None:
        return max_code;
      default:
        return nan_code(f, negative);
    }
  };
  const double a = std::fabs(static_cast<double>(x));
  if (std::isinf(a)) return overflow();
  const int emin = 1 - f.bias;  // the smallest normal exponent
  int ex = 0;
  std::frexp(a, &ex);  // a = m * 2^ex, m in [0.5, 1): floor(log2 a) = ex - 1
  const int e = a == 0 ? emin : std::max(ex - 1, emin);
  const double q = std::ldexp(1.0, e - f.man_bits);  // the spacing of codes at a
  const double r = round_even(a / q) * q;            // exact: a / q scales by a power of 2
  if (r > max) return overflow();
  if (r == 0) return f.specials == Specials::Fnuz ? 0 : sign;
  std::frexp(r, &ex);
  const int er = ex - 1;  // rounding may have carried into the next binade
  if (er < emin) {        // subnormal: exponent field 0
    return static_cast<uint8_t>(sign | static_cast<int>(r / std::ldexp(1.0, emin - f.man_bits)));
  }
  const int mant = static_cast<int>(r / std::ldexp(1.0, er - f.man_bits)) - (1 << f.man_bits);
  return static_cast<uint8_t>(sign | ((er + f.bias) << f.man_bits) | mant);
}

float decode(const Format& f, uint8_t code) {
  const int s = sign_shift(f);
  const bool negative = (code >> s) & 1;
  const int exp = (code >> f.man_bits) & ((1 << f.exp_bits) - 1);
  const int mant = code & ((1 << f.man_bits) - 1);
  const int top = (1 << f.exp_bits) - 1;
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  switch (f.specials) {
    case Specials::Ieee:
      if (exp == top) {
        const float v = mant ? kNaN : std::numeric_limits<float>::infinity();
        return negative ? -v : v;
      }
      break;
    case Specials::Fn:
      if (exp == top && mant == (1 << f.man_bits) - 1) return negative ? -kNaN : kNaN;
      break;
    case Specials::Fnuz:
      if (code == (1 << s)) return kNaN;
      break;
    case Specials::None:
      break;
  }
  const double v = exp == 0 ? std::ldexp(mant, 1 - f.bias - f.man_bits)
                            : std::ldexp(1.0 + std::ldexp(mant, -f.man_bits), exp - f.bias);
  return static_cast<float>(negative ? -v : v);
}

// e8m0: 2^(code - 127), 0xFF NaN.
float decode_e8m0(uint8_t code) {
  if (code == 0xFF) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, code - 127);
}

// |x| rounded up to a power of two; past 2^127, and infinity and NaN, 0xFF.
uint8_t encode_e8m0(float x) {
  const double a = std::fabs(static_cast<double>(x));
  if (std::isnan(a) || std::isinf(a)) return 0xFF;
  if (a == 0) return 0;  // up from 0: the smallest, 2^-127
  int ex = 0;
  const double m = std::frexp(a, &ex);   // a = m * 2^ex, m in [0.5, 1)
  const int k = m == 0.5 ? ex - 1 : ex;  // a power of two stays, the rest rounds up
  if (k < -127) return 0;
  if (k > 127) return 0xFF;
  return static_cast<uint8_t>(k + 127);
}

}  // namespace

float minifloat_to_float(DType t, uint8_t code) {
  return t == DType::F8E8M0 ? decode_e8m0(code) : decode(format_of(t), code);
}

uint8_t float_to_minifloat(DType t, float f) {
  return t == DType::F8E8M0 ? encode_e8m0(f) : encode(format_of(t), f);
}

double minifloat_max(DType t) {
  return t == DType::F8E8M0 ? std::ldexp(1.0, 127) : format_max(format_of(t));
}

}  // namespace ferrite
