// The rules kernel_analysis.h applies: int64 interval arithmetic, by which it proves that
// lane-varying integers and indices fit int32 lanes (Range: unknown when a bound may leave
// int64), and which ops and storage types the code generator handles where.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "compiler/plan/dtype.h"
#include "compiler/plan/kernel.h"
#include "jit/kernel_analysis.h"

namespace ferrite {
namespace jit {
namespace ranges {

constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();

Range known(int64_t lo, int64_t hi);
// Exact, computed in __int128; unknown when an operand is or a bound leaves int64.
Range add(Range a, Range b);
Range scale(Range a, int64_t f);
Range mul(Range a, Range b);
Range hull(Range a, Range b);
// The values of max(a, b) and min(a, b): a clamp's bounds, not the hull of its operands.
Range max_of(Range a, Range b);
Range min_of(Range a, Range b);
bool fits_i32(Range r);

// Bounds of a float32 value, NaN aside (a cast to int64 maps NaN to 0 on every backend):
// each side known or not. They prove that a cast of a clamped float (a quantization) fits
// int32 lanes.
struct FBound {
  bool has_lo = false, has_hi = false;
  double lo = 0, hi = 0;
};
// The bound of F32 instruction `in` from its operands' (`of`) and, for a Cast from I64,
// the operand's proven range (`from`): constants, clamps (Max, Min), Where, Round, Floor,
// Ceil and integer casts; unknown for everything else.
FBound float_bound(const Instr& in, const std::vector<FBound>& of, Range from);
// The int64 values a float of bound `b` truncates to, when both sides are known and fit
// int32; unknown otherwise.
Range truncated(FBound b);

}  // namespace ranges

// The values an integer storage type holds (unknown for 64-bit and non-integer types).
Range storage_range(DType t);
// Integer storage a uniform (scalar) access reads and writes.
bool uniform_int_storage(DType t);
// Storage types a vector access handles (varying placement), and for strided ones.
bool varying_storage(DType t, bool load);
// Ops on F32 values the code generator emits; on I64 values in vector lanes (int32) and as
// scalars (uniform, int64 in general-purpose registers); on Bool masks. The op manifest's
// op_vec flags (compiler/plan/ops.h) say which.
bool f32_op(Op op);
bool i64_vector_op(Op op);
bool i64_scalar_op(Op op);
bool bool_op(Op op);

}  // namespace jit
}  // namespace ferrite
