// Element-level helpers the CLI needs on host tensors: reading any numeric element as a
// double, printing the first values, deterministic generated inputs, and the tolerance
// comparison used by the conformance runner. (Half-precision conversions come from
// compiler/plan/scalar_ops.h.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/tensor.h"

namespace ferrite {

// Element i of any numeric or bool tensor, as a double (int64 beyond 2^53 rounds).
double element_as_double(const Tensor& t, int64_t i);

// "float32[1,10]"
std::string format_type(DType dtype, const std::vector<int64_t>& shape);
// "[0.25, -1, 3]" with at most `max_count` elements, then ", ..." if there are more.
std::string format_values(const Tensor& t, int64_t max_count);

// A reproducible input: floats uniform in [-1,1), integers in [0,4), bools false, strings
// of up to 7 characters of "ab c". The
// generator is our own (splitmix64) so native and wasm builds produce the same values.
Tensor generated_input(DType dtype, const std::vector<int64_t>& shape, uint64_t seed);

// Empty when `actual` matches `expected`: same dtype and shape, floats within
// |a-e| <= atol + rtol*|e| (NaN matches NaN, infinities must be equal), integers and
// bools exact. Otherwise a one-line description of the first difference.
std::string compare_tensors(const Tensor& actual, const Tensor& expected, double rtol, double atol);

// The same checks, but floats are compared per tensor ("normwise"):
//   max_i |a_i - e_i| <= max_rel_err * max_i |e_i|
// where NaNs and infinities must sit at the same indices and are left out of the maxima.
// This is the criterion for whole models. A per-element relative error means nothing near
// zero: an output that should be ~0 (a logit, a LayerNorm output, a sum that cancels)
// carries the rounding error of the terms that produced it, which are far larger than the
// result, so its relative error can be anything while the output is as accurate as float32
// allows. Measured against the tensor's largest magnitude, the error is compared with the
// scale the computation actually worked at.
std::string compare_tensors_normwise(const Tensor& actual, const Tensor& expected,
                                     double max_rel_err);

}  // namespace ferrite
