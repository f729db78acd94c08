// The portable "SegmentReduce" extern (contract: reference/segment_reduce.h) on float32:
// the edges are sorted by destination row once (a stable counting sort: CSR row pointers
// and, per position, the edge and its source row), and the sort is kept for as long as
// src and dst hold the same indices (compared element for element each run, O(E)). Each
// output row is then reduced by one thread from its edges in edge order, vectorized across
// the features: no atomics, and the same bits for any thread count. Rows are split
// between threads by edge count. The fused epilogue (post-ops) runs on a few rows at a
// time right after their reduction. Other dtypes and non-unit feature strides run the
// reference implementation.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/backend.h"

namespace ferrite {

std::unique_ptr<PreparedExtern> prepare_portable_segment_reduce(const ExternCall& call,
                                                                int threads);

namespace portable {
struct SegmentRows;
}

// The same extern with another implementation of the row loop (the JIT's): `rows` computes
// rows [r0, r1) of a float32 call as portable::segment_rows does (it may assume the call's
// feature count, weighting, data and reduction: they are fixed by the call).
// `implementation` names it in profiles.
using SegmentRowsFn = std::function<void(const portable::SegmentRows&, int64_t, int64_t)>;
std::unique_ptr<PreparedExtern> prepare_segment_reduce_with(const ExternCall& call, int threads,
                                                            SegmentRowsFn rows,
                                                            std::string implementation);

namespace portable {

// What one call of the per-target row loop needs: rows [r0, r1) of out.
struct SegmentRows {
  const float* x = nullptr;  // row i at x + i * x_rs, features contiguous
  int64_t x_rs = 0;
  const float* data = nullptr;  // null: start from zeros
  int64_t data_rs = 0;
  float* out = nullptr;
  int64_t out_rs = 0;
  const float* weight = nullptr;  // weight of edge e at weight[e * weight_stride]; or null
  int64_t weight_stride = 0;
  const int64_t* row_ptr = nullptr;  // CSR: row r's edges are positions [row_ptr[r], row_ptr[r+1])
  const int64_t* edge = nullptr;     // per position: the edge (index into weight)
  const int64_t* src = nullptr;      // per position: the source row of x
  int64_t features = 0;
  int kind = 0;  // ReduceKind: Sum, Max or Min
};

void segment_rows(const SegmentRows& job, int64_t r0, int64_t r1);

}  // namespace portable
}  // namespace ferrite
