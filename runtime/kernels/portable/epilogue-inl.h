// Per-target code of the fused epilogue (epilogue.h): EpilogueRow applies an Epilogue to one
// row segment of an output block held in a vector-padded buffer, EpilogueTile to a tile still
// in registers. Each post-op is its formula of compiler/plan/activations.h evaluated on
// vectors (VecOps): the same ops in the same order as the reference's scalar evaluation, each
// op as the pointwise kernels compute it (vec_math-inl.h: lanes a vector formula does not get
// right go through scalar_ops).
// Included once per target, after hwy/highway.h, by files compiled with foreach_target.h.

#if defined(FERRITE_PORTABLE_EPILOGUE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef FERRITE_PORTABLE_EPILOGUE_INL_H_
#undef FERRITE_PORTABLE_EPILOGUE_INL_H_
#else
#define FERRITE_PORTABLE_EPILOGUE_INL_H_
#endif

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "compiler/plan/post_ops.h"
#include "compiler/plan/scalar_ops.h"
#include "hwy/highway.h"
#include "runtime/kernels/portable/epilogue.h"
#include "runtime/kernels/portable/vec_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ferrite {
namespace HWY_NAMESPACE {
namespace epi {
namespace hn = hwy::HWY_NAMESPACE;

using vm::DF;
using vm::kMaxLanes;
using vm::VF;

// activations.h's formulas, compiled for this target.
namespace act {
#include "compiler/plan/activations-inl.h"
}  // namespace act

// row[0 : nv * N) = f(row[0 : nv * N)) (any alignment).
template <class F>
HWY_INLINE void MapRow(DF d, float* HWY_RESTRICT row, int64_t nv, F f) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t v = 0; v < nv; ++v) hn::StoreU(f(hn::LoadU(d, row + v * N)), d, row + v * N);
}

// The builder of activations.h's formulas on vectors: an op of the Kernel contract as the
// portable pointwise kernels compute it; a comparison gives a lane mask as a vector. Max and
// Min are the plain vector ones, right when no operand is NaN: a post-op that reaches them
// (kReachesMinMax) gets its lanes with a non-finite y or t, and parameters that are not
// finite, from the scalar evaluation (apply_*_post_op), as the reference computes them.
struct VecOps {
  using V = VF;
  DF d;

  HWY_INLINE V unary(Op op, V x) const {
    switch (op) {
      case Op::Relu:
        return vm::UnaryOp<Op::Relu>(d, x);
      case Op::Exp:
        return vm::UnaryOp<Op::Exp>(d, x);
      case Op::Sigmoid:
        return vm::UnaryOp<Op::Sigmoid>(d, x);
      case Op::Tanh:
        return vm::UnaryOp<Op::Tanh>(d, x);
      case Op::Erf:
        return vm::UnaryOp<Op::Erf>(d, x);
      default:  // not in an activation today: scalar_ops, lane by lane
        return Lanes(x, x, [op](float a, float) {
          return eval_unary(op, ScalarType::F32, scalar_f32(a)).f32;
        });
    }
  }
  HWY_INLINE V binary(Op op, V a, V b) const {
    switch (op) {
      case Op::Add:
        return hn::Add(a, b);
      case Op::Sub:
        return hn::Sub(a, b);
      case Op::Mul:
        return hn::Mul(a, b);
      case Op::Div:
        return hn::Div(a, b);
      case Op::Max:
        return hn::Max(a, b);
      case Op::Min:
        return hn::Min(a, b);
      case Op::Lt:
        return hn::VecFromMask(d, hn::Lt(a, b));
      case Op::Gt:
        return hn::VecFromMask(d, hn::Gt(a, b));
      default:
        return Lanes(a, b, [op](float x, float y) {
          const Scalar r = eval_binary(op, ScalarType::F32, scalar_f32(x), scalar_f32(y));
          return op_is_compare(op) ? (r.b ? 1.0f : 0.0f) : r.f32;
        });
    }
  }
  HWY_INLINE V where(V cond, V a, V b) const { return hn::IfThenElse(hn::MaskFromVec(cond), a, b); }
  HWY_INLINE V constant(V, double v) const { return hn::Set(d, static_cast<float>(v)); }

 private:
  template <class F>
  HWY_NOINLINE V Lanes(V a, V b, F f) const {
    HWY_ALIGN float as[kMaxLanes], bs[kMaxLanes];
    hn::Store(a, d, as);
    hn::Store(b, d, bs);
    for (size_t l = 0; l < hn::Lanes(d); ++l) as[l] = f(as[l], bs[l]);
    return hn::Load(d, as);
  }
};

template <PostOpKind K>
constexpr bool kBinaryKind = K >= PostOpKind::Add;

// Whether post-op K's formula reaches a Max or a Min: activations.h evaluated at compile time
// on facts ("this value depends on a Max or a Min").
struct ReachesMinMax {
  using V = bool;
  constexpr V unary(Op, V a) const { return a; }
  constexpr V binary(Op op, V a, V b) const { return a || b || op == Op::Max || op == Op::Min; }
  constexpr V where(V c, V a, V b) const { return c || a || b; }
  constexpr V constant(V, double) const { return false; }
};
template <PostOpKind K>
constexpr bool kReachesMinMax = [] {
  ReachesMinMax b;
  return act::post_op_k<K>(b, PostOp{K}, false, false);
}();

// Whether, for an infinite y and finite parameters (any, zero included), post-op K's formula
// may give a Max or a Min a NaN operand (an infinity times a zero, inf - inf): activations.h
// evaluated at compile time on facts (may be infinite, may be NaN). Where it cannot (Clip:
// min(max(+-inf, lo), hi) is a bound), the plain vector Max and Min give the reference's
// values for infinities and only a NaN y needs the scalar escape.
struct InfMayReachMinMaxAsNaN {
  struct V {
    bool inf = false, nan = false;
  };
  bool* hit;
  constexpr V unary(Op op, V a) const {
    const bool bounded = op == Op::Sigmoid || op == Op::Tanh || op == Op::Erf;
    const bool keeps = bounded || op == Op::Relu || op == Op::Exp || op == Op::Neg;
    return {a.inf && !bounded, a.nan || (a.inf && !keeps)};
  }
  constexpr V binary(Op op, V a, V b) const {
    if (op == Op::Max || op == Op::Min) *hit = *hit || a.nan || b.nan;
    if (op == Op::Add || op == Op::Sub || op == Op::Max || op == Op::Min)
      return {a.inf || b.inf, a.nan || b.nan || (a.inf && b.inf && op != Op::Max && op != Op::Min)};
    if (op == Op::Lt || op == Op::Le || op == Op::Gt || op == Op::Ge || op == Op::Eq)
      return {false, false};                                    // a lane mask
    return {a.inf || b.inf, a.nan || b.nan || a.inf || b.inf};  // Mul, Div, ...: 0 * inf
  }
  constexpr V where(V, V a, V b) const { return {a.inf || b.inf, a.nan || b.nan}; }
  constexpr V constant(V, double) const { return {}; }
};
template <PostOpKind K>
constexpr bool kInfMayReachMinMaxAsNaN = [] {
  bool hit = false;
  InfMayReachMinMaxAsNaN b{&hit};
  act::post_op_k<K>(b, PostOp{K}, InfMayReachMinMaxAsNaN::V{true, false},
                    InfMayReachMinMaxAsNaN::V{true, false});
  return hit;
}();
static_assert(!kInfMayReachMinMaxAsNaN<PostOpKind::Clip> &&
                  kInfMayReachMinMaxAsNaN<PostOpKind::HardSigmoid> &&
                  kInfMayReachMinMaxAsNaN<PostOpKind::HardSwish>,
              "the facts above, on the formulas of activations.h");

inline bool FiniteParams(const PostOp& p) {
  return std::isfinite(p.alpha) && std::isfinite(p.beta);
}

// Post-op K on the vector y (t: a binary one's operand), with VecOps' precondition kept.
template <PostOpKind K>
HWY_INLINE VF PostOpVec(const VecOps& ops, const PostOp& p, VF y, VF t) {
  const VF r = act::post_op_k<K>(ops, p, y, t);
  if constexpr (!kReachesMinMax<K>) return r;
  if constexpr (kBinaryKind<K>) {
    const auto special = hn::Not(hn::And(hn::IsFinite(y), hn::IsFinite(t)));
    if (HWY_LIKELY(hn::AllFalse(ops.d, special))) return r;
    HWY_ALIGN float ys[kMaxLanes], ts[kMaxLanes];
    hn::Store(y, ops.d, ys);
    hn::Store(t, ops.d, ts);
    for (size_t l = 0; l < hn::Lanes(ops.d); ++l) ys[l] = apply_binary_post_op(K, ys[l], ts[l]);
    return hn::Load(ops.d, ys);
  } else if constexpr (kInfMayReachMinMaxAsNaN<K>) {
    return vm::FixLanes(ops.d, y, r, hn::Not(hn::IsFinite(y)),
                        [&p](float v) { return apply_unary_post_op(p, v); });
  } else {  // one compare, where the vector formula holds for infinities (Clip)
    return vm::FixLanes(ops.d, y, r, hn::IsNaN(y),
                        [&p](float v) { return apply_unary_post_op(p, v); });
  }
}

inline void UnaryRow(DF d, const PostOp& p, float* HWY_RESTRICT row, int64_t nv) {
  if (!FiniteParams(p)) {  // VecOps' precondition does not hold: the reference, lane by lane
    const int64_t n = nv * static_cast<int64_t>(hn::Lanes(d));
    for (int64_t l = 0; l < n; ++l) row[l] = apply_unary_post_op(p, row[l]);
    return;
  }
  const VecOps ops{d};
  act::with_post_op_kind(p.kind, [&](auto kind) {
    constexpr PostOpKind K = decltype(kind)::value;
    if constexpr (!kBinaryKind<K>)
      MapRow(d, row, nv, [&](VF y) { return PostOpVec<K>(ops, p, y, y); });
  });
}

// y op t over the row, t(j .. j + w) read from the operand row `t` with column stride `cs`.
template <class F>
HWY_INLINE void BinaryMap(DF d, const float* t, int64_t cs, float* HWY_RESTRICT row, int64_t w,
                          F f) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  if (cs == 0) {  // broadcast along the row: one value
    const VF tv = hn::Set(d, *t);
    return MapRow(d, row, (w + N - 1) / N, [&](VF y) { return f(y, tv); });
  }
  int64_t c = 0;
  if (cs == 1) {
    for (; c + N <= w; c += N)
      hn::StoreU(f(hn::LoadU(d, row + c), hn::LoadU(d, t + c)), d, row + c);
  }
  for (; c < w; c += N) {  // strided, or the tail: gathered; padding lanes get 1 (benign)
    HWY_ALIGN float tb[kMaxLanes];
    for (int64_t l = 0; l < N; ++l) tb[l] = c + l < w ? t[(c + l) * cs] : 1.0f;
    hn::StoreU(f(hn::LoadU(d, row + c), hn::Load(d, tb)), d, row + c);
  }
}

inline void BinaryRow(DF d, PostOpKind kind, const float* t, int64_t cs, float* HWY_RESTRICT row,
                      int64_t w) {
  const VecOps ops{d};
  const PostOp p{kind};
  act::with_post_op_kind(kind, [&](auto k) {
    constexpr PostOpKind K = decltype(k)::value;
    if constexpr (kBinaryKind<K>)
      BinaryMap(d, t, cs, row, w, [&](VF y, VF x) { return PostOpVec<K>(ops, p, y, x); });
  });
}

// Applies `e` to the output elements (i, j .. j + w), held in row[0 : w); `row` has room for
// w rounded up to whole vectors (those lanes are computed on and ignored).
inline void EpilogueRow(const Epilogue& e, int64_t i, int64_t j, float* HWY_RESTRICT row,
                        int64_t w) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const int64_t nv = (w + N - 1) / N;
  if (e.row_bias) {
    const VF b = hn::Set(d, e.row_bias[i * e.row_bias_stride]);
    MapRow(d, row, nv, [&](VF y) { return hn::Add(y, b); });
  }
  for (size_t k = 0; k < e.op_count; ++k) {
    const PostOp& p = e.ops[k];
    if (!post_op_is_binary(p.kind)) {
      UnaryRow(d, p, row, nv);
    } else {
      const EpilogueOperand& t = e.operands[k];
      BinaryRow(d, p.kind, t.p + i * t.rs + j * t.cs, t.cs, row, w);
    }
  }
}

// Whether EpilogueTile can apply `e`: a bias and short post-ops only — relu, leaky relu,
// clip, linear; add, sub, mul by operands with unit-stride or broadcast rows — so that the
// code sits in a microkernel after its K loop without crowding it (with every formula
// inlined there, wasm's mobilenet_v2 ran 25% slower).
inline bool EpilogueInRegisters(const Epilogue& e) {
  for (size_t k = 0; k < e.op_count; ++k) {
    const PostOp& p = e.ops[k];
    switch (p.kind) {
      case PostOpKind::Relu:
      case PostOpKind::LeakyRelu:
      case PostOpKind::Linear:
        break;
      case PostOpKind::Clip:
        if (!std::isfinite(p.alpha) || !std::isfinite(p.beta)) return false;
        break;
      case PostOpKind::Add:
      case PostOpKind::Sub:
      case PostOpKind::Mul:
        if (e.operands[k].cs != 0 && e.operands[k].cs != 1) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

// Post-op K in a tile (a kind EpilogueInRegisters admits, parameters finite): its formula
// alone, with a NaN y passed through where the formula reaches a Max or a Min (Clip). The
// same values as PostOpVec's, without its scalar escape for non-finite lanes (an infinity
// clips as the plain vector Max and Min clip it), whose stack arrays have no place in a
// microkernel.
template <PostOpKind K>
HWY_INLINE VF TileVec(const VecOps& ops, const PostOp& p, VF y, VF t) {
  static_assert(!(kReachesMinMax<K> && kBinaryKind<K>), "Max and Min post-ops are not tiled");
  const VF r = act::post_op_k<K>(ops, p, y, t);
  if constexpr (kReachesMinMax<K>) return hn::IfThenElse(hn::IsNaN(y), y, r);
  return r;
}

// Post-op K over an H x NV-vector tile; a binary one reads its operand t at (i + r,
// j + v * N ..). Forced inline, without lambdas: wasm keeps the tile in registers only when
// the whole epilogue is inlined into the microkernel (through lambdas it ran convolutions
// at half speed).
template <PostOpKind K, int H, int NV>
HWY_INLINE void TileOp(DF d, const PostOp& p, const EpilogueOperand& t, int64_t i, int64_t j,
                       VF (&y)[H][NV]) {
  const VecOps ops{d};
  if constexpr (kBinaryKind<K>) {
    const int64_t N = static_cast<int64_t>(hn::Lanes(d));
    for (int r = 0; r < H; ++r) {
      const float* row = t.p + (i + r) * t.rs + j * t.cs;
      if (t.cs == 0) {
        const VF tv = hn::Set(d, *row);
        for (int v = 0; v < NV; ++v) y[r][v] = TileVec<K>(ops, p, y[r][v], tv);
      } else {
        for (int v = 0; v < NV; ++v)
          y[r][v] = TileVec<K>(ops, p, y[r][v], hn::LoadU(d, row + v * N));
      }
    }
  } else {
    for (int r = 0; r < H; ++r)
      for (int v = 0; v < NV; ++v) y[r][v] = TileVec<K>(ops, p, y[r][v], y[r][v]);
  }
}

// Applies `e` to the H x NV-vector tile y holding the elements (i + r, j .. j + NV * N), all
// inside the output, when EpilogueInRegisters(e). Every value equals EpilogueRow's (the same
// formulas on the same vectors), so a tile's result does not depend on which finished it.
template <int H, int NV>
HWY_INLINE void EpilogueTile(const Epilogue& e, int64_t i, int64_t j, VF (&y)[H][NV]) {
  const DF d;
  if (e.row_bias) {
    for (int r = 0; r < H; ++r) {
      const VF b = hn::Set(d, e.row_bias[(i + r) * e.row_bias_stride]);
      for (int v = 0; v < NV; ++v) y[r][v] = hn::Add(y[r][v], b);
    }
  }
  for (size_t k = 0; k < e.op_count; ++k) {
    const PostOp& p = e.ops[k];
    const EpilogueOperand& t = e.operands[k];
    // Only the kinds EpilogueInRegisters admits: each one's code sits in every microkernel.
    switch (p.kind) {
      case PostOpKind::Relu:
        TileOp<PostOpKind::Relu>(d, p, t, i, j, y);
        break;
      case PostOpKind::LeakyRelu:
        TileOp<PostOpKind::LeakyRelu>(d, p, t, i, j, y);
        break;
      case PostOpKind::Linear:
        TileOp<PostOpKind::Linear>(d, p, t, i, j, y);
        break;
      case PostOpKind::Clip:
        TileOp<PostOpKind::Clip>(d, p, t, i, j, y);
        break;
      case PostOpKind::Add:
        TileOp<PostOpKind::Add>(d, p, t, i, j, y);
        break;
      case PostOpKind::Sub:
        TileOp<PostOpKind::Sub>(d, p, t, i, j, y);
        break;
      case PostOpKind::Mul:
        TileOp<PostOpKind::Mul>(d, p, t, i, j, y);
        break;
      default:
        break;
    }
  }
}

}  // namespace epi
}  // namespace HWY_NAMESPACE
}  // namespace ferrite
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
