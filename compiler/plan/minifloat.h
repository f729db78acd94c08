// The float types of 8 bits or fewer, one code per byte: float8 e4m3fn, e4m3fnuz, e5m2,
// e5m2fnuz (the OCP and Graphcore formats ONNX names), float4 e2m1 (the low nibble) and
// e8m0 (a power of two, no sign). Decoding is exact; encoding rounds to nearest, ties to
// even (e8m0: up to the next power of two, ONNX Cast's default round_mode). Encoding is the
// storage conversion: a magnitude past the largest finite value becomes infinity where the
// format has one (e5m2) and NaN where it has not (e4m3fn, the fnuz types, e8m0); float4 has
// neither and saturates (NaN becomes 0x8, as ONNX's reference writes it). ONNX Cast's
// saturating conversion is a clamp to +-minifloat_max before the store.
#pragma once

#include <cstdint>

#include "compiler/plan/dtype.h"

namespace ferrite {

// `code`'s value in a minifloat type `t` (dtype_is_minifloat).
float minifloat_to_float(DType t, uint8_t code);
// The code of `f` in minifloat type `t`.
uint8_t float_to_minifloat(DType t, float f);
// The largest finite value of minifloat type `t`.
double minifloat_max(DType t);

}  // namespace ferrite
