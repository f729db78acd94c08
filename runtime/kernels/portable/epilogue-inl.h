// Per-target code of the fused epilogue (epilogue.h): EpilogueRow applies an Epilogue to one
// row segment of an output block held in a vector-padded buffer. The common post-ops are
// vector formulas (vec_math-inl.h); lanes where a formula is not exact enough (NaN, inf,
// exp out of range) and any kind without one go through the scalar apply_unary_post_op /
// apply_binary_post_op, so results match the reference backend's.
// These vector formulas are the one copy of the activations left outside
// compiler/plan/activations.h. Instantiating activations.h's formulas here on Highway vectors
// gave the same results and cost 1-2% natively, but made every wasm convolution twice as slow
// (resnet18 70 -> 121 ms): the microkernels that inline EpilogueTile lost their register
// allocation in V8. Until that is understood, they stay written out.
// Included once per target, after hwy/highway.h, by files compiled with foreach_target.h.

#if defined(FERRITE_PORTABLE_EPILOGUE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef FERRITE_PORTABLE_EPILOGUE_INL_H_
#undef FERRITE_PORTABLE_EPILOGUE_INL_H_
#else
#define FERRITE_PORTABLE_EPILOGUE_INL_H_
#endif

#include <cmath>
#include <cstdint>

#include "compiler/plan/post_ops.h"
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

// row[0 : nv * N) = f(row[0 : nv * N)) (any alignment).
template <class F>
HWY_INLINE void MapRow(DF d, float* HWY_RESTRICT row, int64_t nv, F f) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t v = 0; v < nv; ++v) hn::StoreU(f(hn::LoadU(d, row + v * N)), d, row + v * N);
}

// The vector formula of a unary post-op, lanes listed by `special` recomputed in scalar.
#define FERRITE_EPI_UNARY(FORMULA, SPECIAL)                                   \
  return MapRow(d, row, nv, [&](VF y) {                                       \
    return vm::FixLanes(d, y, FORMULA, SPECIAL,                               \
                        [&p](float v) { return apply_unary_post_op(p, v); }); \
  })

inline void UnaryRow(DF d, const PostOp& p, float* HWY_RESTRICT row, int64_t nv) {
  const VF zero = hn::Zero(d), one = hn::Set(d, 1.0f), half = hn::Set(d, 0.5f);
  const VF alpha = hn::Set(d, p.alpha), beta = hn::Set(d, p.beta);
  const bool finite_params = std::isfinite(p.alpha) && std::isfinite(p.beta);
  switch (p.kind) {
    case PostOpKind::Relu:  // exact, NaN included
      return MapRow(d, row, nv, [&](VF y) { return hn::IfThenZeroElse(hn::Lt(y, zero), y); });
    case PostOpKind::LeakyRelu:  // exact, NaN included
      return MapRow(d, row, nv,
                    [&](VF y) { return hn::IfThenElse(hn::Ge(y, zero), y, hn::Mul(alpha, y)); });
    case PostOpKind::Linear:
      return MapRow(d, row, nv, [&](VF y) { return hn::MulAdd(alpha, y, beta); });
    case PostOpKind::Clip:  // fmin/fmax semantics for NaN differ from vector min/max
      if (!finite_params) break;
      FERRITE_EPI_UNARY(hn::Min(hn::Max(y, alpha), beta), hn::IsNaN(y));
    case PostOpKind::HardSigmoid:
      if (!finite_params) break;
      FERRITE_EPI_UNARY(hn::Min(hn::Max(hn::MulAdd(alpha, y, beta), zero), one),
                        hn::Not(hn::IsFinite(y)));
    case PostOpKind::HardSwish:
      FERRITE_EPI_UNARY(
          hn::Mul(y, hn::Min(hn::Max(hn::MulAdd(y, hn::Set(d, 1.0f / 6.0f), half), zero), one)),
          hn::Not(hn::IsFinite(y)));
    case PostOpKind::Elu:  // exp of non-positive numbers only; below -87 exp underflows
      FERRITE_EPI_UNARY(hn::IfThenElse(hn::Gt(y, zero), y,
                                       hn::Mul(alpha, hn::Sub(hn::Exp(d, hn::Min(y, zero)), one))),
                        hn::Or(hn::Lt(y, hn::Set(d, -87.0f)), hn::IsNaN(y)));
    case PostOpKind::Sigmoid:
      FERRITE_EPI_UNARY(vm::Sigmoid(d, y), vm::Outside(d, y, -87.0f, 87.0f));
    case PostOpKind::Silu:
      FERRITE_EPI_UNARY(hn::Mul(y, vm::Sigmoid(d, y)), vm::Outside(d, y, -87.0f, 87.0f));
    case PostOpKind::Tanh:
      FERRITE_EPI_UNARY(hn::Tanh(d, y), hn::IsNaN(y));
    case PostOpKind::GeluErf:
      FERRITE_EPI_UNARY(
          hn::Mul(hn::Mul(half, y),
                  hn::Add(one, vm::Erf(d, hn::Mul(y, hn::Set(d, 0.70710678118654752f))))),
          hn::Not(hn::IsFinite(y)));
    case PostOpKind::GeluTanh: {
      // Beyond |y| = 1e4 the cube could overflow; tanh is +-1 long before.
      const VF k0 = hn::Set(d, 0.79788456080286536f), k1 = hn::Set(d, 0.044715f);
      FERRITE_EPI_UNARY(
          hn::Mul(
              hn::Mul(half, y),
              hn::Add(one, hn::Tanh(d, hn::Mul(k0, hn::MulAdd(hn::Mul(k1, y), hn::Mul(y, y), y))))),
          vm::Outside(d, y, -1e4f, 1e4f));
    }
    default:
      break;
  }
  // No vector formula (or parameters it cannot take): the reference, lane by lane.
  const int64_t n = nv * static_cast<int64_t>(hn::Lanes(d));
  for (int64_t l = 0; l < n; ++l) row[l] = apply_unary_post_op(p, row[l]);
}
#undef FERRITE_EPI_UNARY

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
  switch (kind) {
    case PostOpKind::Add:
      return BinaryMap(d, t, cs, row, w, [](VF y, VF x) { return hn::Add(y, x); });
    case PostOpKind::Sub:
      return BinaryMap(d, t, cs, row, w, [](VF y, VF x) { return hn::Sub(y, x); });
    case PostOpKind::Mul:
      return BinaryMap(d, t, cs, row, w, [](VF y, VF x) { return hn::Mul(y, x); });
    case PostOpKind::Div:
      return BinaryMap(d, t, cs, row, w, [](VF y, VF x) { return hn::Div(y, x); });
    case PostOpKind::Max:
      return BinaryMap(d, t, cs, row, w, [](VF y, VF x) { return vm::MaxNaN(y, x); });
    case PostOpKind::Min:
      return BinaryMap(d, t, cs, row, w, [](VF y, VF x) { return vm::MinNaN(y, x); });
    default:
      for (int64_t c = 0; c < w; ++c) row[c] = apply_binary_post_op(kind, row[c], t[c * cs]);
  }
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

// y[r][v] = f(y[r][v], t(i + r, j + v * N ..)) over an H x NV-vector tile.
template <int H, int NV, class F>
HWY_INLINE void BinaryTile(DF d, const EpilogueOperand& t, int64_t i, int64_t j, VF (&y)[H][NV],
                           F f) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  for (int r = 0; r < H; ++r) {
    const float* row = t.p + (i + r) * t.rs + j * t.cs;
    if (t.cs == 0) {
      const VF tv = hn::Set(d, *row);
      for (int v = 0; v < NV; ++v) y[r][v] = f(y[r][v], tv);
    } else {
      for (int v = 0; v < NV; ++v) y[r][v] = f(y[r][v], hn::LoadU(d, row + v * N));
    }
  }
}

// Applies `e` to the H x NV-vector tile y holding the elements (i + r, j .. j + NV * N), all
// inside the output, when EpilogueInRegisters(e). Every value equals EpilogueRow's, so a tile's
// result does not depend on which of the two finished it (Clip: a NaN stays NaN, as
// activations.h's min(max(y, alpha), beta) has it with scalar_ops' Max and Min).
template <int H, int NV>
HWY_INLINE void EpilogueTile(const Epilogue& e, int64_t i, int64_t j, VF (&y)[H][NV]) {
  const DF d;
  if (e.row_bias) {
    for (int r = 0; r < H; ++r) {
      const VF b = hn::Set(d, e.row_bias[(i + r) * e.row_bias_stride]);
      for (int v = 0; v < NV; ++v) y[r][v] = hn::Add(y[r][v], b);
    }
  }
  const VF zero = hn::Zero(d);
  for (size_t k = 0; k < e.op_count; ++k) {
    const PostOp& p = e.ops[k];
    const VF alpha = hn::Set(d, p.alpha), beta = hn::Set(d, p.beta);
    switch (p.kind) {
      case PostOpKind::Relu:
        for (int r = 0; r < H; ++r)
          for (int v = 0; v < NV; ++v) y[r][v] = hn::IfThenZeroElse(hn::Lt(y[r][v], zero), y[r][v]);
        break;
      case PostOpKind::LeakyRelu:
        for (int r = 0; r < H; ++r)
          for (int v = 0; v < NV; ++v)
            y[r][v] = hn::IfThenElse(hn::Ge(y[r][v], zero), y[r][v], hn::Mul(alpha, y[r][v]));
        break;
      case PostOpKind::Linear:
        for (int r = 0; r < H; ++r)
          for (int v = 0; v < NV; ++v) y[r][v] = hn::MulAdd(alpha, y[r][v], beta);
        break;
      case PostOpKind::Clip:
        for (int r = 0; r < H; ++r)
          for (int v = 0; v < NV; ++v)
            y[r][v] =
                hn::IfThenElse(hn::IsNaN(y[r][v]), y[r][v], hn::Min(hn::Max(y[r][v], alpha), beta));
        break;
      case PostOpKind::Add:
        BinaryTile(d, e.operands[k], i, j, y, [](VF a, VF b) { return hn::Add(a, b); });
        break;
      case PostOpKind::Sub:
        BinaryTile(d, e.operands[k], i, j, y, [](VF a, VF b) { return hn::Sub(a, b); });
        break;
      case PostOpKind::Mul:
        BinaryTile(d, e.operands[k], i, j, y, [](VF a, VF b) { return hn::Mul(a, b); });
        break;
      default:  // excluded by EpilogueInRegisters
        break;
    }
  }
}

}  // namespace epi
}  // namespace HWY_NAMESPACE
}  // namespace ferrite
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
