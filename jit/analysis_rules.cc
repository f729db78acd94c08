#include "jit/analysis_rules.h"

#include <algorithm>
#include <cmath>

#include <algorithm>

namespace ferrite {
namespace jit {
namespace ranges {

Range known(int64_t lo, int64_t hi) {
  Range r;
  r.known = true;
  r.lo = lo;
  r.hi = hi;
  return r;
}

namespace {

// Interval arithmetic in __int128: exact, and unknown when a bound leaves int64.
Range checked(__int128 lo, __int128 hi) {
  const __int128 mn = std::numeric_limits<int64_t>::min(), mx = std::numeric_limits<int64_t>::max();
  if (lo < mn || hi > mx) return Range();
  return known(static_cast<int64_t>(lo), static_cast<int64_t>(hi));
}

}  // namespace

Range add(Range a, Range b) {
  if (!a.known || !b.known) return Range();
  return checked(static_cast<__int128>(a.lo) + b.lo, static_cast<__int128>(a.hi) + b.hi);
}
Range scale(Range a, int64_t f) {
  if (!a.known) return Range();
  const __int128 x = static_cast<__int128>(a.lo) * f, y = static_cast<__int128>(a.hi) * f;
  return checked(std::min(x, y), std::max(x, y));
}
Range mul(Range a, Range b) {
  if (!a.known || !b.known) return Range();
  const __int128 c[4] = {static_cast<__int128>(a.lo) * b.lo, static_cast<__int128>(a.lo) * b.hi,
                         static_cast<__int128>(a.hi) * b.lo, static_cast<__int128>(a.hi) * b.hi};
  return checked(*std::min_element(c, c + 4), *std::max_element(c, c + 4));
}
Range hull(Range a, Range b) {
  if (!a.known || !b.known) return Range();
  return known(std::min(a.lo, b.lo), std::max(a.hi, b.hi));
}
Range max_of(Range a, Range b) {
  if (!a.known || !b.known) return Range();
  return known(std::max(a.lo, b.lo), std::max(a.hi, b.hi));
}
Range min_of(Range a, Range b) {
  if (!a.known || !b.known) return Range();
  return known(std::min(a.lo, b.lo), std::min(a.hi, b.hi));
}
bool fits_i32(Range r) {
  return r.known && r.lo >= kI32Min && r.hi <= kI32Max;
}

FBound float_bound(const Instr& in, const std::vector<FBound>& of, Range from) {
  FBound r;
  auto at = [&](int id) { return id >= 0 ? of[static_cast<size_t>(id)] : FBound{}; };
  const FBound a = at(in.a), b = at(in.b), c = at(in.c);
  switch (in.op) {
    case Op::Const:
      if (std::isfinite(in.fimm)) r = FBound{true, true, in.fimm, in.fimm};
      break;
    case Op::Cast:
      if (from.known)
        r = FBound{true, true, static_cast<double>(from.lo), static_cast<double>(from.hi)};
      break;
    case Op::Max:  // at least either operand's low bound; at most the larger high one
      r.has_lo = a.has_lo || b.has_lo;
      r.lo = a.has_lo && b.has_lo ? std::max(a.lo, b.lo) : (a.has_lo ? a.lo : b.lo);
      r.has_hi = a.has_hi && b.has_hi;
      r.hi = std::max(a.hi, b.hi);
      break;
    case Op::Min:
      r.has_hi = a.has_hi || b.has_hi;
      r.hi = a.has_hi && b.has_hi ? std::min(a.hi, b.hi) : (a.has_hi ? a.hi : b.hi);
      r.has_lo = a.has_lo && b.has_lo;
      r.lo = std::min(a.lo, b.lo);
      break;
    case Op::Where:
      r = FBound{b.has_lo && c.has_lo, b.has_hi && c.has_hi, std::min(b.lo, c.lo),
                 std::max(b.hi, c.hi)};
      break;
    case Op::Round:
    case Op::Floor:
    case Op::Ceil:
      r = FBound{a.has_lo, a.has_hi, std::floor(a.lo), std::ceil(a.hi)};
      break;
    default:
      break;
  }
  return r;
}

Range truncated(FBound b) {
  if (!b.has_lo || !b.has_hi || b.lo < static_cast<double>(kI32Min) ||
      b.hi > static_cast<double>(kI32Max))
    return Range();
  return known(static_cast<int64_t>(std::trunc(b.lo)), static_cast<int64_t>(std::trunc(b.hi)));
}

}  // namespace ranges

Range storage_range(DType t) {
  using ranges::known;
  switch (t) {
    case DType::U8:
      return known(0, 255);
    case DType::I8:
      return known(-128, 127);
    case DType::U16:
      return known(0, 65535);
    case DType::I16:
      return known(-32768, 32767);
    case DType::I32:
      return known(ranges::kI32Min, ranges::kI32Max);
    case DType::U32:
      return known(0, 4294967295LL);
    default:
      return Range();
  }
}

bool uniform_int_storage(DType t) {
  switch (t) {
    case DType::U8:
    case DType::I8:
    case DType::U16:
    case DType::I16:
    case DType::I32:
    case DType::U32:
    case DType::I64:
    case DType::U64:
      return true;
    default:
      return false;
  }
}

bool varying_storage(DType t, bool load) {
  switch (t) {
    case DType::F32:
    case DType::F16:
    case DType::Bool:
    case DType::I32:
      return true;
    case DType::U8:
    case DType::I8:
      return true;  // stored contiguously only (kernel_analysis)
    case DType::I64:
      return !load;
    default:
      return false;
  }
}

bool f32_op(Op op) {
  return op_vector(op, op_vec::J);
}

bool i64_vector_op(Op op) {
  return op_vector(op, op_vec::I);
}

bool i64_scalar_op(Op op) {
  return op_vector(op, op_vec::U);
}

bool bool_op(Op op) {
  return op_vector(op, op_vec::B);
}

}  // namespace jit
}  // namespace ferrite
