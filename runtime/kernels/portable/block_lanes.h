// How the block interpreter holds values in lanes, and typed access to storage. Lanes of a
// compute type: f32 -> float, f64 -> double, i64 -> int64_t, bool -> int32_t 0/1 (the
// width of a float lane, so f32 compares and selects stay in vector registers).
// Storage conversions match scalar_ops' load_element/store_element exactly.
#pragma once

#include <cstdint>
#include <type_traits>

#include "compiler/plan/error.h"
#include "compiler/plan/minifloat.h"
#include "compiler/plan/scalar_ops.h"

namespace ferrite {
namespace portable {

// ---- lanes <-> Scalar ----------------------------------------------------------------------

inline Scalar pack(float v) {
  return scalar_f32(v);
}
inline Scalar pack(double v) {
  return scalar_f64(v);
}
inline Scalar pack(int64_t v) {
  return scalar_i64(v);
}
inline Scalar pack(int32_t v) {
  return scalar_bool(v != 0);
}

inline void unpack(Scalar s, float* out) {
  *out = s.f32;
}
inline void unpack(Scalar s, double* out) {
  *out = s.f64;
}
inline void unpack(Scalar s, int64_t* out) {
  *out = s.i64;
}
inline void unpack(Scalar s, int32_t* out) {
  *out = s.b ? 1 : 0;
}

// Calls f(T{}) with T the lane type of t.
template <class F>
void with_lane_type(ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::F32:
      return f(float{});
    case ScalarType::F64:
      return f(double{});
    case ScalarType::I64:
      return f(int64_t{});
    case ScalarType::Bool:
      return f(int32_t{});
  }
}

// ---- storage ---------------------------------------------------------------------------

// Storage<T>::Mem is the element in memory, Lane the lane type it computes as.
template <DType T>
struct Storage;

#define FERRITE_STORAGE(DT, MEM, LANE, LOAD, STORE) \
  template <>                                       \
  struct Storage<DType::DT> {                       \
    using Mem = MEM;                                \
    using Lane = LANE;                              \
    static Lane load(Mem v) { return LOAD; }        \
    static Mem store(Lane v) { return STORE; }      \
  };

FERRITE_STORAGE(F32, float, float, v, v)
FERRITE_STORAGE(F16, uint16_t, float, half_to_float(v), float_to_half(v))
FERRITE_STORAGE(BF16, uint16_t, float, bfloat16_to_float(v), float_to_bfloat16(v))
FERRITE_STORAGE(F64, double, double, v, v)
// Narrow integers keep their low bits, through unsigned types (defined behaviour).
FERRITE_STORAGE(U8, uint8_t, int64_t, v, static_cast<uint8_t>(static_cast<uint64_t>(v)))
FERRITE_STORAGE(I8, int8_t, int64_t, v, static_cast<int8_t>(static_cast<uint8_t>(v)))
FERRITE_STORAGE(U16, uint16_t, int64_t, v, static_cast<uint16_t>(static_cast<uint64_t>(v)))
FERRITE_STORAGE(I16, int16_t, int64_t, v, static_cast<int16_t>(static_cast<uint16_t>(v)))
FERRITE_STORAGE(U32, uint32_t, int64_t, v, static_cast<uint32_t>(static_cast<uint64_t>(v)))
FERRITE_STORAGE(I32, int32_t, int64_t, v, static_cast<int32_t>(static_cast<uint32_t>(v)))
FERRITE_STORAGE(I64, int64_t, int64_t, v, v)
FERRITE_STORAGE(U64, uint64_t, int64_t, static_cast<int64_t>(v), static_cast<uint64_t>(v))
FERRITE_STORAGE(Bool, uint8_t, int32_t, v != 0, static_cast<uint8_t>(v != 0))
// The small types: a byte per element (dtype.h), converted as scalar_ops converts them.
FERRITE_STORAGE(U4, uint8_t, int64_t, v, narrow_to_bits(DType::U4, v))
FERRITE_STORAGE(I4, int8_t, int64_t, v, static_cast<int8_t>(narrow_to_bits(DType::I4, v)))
FERRITE_STORAGE(U2, uint8_t, int64_t, v, narrow_to_bits(DType::U2, v))
FERRITE_STORAGE(I2, int8_t, int64_t, v, static_cast<int8_t>(narrow_to_bits(DType::I2, v)))
#define FERRITE_MINIFLOAT(DT)                                           \
  FERRITE_STORAGE(DT, uint8_t, float, minifloat_to_float(DType::DT, v), \
                  float_to_minifloat(DType::DT, v))
FERRITE_MINIFLOAT(F8E4M3FN)
FERRITE_MINIFLOAT(F8E4M3FNUZ)
FERRITE_MINIFLOAT(F8E5M2)
FERRITE_MINIFLOAT(F8E5M2FNUZ)
FERRITE_MINIFLOAT(F4E2M1)
FERRITE_MINIFLOAT(F8E8M0)
#undef FERRITE_MINIFLOAT
#undef FERRITE_STORAGE

// Calls f(std::integral_constant<DType, T>{}) for the storage dtype t.
template <class F>
void with_storage(DType t, F&& f) {
#define FERRITE_CASE(DT) \
  case DType::DT:        \
    return f(std::integral_constant<DType, DType::DT>{});
  switch (t) {
    FERRITE_CASE(F32)
    FERRITE_CASE(F16)
    FERRITE_CASE(BF16)
    FERRITE_CASE(F64)
    FERRITE_CASE(U8)
    FERRITE_CASE(I8)
    FERRITE_CASE(U16)
    FERRITE_CASE(I16)
    FERRITE_CASE(U32)
    FERRITE_CASE(I32)
    FERRITE_CASE(I64)
    FERRITE_CASE(U64)
    FERRITE_CASE(Bool)
    FERRITE_CASE(U4)
    FERRITE_CASE(I4)
    FERRITE_CASE(U2)
    FERRITE_CASE(I2)
    FERRITE_CASE(F8E4M3FN)
    FERRITE_CASE(F8E4M3FNUZ)
    FERRITE_CASE(F8E5M2)
    FERRITE_CASE(F8E5M2FNUZ)
    FERRITE_CASE(F4E2M1)
    FERRITE_CASE(F8E8M0)
    default:
      break;
  }
#undef FERRITE_CASE
  fail("portable backend: dtype ", dtype_name(t), " has no element representation");
}

}  // namespace portable
}  // namespace ferrite
