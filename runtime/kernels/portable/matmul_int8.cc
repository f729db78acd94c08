#include "runtime/kernels/portable/matmul_int8.h"

#include <algorithm>

#include "compiler/plan/error.h"
#include "runtime/kernels/portable/conv_int8_direct.h"
#include "runtime/kernels/portable/parallel.h"
#include "runtime/kernels/reference/matmul_integer.h"

namespace ferrite {
namespace {

// A's rows [batch offset oa] minus its zero point.
void pack_a(const MatMulIntegerArgs& g, int64_t oa, Int16Panel* p) {
  const MatMulArgs& s = g.shape;
  for (int64_t i = 0; i < s.m; ++i) {
    int16_t* dst = p->line(i);
    const int64_t row = oa + i * s.la.row_stride;
    for (int64_t k = 0; k < s.k; ++k)
      dst[k] = static_cast<int16_t>(g.a_at(row + k * s.la.col_stride) - g.a_zero_point);
    std::fill(dst + s.k, dst + int16_padded(s.k), int16_t{0});
  }
}

// B's columns [batch offset ob] minus their zero points, as a 1x1 convolution's weights
// (conv_int8_direct.h: blocks of kInt8ConvChannelBlock columns, pairs of rows interleaved).
void pack_b(const MatMulIntegerArgs& g, int64_t ob, int64_t pairs, std::vector<int16_t>* w) {
  const MatMulArgs& s = g.shape;
  const int64_t b = kInt8ConvChannelBlock;
  w->assign(static_cast<size_t>(2 * pairs * int8_conv_channels_padded(s.n)), int16_t{0});
  for (int64_t j = 0; j < s.n; ++j) {
    const int32_t z = g.b_zero_points[static_cast<size_t>(j)];
    const int64_t col = ob + j * s.lb.col_stride;
    int16_t* dst = w->data() + j / b * pairs * 2 * b + j % b * 2;
    for (int64_t k = 0; k < s.k; ++k)
      dst[k / 2 * 2 * b + k % 2] = static_cast<int16_t>(g.b_at(col + k * s.lb.row_stride) - z);
  }
}

// C's rows [r0, r1) of one batch item: the packed rows of A as points against B's columns.
void multiply_rows(const MatMulIntegerArgs& g, const Int16Panel& a, const std::vector<int16_t>& b,
                   int64_t oc, int64_t r0, int64_t r1) {
  const MatMulArgs& s = g.shape;
  const int64_t npad = int8_conv_channels_padded(s.n);
  std::vector<const int16_t*> rows(static_cast<size_t>(r1 - r0));
  for (int64_t i = r0; i < r1; ++i) rows[static_cast<size_t>(i - r0)] = a.line(i);
  std::vector<int32_t> sums(static_cast<size_t>((r1 - r0) * npad));
  int8_conv_points(rows.data(), r1 - r0, 1, (s.k + 1) / 2, b.data(), npad, sums.data());
  for (int64_t i = r0; i < r1; ++i) {
    const int32_t* row = sums.data() + (i - r0) * npad;
    int32_t* c = g.c + oc + i * s.lc.row_stride;
    for (int64_t j = 0; j < s.n; ++j) c[j * s.lc.col_stride] = row[j];
  }
}

class PortableMatMulInteger : public PreparedExtern {
 public:
  PortableMatMulInteger(const ExternCall& call, const std::vector<ExternBuffer>& constants,
                        int threads)
      : call_(call), threads_(std::max(threads, 1)) {
    // A constant B with constant zero points (fixed for the session's life) that every batch
    // item shares is packed by the first run, for all of them.
    const TensorRef& rb = call.inputs.size() > 1 ? call.inputs[1] : TensorRef{};
    b_constant_ = constants.size() > 3 && constants[1].data && constants[3].data;
    for (size_t d = 0; d + 2 < rb.shape.size(); ++d)
      if (rb.shape[d] > 1 && rb.strides[d] != 0) b_constant_ = false;
  }

  void run(const ExternBuffer* inputs, const ExternBuffer* outputs) override {
    const MatMulIntegerArgs g = parse_matmul_integer(call_, inputs, outputs);
    const MatMulArgs& s = g.shape;
    if (s.m == 0 || s.n == 0) return;
    const int64_t kp = int16_padded(s.k);
    const int64_t batches = s.batch_count();
    const int64_t row_blocks = (s.m + 3) / 4;
    // Row blocks per part: at least 4 parts per thread when there are that many.
    const int64_t per_part = std::max<int64_t>(1, row_blocks / std::max<int64_t>(1, 4 * threads_));
    const int64_t parts_per_item = (row_blocks + per_part - 1) / per_part;
    a_.resize(s.m, kp);
    int64_t packed_ob = -1;
    for (int64_t bi = 0; bi < batches; ++bi) {
      int64_t oa, ob, oc;
      s.batch_offsets(bi, &oa, &ob, &oc);
      pack_a(g, oa, &a_);
      if (!b_packed_ && ob != packed_ob) pack_b(g, ob, (s.k + 1) / 2, &b_);
      packed_ob = ob;
      parallel_parts(threads_, parts_per_item, [&](int64_t p) {
        const int64_t r0 = p * per_part * 4;
        multiply_rows(g, a_, b_, oc, r0, std::min(s.m, r0 + per_part * 4));
      });
    }
    b_packed_ = b_constant_;
  }

 private:
  const ExternCall& call_;
  int threads_;
  bool b_constant_ = false, b_packed_ = false;
  Int16Panel a_;
  std::vector<int16_t> b_;
};

}  // namespace

std::unique_ptr<PreparedExtern> prepare_portable_matmul_integer(
    const ExternCall& call, const std::vector<ExternBuffer>& constants, int threads) {
  return std::make_unique<PortableMatMulInteger>(call, constants, threads);
}

}  // namespace ferrite
