// The scalar semantics of every value op. Floats compute in their own width (f32 ops call
// the float overloads of <cmath>), integers wrap (arithmetic is done in uint64_t so that
// overflow is defined), and every partial operation (division by zero, INT64_MIN / -1,
// NaN -> int) has a defined result instead of undefined behaviour.
#include "compiler/plan/scalar_ops.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "compiler/plan/error.h"
#include "compiler/plan/minifloat.h"
#include "compiler/plan/wrapping.h"

namespace ferrite {
namespace {

constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

[[noreturn]] void undefined_op(Op op, ScalarType t) {
  fail("op ", op_name(op), " is not defined on ", scalar_type_name(t));
}

// ---- floating point ----------------------------------------------------------------------

template <class T>
T float_sigmoid(T x) {
  // Never exponentiates a positive number, so it cannot overflow.
  if (x >= 0) return T(1) / (T(1) + std::exp(-x));
  T e = std::exp(x);
  return e / (T(1) + e);
}

template <class T>
T float_sign(T x) {
  if (x > 0) return T(1);
  if (x < 0) return T(-1);
  return x;  // keeps +-0 and NaN
}

template <class T>
T float_unary(Op op, T x) {
  switch (op) {
    case Op::Neg:
      return -x;
    case Op::Abs:
      return std::fabs(x);
    case Op::Exp:
      return std::exp(x);
    case Op::Log:
      return std::log(x);
    case Op::Sqrt:
      return std::sqrt(x);
    case Op::Rsqrt:
      return T(1) / std::sqrt(x);
    case Op::Reciprocal:
      return T(1) / x;
    case Op::Relu:
      return x < 0 ? T(0) : x;
    case Op::Sigmoid:
      return float_sigmoid(x);
    case Op::Tanh:
      return std::tanh(x);
    case Op::Erf:
      return std::erf(x);
    case Op::Floor:
      return std::floor(x);
    case Op::Ceil:
      return std::ceil(x);
    case Op::Round:
      return std::nearbyint(x);  // default rounding mode: half to even
    case Op::Sign:
      return float_sign(x);
    case Op::Sin:
      return std::sin(x);
    case Op::Cos:
      return std::cos(x);
    case Op::Tan:
      return std::tan(x);
    case Op::Asin:
      return std::asin(x);
    case Op::Acos:
      return std::acos(x);
    case Op::Atan:
      return std::atan(x);
    case Op::Sinh:
      return std::sinh(x);
    case Op::Cosh:
      return std::cosh(x);
    case Op::Asinh:
      return std::asinh(x);
    case Op::Acosh:
      return std::acosh(x);
    case Op::Atanh:
      return std::atanh(x);
    default:
      break;
  }
  undefined_op(op, sizeof(T) == 4 ? ScalarType::F32 : ScalarType::F64);
}

// NaN propagates (a + b is NaN when either is).
template <class T>
T float_max(T a, T b) {
  return std::isnan(a) || std::isnan(b) ? a + b : (a > b ? a : b);
}
template <class T>
T float_min(T a, T b) {
  return std::isnan(a) || std::isnan(b) ? a + b : (a < b ? a : b);
}

// Python's %: the result takes the divisor's sign.
template <class T>
T float_mod(T a, T b) {
  T r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

template <class T>
T float_arith(Op op, T a, T b) {
  switch (op) {
    case Op::Add:
      return a + b;
    case Op::Sub:
      return a - b;
    case Op::Mul:
      return a * b;
    case Op::Div:
      return a / b;
    case Op::Pow:
      return std::pow(a, b);
    case Op::Max:
      return float_max(a, b);
    case Op::Min:
      return float_min(a, b);
    case Op::Mod:
      return float_mod(a, b);
    case Op::FMod:
      return std::fmod(a, b);
    default:
      break;
  }
  undefined_op(op, sizeof(T) == 4 ? ScalarType::F32 : ScalarType::F64);
}

template <class T>
bool compare(Op op, T a, T b) {
  switch (op) {
    case Op::Eq:
      return a == b;
    case Op::Lt:
      return a < b;
    case Op::Le:
      return a <= b;
    case Op::Gt:
      return a > b;
    case Op::Ge:
      return a >= b;
    default:
      return false;
  }
}

// ---- integers ----------------------------------------------------------------------------

int64_t int_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return wrap_sub(0, a);  // INT64_MIN / -1 wraps to INT64_MIN
  return a / b;
}

// C's %: the result takes the dividend's sign.
int64_t int_fmod(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  return a % b;
}

int64_t int_mod(int64_t a, int64_t b) {
  int64_t r = int_fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

int64_t int_pow(int64_t base, int64_t exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exp & 1) ? -1 : 1;
    return 0;  // the exact result is a fraction that truncates to 0
  }
  int64_t result = 1;
  while (exp > 0) {
    if (exp & 1) result = wrap_mul(result, base);
    base = wrap_mul(base, base);
    exp >>= 1;
  }
  return result;
}

int64_t int_unary(Op op, int64_t x) {
  switch (op) {
    case Op::Neg:
      return wrap_sub(0, x);
    case Op::Abs:
      return x < 0 ? wrap_sub(0, x) : x;
    case Op::Sign:
      return x > 0 ? 1 : (x < 0 ? -1 : 0);
    case Op::Relu:
      return x < 0 ? 0 : x;
    case Op::BitNot:
      return static_cast<int64_t>(~static_cast<uint64_t>(x));
    default:
      break;
  }
  undefined_op(op, ScalarType::I64);
}

// The bits of a and b; shifts of 64 or more (or a negative count, a uint64 past 2^63) give 0.
int64_t int_bitwise(Op op, int64_t a, int64_t b) {
  const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case Op::BitAnd:
      return static_cast<int64_t>(ua & ub);
    case Op::BitOr:
      return static_cast<int64_t>(ua | ub);
    case Op::BitXor:
      return static_cast<int64_t>(ua ^ ub);
    case Op::Shl:
      return ub >= 64 ? 0 : static_cast<int64_t>(ua << ub);
    case Op::Shr:
      return ub >= 64 ? 0 : static_cast<int64_t>(ua >> ub);
    default:
      break;
  }
  undefined_op(op, ScalarType::I64);
}

int64_t int_arith(Op op, int64_t a, int64_t b) {
  switch (op) {
    case Op::Add:
      return wrap_add(a, b);
    case Op::Sub:
      return wrap_sub(a, b);
    case Op::Mul:
      return wrap_mul(a, b);
    case Op::Div:
      return int_div(a, b);
    case Op::Pow:
      return int_pow(a, b);
    case Op::Max:
      return a > b ? a : b;
    case Op::Min:
      return a < b ? a : b;
    case Op::Mod:
      return int_mod(a, b);
    case Op::FMod:
      return int_fmod(a, b);
    default:
      break;
  }
  undefined_op(op, ScalarType::I64);
}

bool bool_binary(Op op, bool a, bool b) {
  switch (op) {
    case Op::And:
      return a && b;
    case Op::Or:
      return a || b;
    case Op::Xor:
      return a != b;
    default:
      break;
  }
  if (op_is_compare(op)) return compare<int>(op, a, b);
  undefined_op(op, ScalarType::Bool);
}

// ---- conversions -------------------------------------------------------------------------

// Truncates toward zero; NaN gives 0 and out-of-range values saturate.
template <class T>
int64_t float_to_i64(T x) {
  if (std::isnan(x)) return 0;
  // 2^63 is exact in both float and double.
  if (x >= T(9223372036854775808.0)) return kI64Max;
  if (x < T(-9223372036854775808.0)) return kI64Min;
  return static_cast<int64_t>(x);
}

// A double outside float's range becomes +-inf (as IEEE rounding does) without relying on
// the conversion of an unrepresentable value, which C++ leaves undefined.
float double_to_float(double x) {
  constexpr double kMax = std::numeric_limits<float>::max();
  if (x > kMax || x < -kMax) {
    // Values within half an ulp of FLT_MAX still round to it.
    constexpr double kOverflow = 340282356779733661637539395458142568448.0;  // 2^128 - 2^103
    if (std::isfinite(x) && std::fabs(x) < kOverflow) return x > 0 ? kMax : -kMax;
    return x > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
  }
  return static_cast<float>(x);
}

template <class T>
T read_as(const void* base, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const uint8_t*>(base) + i * static_cast<int64_t>(sizeof(T)),
              sizeof(T));
  return v;
}

template <class T>
void write_as(void* base, int64_t i, T v) {
  std::memcpy(static_cast<uint8_t*>(base) + i * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
}

// Narrow integers keep the low bits (two's complement wrap), through unsigned types so
// that the conversion is defined.
template <class U>
void write_narrow(void* base, int64_t i, int64_t v) {
  write_as<U>(base, i, static_cast<U>(static_cast<uint64_t>(v)));
}

bool is_nan(ScalarType t, Scalar x) {
  if (t == ScalarType::F32) return std::isnan(x.f32);
  if (t == ScalarType::F64) return std::isnan(x.f64);
  return false;
}

}  // namespace

ScalarType op_result_type(Op op, ScalarType t) {
  if (op_is_compare(op) || op_is_logic(op) || op == Op::Not || op == Op::IsNaN || op == Op::IsInf)
    return ScalarType::Bool;
  return t;
}

bool op_accepts(Op op, ScalarType t) {
  const bool is_float = t == ScalarType::F32 || t == ScalarType::F64;
  switch (op) {
    case Op::Neg:
    case Op::Abs:
    case Op::Sign:
    case Op::Relu:
      return t != ScalarType::Bool;
    case Op::Not:
      return t == ScalarType::Bool;
    case Op::CheckIndex:
    case Op::LoopVar:
      return t == ScalarType::I64;
    default:
      break;
  }
  if (op_is_bitwise(op)) return t == ScalarType::I64;
  if (op_is_unary_math(op)) return is_float;
  if (op_is_binary_arith(op)) return t != ScalarType::Bool;
  if (op_is_logic(op)) return t == ScalarType::Bool;
  return true;  // comparisons and the structural ops take every type
}

Scalar eval_unary(Op op, ScalarType t, Scalar x) {
  switch (t) {
    case ScalarType::F32:
      if (op == Op::IsNaN) return scalar_bool(std::isnan(x.f32));
      if (op == Op::IsInf) return scalar_bool(std::isinf(x.f32));
      return scalar_f32(float_unary<float>(op, x.f32));
    case ScalarType::F64:
      if (op == Op::IsNaN) return scalar_bool(std::isnan(x.f64));
      if (op == Op::IsInf) return scalar_bool(std::isinf(x.f64));
      return scalar_f64(float_unary<double>(op, x.f64));
    case ScalarType::I64:
      return scalar_i64(int_unary(op, x.i64));
    case ScalarType::Bool:
      if (op == Op::Not) return scalar_bool(!x.b);
      break;
  }
  undefined_op(op, t);
}

Scalar eval_binary(Op op, ScalarType t, Scalar a, Scalar b) {
  const bool cmp = op_is_compare(op);
  if (op_is_bitwise(op)) {
    if (t != ScalarType::I64) undefined_op(op, t);
    return scalar_i64(int_bitwise(op, a.i64, b.i64));
  }
  switch (t) {
    case ScalarType::F32:
      if (cmp) return scalar_bool(compare(op, a.f32, b.f32));
      return scalar_f32(float_arith(op, a.f32, b.f32));
    case ScalarType::F64:
      if (cmp) return scalar_bool(compare(op, a.f64, b.f64));
      return scalar_f64(float_arith(op, a.f64, b.f64));
    case ScalarType::I64:
      if (cmp) return scalar_bool(compare(op, a.i64, b.i64));
      return scalar_i64(int_arith(op, a.i64, b.i64));
    case ScalarType::Bool:
      return scalar_bool(bool_binary(op, a.b, b.b));
  }
  undefined_op(op, t);
}

Scalar eval_cast(ScalarType from, ScalarType to, Scalar x) {
  if (from == to) return x;
  switch (to) {
    case ScalarType::F32:
      if (from == ScalarType::F64) return scalar_f32(double_to_float(x.f64));
      if (from == ScalarType::I64) return scalar_f32(static_cast<float>(x.i64));
      return scalar_f32(x.b ? 1.0f : 0.0f);
    case ScalarType::F64:
      if (from == ScalarType::F32) return scalar_f64(x.f32);
      if (from == ScalarType::I64) return scalar_f64(static_cast<double>(x.i64));
      return scalar_f64(x.b ? 1.0 : 0.0);
    case ScalarType::I64:
      if (from == ScalarType::F32) return scalar_i64(float_to_i64(x.f32));
      if (from == ScalarType::F64) return scalar_i64(float_to_i64(x.f64));
      return scalar_i64(x.b ? 1 : 0);
    case ScalarType::Bool:
      if (from == ScalarType::F32) return scalar_bool(x.f32 != 0);
      if (from == ScalarType::F64) return scalar_bool(x.f64 != 0);
      return scalar_bool(x.i64 != 0);
  }
  fail("cast: invalid target type ", static_cast<int>(to));
}

Scalar make_const(ScalarType t, double f, int64_t i) {
  switch (t) {
    case ScalarType::F32:
      return scalar_f32(double_to_float(f));
    case ScalarType::F64:
      return scalar_f64(f);
    case ScalarType::I64:
      return scalar_i64(i);
    case ScalarType::Bool:
      return scalar_bool(i != 0);
  }
  fail("const: invalid type ", static_cast<int>(t));
}

Scalar load_element(DType t, const void* base, int64_t i) {
  switch (t) {
    case DType::F32:
      return scalar_f32(read_as<float>(base, i));
    case DType::F16:
      return scalar_f32(half_to_float(read_as<uint16_t>(base, i)));
    case DType::BF16:
      return scalar_f32(bfloat16_to_float(read_as<uint16_t>(base, i)));
    case DType::F64:
      return scalar_f64(read_as<double>(base, i));
    case DType::U8:
      return scalar_i64(read_as<uint8_t>(base, i));
    case DType::I8:
      return scalar_i64(read_as<int8_t>(base, i));
    case DType::U16:
      return scalar_i64(read_as<uint16_t>(base, i));
    case DType::I16:
      return scalar_i64(read_as<int16_t>(base, i));
    case DType::U32:
      return scalar_i64(read_as<uint32_t>(base, i));
    case DType::I32:
      return scalar_i64(read_as<int32_t>(base, i));
    case DType::I64:
      return scalar_i64(read_as<int64_t>(base, i));
    case DType::U64:
      return scalar_i64(static_cast<int64_t>(read_as<uint64_t>(base, i)));
    case DType::Bool:
      return scalar_bool(read_as<uint8_t>(base, i) != 0);
    case DType::U4:
    case DType::U2:
      return scalar_i64(read_as<uint8_t>(base, i));
    case DType::I4:
    case DType::I2:
      return scalar_i64(read_as<int8_t>(base, i));
    default:
      if (dtype_is_minifloat(t))
        return scalar_f32(minifloat_to_float(t, read_as<uint8_t>(base, i)));
      break;
  }
  fail("load: dtype ", dtype_name(t), " has no element representation");
}

void store_element(DType t, void* base, int64_t i, ScalarType from, Scalar x) {
  const Scalar v = eval_cast(from, compute_type(t), x);
  switch (t) {
    case DType::F32:
      return write_as<float>(base, i, v.f32);
    case DType::F16:
      return write_as<uint16_t>(base, i, float_to_half(v.f32));
    case DType::BF16:
      return write_as<uint16_t>(base, i, float_to_bfloat16(v.f32));
    case DType::F64:
      return write_as<double>(base, i, v.f64);
    case DType::U8:
    case DType::I8:
      return write_narrow<uint8_t>(base, i, v.i64);
    case DType::U16:
    case DType::I16:
      return write_narrow<uint16_t>(base, i, v.i64);
    case DType::U32:
    case DType::I32:
      return write_narrow<uint32_t>(base, i, v.i64);
    case DType::I64:
    case DType::U64:
      return write_as<int64_t>(base, i, v.i64);
    case DType::Bool:
      return write_as<uint8_t>(base, i, v.b ? 1 : 0);
    case DType::U4:
    case DType::I4:
    case DType::U2:
    case DType::I2:
      return write_as<uint8_t>(base, i, narrow_to_bits(t, v.i64));
    default:
      if (dtype_is_minifloat(t)) return write_as<uint8_t>(base, i, float_to_minifloat(t, v.f32));
      break;
  }
  fail("store: dtype ", dtype_name(t), " has no element representation");
}

Scalar reduce_identity(ReduceKind k, ScalarType t) {
  const bool is_max = k == ReduceKind::Max || k == ReduceKind::ArgMax;
  const bool is_min = k == ReduceKind::Min || k == ReduceKind::ArgMin;
  if (is_max || is_min) {
    switch (t) {
      case ScalarType::F32:
        return scalar_f32(is_max ? -std::numeric_limits<float>::infinity()
                                 : std::numeric_limits<float>::infinity());
      case ScalarType::F64:
        return scalar_f64(is_max ? -std::numeric_limits<double>::infinity()
                                 : std::numeric_limits<double>::infinity());
      case ScalarType::I64:
        return scalar_i64(is_max ? kI64Min : kI64Max);
      case ScalarType::Bool:
        return scalar_bool(is_min);
    }
  }
  const int one = k == ReduceKind::Prod ? 1 : 0;
  return make_const(t, one, one);
}

Scalar reduce_step(ReduceKind k, ScalarType t, Scalar acc, Scalar x, int64_t index,
                   int64_t* best_index) {
  const bool is_bool = t == ScalarType::Bool;
  switch (k) {
    case ReduceKind::Sum:
      return is_bool ? scalar_bool(acc.b || x.b) : eval_binary(Op::Add, t, acc, x);
    case ReduceKind::Prod:
      return is_bool ? scalar_bool(acc.b && x.b) : eval_binary(Op::Mul, t, acc, x);
    case ReduceKind::Max:
      return is_bool ? scalar_bool(acc.b || x.b) : eval_binary(Op::Max, t, acc, x);
    case ReduceKind::Min:
      return is_bool ? scalar_bool(acc.b && x.b) : eval_binary(Op::Min, t, acc, x);
    case ReduceKind::ArgMax:
    case ReduceKind::ArgMin: {
      // The first extremum wins; a NaN counts as the extremum (like numpy), so the first
      // NaN is kept once seen.
      if (is_nan(t, acc)) return acc;
      const Op better = k == ReduceKind::ArgMax ? Op::Gt : Op::Lt;
      if (is_nan(t, x) || eval_binary(better, t, x, acc).b) {
        if (best_index) *best_index = index;
        return x;
      }
      return acc;
    }
    default:
      break;
  }
  fail("reduce: invalid kind ", static_cast<int>(k));
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1F;
  const uint32_t mant = h & 0x3FF;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);  // inf, NaN (payload kept)
  } else if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in float.
    float mag = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -mag : mag;
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t float_to_half(float f) {
  // After F. Giesen's float_to_half_fast3_rtne: exact round-to-nearest-even.
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  const uint32_t sign = u & 0x80000000u;
  u ^= sign;
  uint32_t out;
  if (u >= (143u << 23)) {                       // >= 65536: inf (or NaN)
    out = u > (255u << 23) ? 0x7E00u : 0x7C00u;  // NaN becomes a quiet NaN
  } else if (u < (113u << 23)) {
    // Subnormal or zero: adding 0.5 aligns the 10 mantissa bits at the bottom, and the
    // FPU's round-to-nearest-even does the rounding.
    const uint32_t magic_bits = 126u << 23;
    float magic, v;
    std::memcpy(&magic, &magic_bits, sizeof magic);
    std::memcpy(&v, &u, sizeof v);
    v += magic;
    std::memcpy(&u, &v, sizeof u);
    out = u - magic_bits;
  } else {
    const uint32_t odd = (u >> 13) & 1;
    u -= 112u << 23;  // rebias the exponent from 127 to 15
    u += 0xFFF + odd;
    out = u >> 13;  // a carry into the exponent rounds up to the next binade or to inf
  }
  return static_cast<uint16_t>(out | (sign >> 16));
}

float bfloat16_to_float(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t float_to_bfloat16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
  u += 0x7FFF + ((u >> 16) & 1);  // round to nearest even; overflow carries to inf
  return static_cast<uint16_t>(u >> 16);
}

uint8_t narrow_to_bits(DType t, int64_t v) {
  const int bits = dtype_bits(t);
  const auto low = static_cast<uint8_t>(static_cast<uint64_t>(v) & ((1u << bits) - 1));
  const bool is_signed = t == DType::I4 || t == DType::I2;
  if (is_signed && (low >> (bits - 1))) return static_cast<uint8_t>(low | (0xFFu << bits));
  return low;
}

}  // namespace ferrite
