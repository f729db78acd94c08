// The scalar meaning of every value op (ops.h) and of storage conversions. This is the
// single definition of what an op computes: the reference backend interprets kernels with
// it, the compiler folds constants with it, and the vector backends are tested against it.
// Nothing here has undefined behaviour for any input: integer division by zero gives 0,
// signed overflow wraps, out-of-range float->int casts saturate, NaN casts to 0.
#pragma once

#include <cstdint>

#include "compiler/plan/dtype.h"
#include "compiler/plan/ops.h"

namespace ferrite {

union Scalar {
  float f32;
  double f64;
  int64_t i64;
  bool b;
};

inline Scalar scalar_f32(float v) {
  Scalar s;
  s.i64 = 0;
  s.f32 = v;
  return s;
}
inline Scalar scalar_f64(double v) {
  Scalar s;
  s.f64 = v;
  return s;
}
inline Scalar scalar_i64(int64_t v) {
  Scalar s;
  s.i64 = v;
  return s;
}
inline Scalar scalar_bool(bool v) {
  Scalar s;
  s.i64 = 0;
  s.b = v;
  return s;
}

// The type an op produces from operands of type `t` (Bool for comparisons, IsNaN, ...).
ScalarType op_result_type(Op op, ScalarType t);
// Whether `op` is defined on operands of type `t` (e.g. Exp is not defined on Bool).
bool op_accepts(Op op, ScalarType t);

Scalar eval_unary(Op op, ScalarType t, Scalar x);
Scalar eval_binary(Op op, ScalarType t, Scalar a, Scalar b);
Scalar eval_cast(ScalarType from, ScalarType to, Scalar x);
// Parses/formats a constant of the given type from its double/int64 immediate.
Scalar make_const(ScalarType t, double f, int64_t i);
// Reads element `i` of a buffer of storage type `t` as its compute type.
Scalar load_element(DType t, const void* base, int64_t i);
// Writes a compute-type value `x` of type `from` as element `i` of storage type `t`.
void store_element(DType t, void* base, int64_t i, ScalarType from, Scalar x);

// Reductions: identity value, and one accumulation step. For ArgMax/ArgMin the
// accumulator carries the best value and `*best_index` the index of its first occurrence.
Scalar reduce_identity(ReduceKind k, ScalarType t);
Scalar reduce_step(ReduceKind k, ScalarType t, Scalar acc, Scalar x, int64_t index,
                   int64_t* best_index);

float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bfloat16_to_float(uint16_t h);
uint16_t float_to_bfloat16(float f);
// The byte that holds integer `v` in a 4- or 2-bit type `t` (U4, I4, U2, I2): its low bits,
// sign-extended for the signed ones (so that the byte reads back as int8 or uint8).
uint8_t narrow_to_bits(DType t, int64_t v);

}  // namespace ferrite
