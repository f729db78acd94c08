// Vectorized float32 loops of the portable backend, written once with Highway and compiled
// for every target the build enables (dynamic dispatch natively, WASM SIMD128 in the
// browser). Each function applies one value op to a block of lanes.
//
// Block convention: the element-wise functions process `n` rounded up to the vector
// width, so every array they touch must have room for round_up(n, 64) floats (the
// interpreter's block slots always do); lanes past `n` hold garbage and are ignored.
// reduce_f32 reads exactly `n` values.
//
// Accuracy against scalar_ops (the reference): arithmetic, compares, Min/Max (NaN
// propagating), Floor/Ceil/Round, Sqrt, Abs, Neg, Relu, Sign are exact; Exp/Log/Sin/Cos/
// Tanh/Sinh/Asin/... use hwy/contrib/math (1-4 ulp); Sigmoid and Cosh are built on Exp
// (~3 ulp); Erf is a rational approximation with max error 6.7 ulp, 4e-7 relative
// (documented at Erf).
// Lanes outside a function's fast range (NaN, inf, overflow, |x| > 39000 for Sin/Cos)
// are recomputed with scalar_ops, so special values match the reference exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/plan/ops.h"

namespace ferrite {
namespace simd {

// Width of the partial-result array reduce_f32 folds into (covers every vector size).
constexpr size_t kAccLanes = 64;

// Unary math with a float result (everything in op_is_unary_math except Not/IsNaN/IsInf).
// Returns whether a vector formula ran (the ops the manifest flags op_vec::P; the others
// run scalar_ops lane by lane).
bool unary_f32(Op op, const float* a, float* out, size_t n);
// IsNaN / IsInf: Bool lanes as int32 0/1.
void classify_f32(Op op, const float* a, int32_t* out, size_t n);
// Add Sub Mul Div Max Min Pow Mod FMod; returns as unary_f32 does.
bool binary_f32(Op op, const float* a, const float* b, float* out, size_t n);
// Eq Lt Le Gt Ge: Bool lanes as int32 0/1.
void compare_f32(Op op, const float* a, const float* b, int32_t* out, size_t n);
// out = cond != 0 ? a : b.
void where_f32(const int32_t* cond, const float* a, const float* b, float* out, size_t n);
// Sum/Prod/Max/Min of exactly n values folded into acc[kAccLanes] (lane-wise partials).
void reduce_f32(ReduceKind kind, const float* x, size_t n, float* acc);
// Combines the partials of reduce_f32 (unused entries hold the identity).
float reduce_f32_finish(ReduceKind kind, const float* acc);
// out = e^(x - shift) (element-wise, as unary_f32's Exp); returns the sum of out[0, n)
// (an online softmax's step: the attention kernel's).
float exp_shifted_sum_f32(const float* x, float shift, float* out, size_t n);
// Whether any of x[0, n) is an infinity or NaN.
bool any_nonfinite_f32(const float* x, size_t n);
// The partials reduce_f32 writes (one vector of the dispatched target); past them, acc keeps
// what it held.
size_t acc_lanes_used();
// The Highway target the dispatcher picked (for benchmarks and reports).
const char* target_name();
// FERRITE_ISA=avx2 in the environment keeps dispatch at AVX2 or below, as on a CPU without
// AVX-512 (with ONEDNN_MAX_CPU_ISA=AVX2 and the JIT's AVX2 code, a whole AVX2 server):
// the Highway targets that disables (0 without it). Every portable backend applies it,
// once per process.
int64_t isa_disabled_targets();
void apply_isa_from_environment();

// Test hooks: the targets this build compiled that this CPU can run, and pinning dispatch
// (of every portable loop, GEMM included) to one of them; "" restores the best.
std::vector<std::string> available_targets();
void pin_target(const std::string& name);

}  // namespace simd
}  // namespace ferrite
