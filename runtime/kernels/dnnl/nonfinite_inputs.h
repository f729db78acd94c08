// oneDNN convolutions and matmuls next to an infinity or NaN in their input (X, A). Two of
// its ways part from the reference's there: the Winograd kernels' transforms mix a whole
// tile of inputs (6x6 for F(4x4, 3x3)), so one non-finite input makes every output of its
// tiles NaN through inf - inf, also those whose own window is finite; and its fused relu,
// clip, hardsigmoid, hardswish, max and min are max/min instructions, which turn a NaN into
// the bound (relu(NaN) = 0), where the reference keeps NaN. A run whose input holds a
// non-finite value therefore runs the primitive on a copy of it with those values zeroed
// (which gives every output whose sum has none of them), and sets the outputs whose sums
// hold them to what the exact sum is: NaN where a term is NaN (a NaN input, or an infinity
// times a zero weight) or where infinities of both signs meet, else the infinity of the
// terms' sign; then the bias or alpha and the post-ops as the reference applies them. That
// needs only the sign of each weight, kept at prepare time (two bits a weight), not the
// weights. The input is scanned before every run (one vectorized pass when it is dense).
// Finite inputs large enough for a sum to overflow are left to the primitive: such a sum
// overflows in any float32 GEMM, in its own order.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "compiler/plan/plan.h"
#include "runtime/backend.h"
#include "runtime/kernels/reference/conv.h"

namespace ferrite {
namespace onednn {

using RunSteps = std::function<void(const ExternBuffer*, const ExternBuffer*)>;

// Whether every weight of a convolution call (inputs[1] in `w`, checked inside it) is finite:
// one pass, vectorized when the view is dense.
bool finite_weights(const ExternCall& call, const ExternBuffer& w);

// Whether oneDNN computes one of the call's post-ops with max or min instructions.
bool flushes_nan(const ExternCall& call);

class NonFiniteInputs {
 public:
  virtual ~NonFiniteInputs() = default;
  // Runs the call: `steps` (the primitive) on the given inputs when inputs[0] is finite, as
  // described above when it is not; when a weight given at run time is not finite, the
  // reference implementation.
  void run(const ExternCall& call, const ExternBuffer* inputs, const ExternBuffer* outputs,
           const RunSteps& steps) const;

 protected:
  using Signs = std::vector<uint8_t>;  // 0, 1 (> 0) or 2 (< 0) per weight, four to a byte
  static bool add_sign(float v, int64_t i, Signs* out);             // false for a non-finite v
  static bool linear_signs(const float* w, int64_t n, Signs* out);  // of w[0, n)
  static int sign(const Signs& s, int64_t i) {
    return (s[static_cast<size_t>(i / 4)] >> (2 * (i % 4))) & 3;
  }
  // The part both share: inputs[0]'s view as one run of elements, when it is one.
  void prepare_scan(const TensorRef& input);
  // Checks the call's views against its buffers (throws ferrite::Error).
  virtual void check(const ExternCall& call, const ExternBuffer* inputs,
                     const ExternBuffer* outputs) const = 0;
  // The signs of the weights (inputs[1] at `w`), false when one is not finite.
  virtual bool signs_of(const ExternCall& call, const float* w, Signs* out) const = 0;
  // The outputs whose sums hold a non-finite input, as (offset in outputs[0], value), and
  // the offsets of those inputs in inputs[0].
  virtual void exact_outputs(const ExternCall& call, const Signs& signs, const ExternBuffer* inputs,
                             const ExternBuffer* outputs,
                             std::vector<std::pair<int64_t, float>>* values,
                             std::vector<int64_t>* nonfinite) const = 0;
  virtual void reference(const ExternCall& call, const ExternBuffer* inputs,
                         const ExternBuffer* outputs) const = 0;

  int64_t input_run_ = -1;  // inputs[0] as one run from its offset, or -1 (strided)
  bool dynamic_ = false;    // the weights come at run time
  Signs signs_;             // of the constant weights
};

// For a Conv (not ConvTranspose) whose W is the constant `w` (its signs are kept) or comes at
// run time (null). Null when the constant W holds an infinity or NaN (the exact sums would
// need more than signs), when the plan holds it only prepacked (no signs to take), or for a
// ConvTranspose: oneDNN's own handling stands then.
std::unique_ptr<NonFiniteInputs> conv_nonfinite_inputs(const ExternCall& call,
                                                       const ExternBuffer* w);
// The same for a MatMul and its B.
std::unique_ptr<NonFiniteInputs> matmul_nonfinite_inputs(const ExternCall& call,
                                                         const ExternBuffer* b);

// y = bias (when `has_bias`), then the post-ops (compiler/plan/post_ops.h), of the element of
// outputs[0] at `idx`, as the reference computes them from `v`.
float finish_element(const ExternCall& call, bool has_bias, const ExternBuffer* inputs,
                     const std::vector<int64_t>& idx, float v);

}  // namespace onednn
}  // namespace ferrite
