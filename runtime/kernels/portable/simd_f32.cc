// Highway implementation of simd_f32.h. This file is compiled once per target by
// foreach_target.h; the per-target code lives in ferrite::HWY_NAMESPACE and the public
// functions at the end dispatch to the best target at run time.
#include "runtime/kernels/portable/simd_f32.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "compiler/plan/scalar_ops.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "runtime/kernels/portable/simd_f32.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// After highway.h: the per-target math needs the target set up first.
#include "hwy/contrib/math/math-inl.h"
#include "runtime/kernels/portable/vec_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ferrite {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using DI = hn::RebindToSigned<DF>;
using VF = hn::Vec<DF>;
using vm::kMaxLanes;
static_assert(kMaxLanes <= simd::kAccLanes, "vector wider than the reduction partials");
constexpr float kTiny = std::numeric_limits<float>::denorm_min();
constexpr float kHuge = std::numeric_limits<float>::max();

float scalar_unary(Op op, float x) {
  return eval_unary(op, ScalarType::F32, scalar_f32(x)).f32;
}

// Lanes where `special` is set are recomputed with the scalar reference (NaN, inf and
// arguments outside the vector formula's accurate range are rare).
template <class M>
HWY_INLINE VF FixLanes(DF d, Op op, VF x, VF r, M special) {
  return vm::FixLanes(d, x, r, special, [op](float v) { return scalar_unary(op, v); });
}

using vm::Erf;
using vm::MaxNaN;
using vm::MinNaN;
using vm::Outside;
using vm::Sigmoid;

HWY_INLINE VF Sign(DF d, VF x) {
  const VF one = hn::Set(d, 1.0f);
  return hn::IfThenElse(hn::Gt(x, hn::Zero(d)), one,
                        hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Neg(one), x));
}

HWY_INLINE VF Cosh(DF d, VF x) {
  const VF e = hn::Exp(d, hn::Abs(x));
  return hn::Mul(hn::Set(d, 0.5f), hn::Add(e, hn::Div(hn::Set(d, 1.0f), e)));
}

// Map1 and Map2 return true: "a vector formula ran" (UnaryF32, BinaryF32).
template <class F>
HWY_INLINE bool Map1(const float* HWY_RESTRICT a, float* HWY_RESTRICT out, size_t n, F f) {
  const DF d;
  const size_t N = hn::Lanes(d);
  for (size_t i = 0; i < n; i += N) hn::StoreU(f(d, hn::LoadU(d, a + i)), d, out + i);
  return true;
}

// A unary op whose fast formula is accurate where `bad` is false; other lanes go scalar.
#define FERRITE_FIXED(OP, FORMULA, BAD) \
  case Op::OP:                          \
    return Map1(a, out, n, [](DF d, VF x) { return FixLanes(d, Op::OP, x, FORMULA, BAD); })

// The op switch sits outside the loops: one specialized loop per op. The ops with a case
// are those the manifest (ops.h) flags op_vec::P; SimdF32.FormulasAreTheManifests holds
// them to it.
bool UnaryF32(Op op, const float* HWY_RESTRICT a, float* HWY_RESTRICT out, size_t n) {
  switch (op) {
    case Op::Neg:
      return Map1(a, out, n, [](DF, VF x) { return hn::Neg(x); });
    case Op::Abs:
      return Map1(a, out, n, [](DF, VF x) { return hn::Abs(x); });
    case Op::Sqrt:
      return Map1(a, out, n, [](DF, VF x) { return hn::Sqrt(x); });
    case Op::Rsqrt:
      return Map1(a, out, n, [](DF d, VF x) { return hn::Div(hn::Set(d, 1.0f), hn::Sqrt(x)); });
    case Op::Reciprocal:
      return Map1(a, out, n, [](DF d, VF x) { return hn::Div(hn::Set(d, 1.0f), x); });
    case Op::Relu:
      return Map1(a, out, n, [](DF d, VF x) { return vm::UnaryOp<Op::Relu>(d, x); });
    case Op::Floor:
      return Map1(a, out, n, [](DF, VF x) { return hn::Floor(x); });
    case Op::Ceil:
      return Map1(a, out, n, [](DF, VF x) { return hn::Ceil(x); });
    case Op::Round:
      return Map1(a, out, n, [](DF, VF x) { return hn::Round(x); });
    case Op::Sign:
      return Map1(a, out, n, [](DF d, VF x) { return Sign(d, x); });
    case Op::Exp:
      return Map1(a, out, n, [](DF d, VF x) { return vm::UnaryOp<Op::Exp>(d, x); });
      FERRITE_FIXED(Log, hn::Log(d, x), Outside(d, x, kTiny, kHuge));
    case Op::Sigmoid:
      return Map1(a, out, n, [](DF d, VF x) { return vm::UnaryOp<Op::Sigmoid>(d, x); });
    case Op::Tanh:
      return Map1(a, out, n, [](DF d, VF x) { return vm::UnaryOp<Op::Tanh>(d, x); });
    case Op::Erf:
      return Map1(a, out, n, [](DF d, VF x) { return vm::UnaryOp<Op::Erf>(d, x); });
      FERRITE_FIXED(Sin, hn::Sin(d, x), Outside(d, x, -39000.f, 39000.f));
      FERRITE_FIXED(Cos, hn::Cos(d, x), Outside(d, x, -39000.f, 39000.f));
      FERRITE_FIXED(Asin, hn::Asin(d, x), Outside(d, x, -1.f, 1.f));
      FERRITE_FIXED(Acos, hn::Acos(d, x), Outside(d, x, -1.f, 1.f));
      FERRITE_FIXED(Atan, hn::Atan(d, x), hn::Not(hn::IsFinite(x)));
      FERRITE_FIXED(Sinh, hn::Sinh(d, x), Outside(d, x, -88.f, 88.f));
      FERRITE_FIXED(Cosh, Cosh(d, x), Outside(d, x, -88.f, 88.f));
      FERRITE_FIXED(Asinh, hn::Asinh(d, x), hn::Not(hn::IsFinite(x)));
      FERRITE_FIXED(Acosh, hn::Acosh(d, x), Outside(d, x, 1.f, kHuge));
      FERRITE_FIXED(Atanh, hn::Atanh(d, x), hn::Not(hn::Lt(hn::Abs(x), hn::Set(d, 1.0f))));
    default:
      break;
  }
  // Tan and anything without a vector formula: the scalar reference, lane by lane.
  for (size_t i = 0; i < n; ++i) out[i] = scalar_unary(op, a[i]);
  return false;
}
#undef FERRITE_FIXED

void ClassifyF32(Op op, const float* HWY_RESTRICT a, int32_t* HWY_RESTRICT out, size_t n) {
  const DF d;
  const DI di;
  const size_t N = hn::Lanes(d);
  const auto one = hn::Set(di, 1);
  for (size_t i = 0; i < n; i += N) {
    const VF x = hn::LoadU(d, a + i);
    const auto m = op == Op::IsNaN ? hn::IsNaN(x) : hn::IsInf(x);
    hn::StoreU(hn::IfThenElseZero(hn::RebindMask(di, m), one), di, out + i);
  }
}

template <class F>
HWY_INLINE bool Map2(const float* HWY_RESTRICT a, const float* HWY_RESTRICT b,
                     float* HWY_RESTRICT out, size_t n, F f) {
  const DF d;
  const size_t N = hn::Lanes(d);
  for (size_t i = 0; i < n; i += N)
    hn::StoreU(f(hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i);
  return true;
}

// `out` may alias `a` (the lane-wise reductions accumulate in place), so no restrict.
bool BinaryF32(Op op, const float* a, const float* b, float* out, size_t n) {
  switch (op) {
    case Op::Add:
      return Map2(a, b, out, n, [](VF x, VF y) { return hn::Add(x, y); });
    case Op::Sub:
      return Map2(a, b, out, n, [](VF x, VF y) { return hn::Sub(x, y); });
    case Op::Mul:
      return Map2(a, b, out, n, [](VF x, VF y) { return hn::Mul(x, y); });
    case Op::Div:
      return Map2(a, b, out, n, [](VF x, VF y) { return hn::Div(x, y); });
    case Op::Max:
      return Map2(a, b, out, n, [](VF x, VF y) { return MaxNaN(x, y); });
    case Op::Min:
      return Map2(a, b, out, n, [](VF x, VF y) { return MinNaN(x, y); });
    default:
      break;
  }
  // Pow, Mod, FMod: the scalar definition, lane by lane.
  for (size_t i = 0; i < n; ++i)
    out[i] = eval_binary(op, ScalarType::F32, scalar_f32(a[i]), scalar_f32(b[i])).f32;
  return false;
}

void CompareF32(Op op, const float* HWY_RESTRICT a, const float* HWY_RESTRICT b,
                int32_t* HWY_RESTRICT out, size_t n) {
  const DF d;
  const DI di;
  const size_t N = hn::Lanes(d);
  const auto one = hn::Set(di, 1);
  for (size_t i = 0; i < n; i += N) {
    const VF x = hn::LoadU(d, a + i), y = hn::LoadU(d, b + i);
    hn::Mask<DF> m;
    switch (op) {
      case Op::Eq:
        m = hn::Eq(x, y);
        break;
      case Op::Lt:
        m = hn::Lt(x, y);
        break;
      case Op::Le:
        m = hn::Le(x, y);
        break;
      case Op::Gt:
        m = hn::Gt(x, y);
        break;
      default:
        m = hn::Ge(x, y);
        break;
    }
    hn::StoreU(hn::IfThenElseZero(hn::RebindMask(di, m), one), di, out + i);
  }
}

void WhereF32(const int32_t* HWY_RESTRICT cond, const float* HWY_RESTRICT a,
              const float* HWY_RESTRICT b, float* HWY_RESTRICT out, size_t n) {
  const DF d;
  const DI di;
  const size_t N = hn::Lanes(d);
  for (size_t i = 0; i < n; i += N) {
    const auto m = hn::RebindMask(d, hn::Ne(hn::LoadU(di, cond + i), hn::Zero(di)));
    hn::StoreU(hn::IfThenElse(m, hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i);
  }
}

HWY_INLINE VF ReduceOp(ReduceKind k, VF a, VF b) {
  switch (k) {
    case ReduceKind::Sum:
      return hn::Add(a, b);
    case ReduceKind::Prod:
      return hn::Mul(a, b);
    case ReduceKind::Max:
      return MaxNaN(a, b);
    default:
      return MinNaN(a, b);
  }
}

void ReduceF32(ReduceKind k, const float* HWY_RESTRICT x, size_t n, float* HWY_RESTRICT acc) {
  const DF d;
  const size_t N = hn::Lanes(d);
  const float id = reduce_identity(k, ScalarType::F32).f32;
  // Four independent chains hide the add latency.
  VF v0 = hn::LoadU(d, acc), v1 = hn::Set(d, id), v2 = v1, v3 = v1;
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    v0 = ReduceOp(k, v0, hn::LoadU(d, x + i));
    v1 = ReduceOp(k, v1, hn::LoadU(d, x + i + N));
    v2 = ReduceOp(k, v2, hn::LoadU(d, x + i + 2 * N));
    v3 = ReduceOp(k, v3, hn::LoadU(d, x + i + 3 * N));
  }
  for (; i + N <= n; i += N) v0 = ReduceOp(k, v0, hn::LoadU(d, x + i));
  if (i < n) {  // the tail, padded with the identity
    HWY_ALIGN float tail[kMaxLanes];
    for (size_t l = 0; l < N; ++l) tail[l] = i + l < n ? x[i + l] : id;
    v1 = ReduceOp(k, v1, hn::Load(d, tail));
  }
  hn::StoreU(ReduceOp(k, ReduceOp(k, v0, v1), ReduceOp(k, v2, v3)), d, acc);
}

// out = e^(x - shift) over n rounded up to the vector width; the sum of the first n.
float ExpShiftedSumF32(const float* x, float shift, float* out, size_t n) {  // out may be x
  const DF d;
  const size_t N = hn::Lanes(d);
  const VF sh = hn::Set(d, shift);
  VF sum0 = hn::Zero(d), sum1 = sum0;
  size_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    const VF e0 = vm::UnaryOp<Op::Exp>(d, hn::Sub(hn::LoadU(d, x + i), sh));
    const VF e1 = vm::UnaryOp<Op::Exp>(d, hn::Sub(hn::LoadU(d, x + i + N), sh));
    hn::StoreU(e0, d, out + i);
    hn::StoreU(e1, d, out + i + N);
    sum0 = hn::Add(sum0, e0);
    sum1 = hn::Add(sum1, e1);
  }
  for (; i < n; i += N) {  // past n: lanes of the rounded-up block, left out of the sum
    const VF e = vm::UnaryOp<Op::Exp>(d, hn::Sub(hn::LoadU(d, x + i), sh));
    hn::StoreU(e, d, out + i);
    sum0 = hn::Add(sum0, hn::IfThenElseZero(hn::FirstN(d, n - i), e));
  }
  return hn::GetLane(hn::SumOfLanes(d, hn::Add(sum0, sum1)));
}

// x * 0 is 0 for a finite x, NaN for an infinity or NaN: four such sums over x, NaN-free
// exactly when every x is finite.
bool AnyNonFiniteF32(const float* x, size_t n) {
  const DF d;
  const size_t N = hn::Lanes(d);
  const VF zero = hn::Zero(d);
  VF v0 = zero, v1 = zero, v2 = zero, v3 = zero;
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    v0 = hn::MulAdd(hn::LoadU(d, x + i), zero, v0);
    v1 = hn::MulAdd(hn::LoadU(d, x + i + N), zero, v1);
    v2 = hn::MulAdd(hn::LoadU(d, x + i + 2 * N), zero, v2);
    v3 = hn::MulAdd(hn::LoadU(d, x + i + 3 * N), zero, v3);
  }
  for (; i + N <= n; i += N) v0 = hn::MulAdd(hn::LoadU(d, x + i), zero, v0);
  float tail = 0;
  for (; i < n; ++i) tail += x[i] * 0.0f;
  const VF all = hn::Add(hn::Add(v0, v1), hn::Add(v2, v3));
  return !hn::AllTrue(d, hn::Eq(all, all)) || tail != tail;
}

// The partials ReduceF32 writes: one vector; past it, acc keeps the identity.
size_t AccLanesUsed() {
  return hn::Lanes(DF());
}

const char* TargetName() {
  return hwy::TargetName(HWY_TARGET);
}

}  // namespace HWY_NAMESPACE
}  // namespace ferrite
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ferrite {
namespace simd {

HWY_EXPORT(UnaryF32);
HWY_EXPORT(ClassifyF32);
HWY_EXPORT(BinaryF32);
HWY_EXPORT(CompareF32);
HWY_EXPORT(WhereF32);
HWY_EXPORT(ReduceF32);
HWY_EXPORT(ExpShiftedSumF32);
HWY_EXPORT(AnyNonFiniteF32);
HWY_EXPORT(AccLanesUsed);
HWY_EXPORT(TargetName);

bool unary_f32(Op op, const float* a, float* out, size_t n) {
  return HWY_DYNAMIC_DISPATCH(UnaryF32)(op, a, out, n);
}
void classify_f32(Op op, const float* a, int32_t* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(ClassifyF32)(op, a, out, n);
}
bool binary_f32(Op op, const float* a, const float* b, float* out, size_t n) {
  return HWY_DYNAMIC_DISPATCH(BinaryF32)(op, a, b, out, n);
}
void compare_f32(Op op, const float* a, const float* b, int32_t* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(CompareF32)(op, a, b, out, n);
}
void where_f32(const int32_t* cond, const float* a, const float* b, float* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(WhereF32)(cond, a, b, out, n);
}
void reduce_f32(ReduceKind kind, const float* x, size_t n, float* acc) {
  HWY_DYNAMIC_DISPATCH(ReduceF32)(kind, x, n, acc);
}
float exp_shifted_sum_f32(const float* x, float shift, float* out, size_t n) {
  return HWY_DYNAMIC_DISPATCH(ExpShiftedSumF32)(x, shift, out, n);
}
bool any_nonfinite_f32(const float* x, size_t n) {
  return HWY_DYNAMIC_DISPATCH(AnyNonFiniteF32)(x, n);
}
size_t acc_lanes_used() {
  return HWY_DYNAMIC_DISPATCH(AccLanesUsed)();
}
float reduce_f32_finish(ReduceKind kind, const float* acc) {
  // Only the lanes reduce_f32 wrote: folding the identity changes nothing. The steps are
  // scalar_ops' (NaN-propagating Max/Min), spelled out: a short row's reduction would
  // otherwise spend much of its time in the generic reduce_step.
  const size_t used = HWY_DYNAMIC_DISPATCH(AccLanesUsed)();
  float r = reduce_identity(kind, ScalarType::F32).f32;
  for (size_t l = 0; l < used; ++l) {
    const float x = acc[l];
    switch (kind) {
      case ReduceKind::Sum:
        r = r + x;
        break;
      case ReduceKind::Prod:
        r = r * x;
        break;
      case ReduceKind::Max:
        r = std::isnan(r) || std::isnan(x) ? r + x : (r > x ? r : x);
        break;
      default:  // Min: reduce_f32 takes no other kind
        r = std::isnan(r) || std::isnan(x) ? r + x : (r < x ? r : x);
        break;
    }
  }
  return r;
}
const char* target_name() {
  return HWY_DYNAMIC_DISPATCH(TargetName)();
}

std::vector<std::string> available_targets() {
  std::vector<std::string> names;
  for (int64_t t : hwy::SupportedAndGeneratedTargets()) names.push_back(hwy::TargetName(t));
  return names;
}

int64_t isa_disabled_targets() {
  const char* isa = std::getenv("FERRITE_ISA");
  // Highway's better targets have the lower bits: every one above AVX2.
  return isa && std::string(isa) == "avx2" ? HWY_AVX2 - 1 : 0;
}

void apply_isa_from_environment() {
  static const bool applied = [] {
    if (const int64_t disabled = isa_disabled_targets()) hwy::DisableTargets(disabled);
    return true;
  }();
  (void)applied;
}

void pin_target(const std::string& name) {
  for (int64_t t : hwy::SupportedAndGeneratedTargets())
    if (name == hwy::TargetName(t)) return hwy::SetSupportedTargetsForTest(t);
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace simd
}  // namespace ferrite
#endif  // HWY_ONCE
