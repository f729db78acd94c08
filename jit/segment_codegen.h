// The JIT's row loop for the SegmentReduce extern (contract:
// runtime/kernels/reference/segment_reduce.h; driver, CSR sort and epilogue:
// runtime/kernels/portable/segment_reduce_f32.h): machine code specialized for one call's
// feature count, weighting, data operand and reduction. Each output row keeps its
// accumulators in zmm registers (up to 24 vectors of features per pass over its edges, the
// last one k-masked), and per edge the source row is read once: vmulps by the edge weight,
// then vaddps (or max / min with scalar_ops' NaN and tie rules), in edge order, so a row's
// value does not depend on which thread computes it. AVX-512 only: on AVX2 the jit backend
// keeps the portable (Highway) row loop.
#pragma once

#include <cstdint>
#include <memory>

#include "compiler/plan/ops.h"
#include "runtime/kernels/portable/segment_reduce_f32.h"

namespace ferrite {
namespace jit {

struct SegmentShape {
  int64_t features = 0;
  bool weighted = false;
  bool with_data = false;  // start from data's row, else from zeros
  ReduceKind kind = ReduceKind::Sum;
};

class SegmentCode {
 public:
  virtual ~SegmentCode() = default;
  // Rows [r0, r1) of j, which must have `shape`.
  virtual void run(const portable::SegmentRows& j, int64_t r0, int64_t r1) const = 0;
  virtual size_t size() const = 0;
};

// Generates and seals (W^X) the row loop. Throws ferrite::Error if generation fails.
std::unique_ptr<SegmentCode> generate_segment_rows(const SegmentShape& shape);

}  // namespace jit
}  // namespace ferrite
