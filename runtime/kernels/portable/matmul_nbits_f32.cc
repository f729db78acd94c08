#include "runtime/kernels/portable/matmul_nbits_f32.h"

#include <algorithm>
#include <cmath>

#include "runtime/kernels/portable/float_buffer.h"
#include "runtime/kernels/portable/gemm_f32.h"
#include "runtime/kernels/portable/parallel.h"
#include "runtime/kernels/reference/matmul_nbits.h"

namespace ferrite {
namespace {

// Columns per part of the direct kernel: 64 columns of K = 4096 at 4 bits are 128 KiB of
// codes; a part per thread and then some, so that uneven threads even out.
constexpr int64_t kColumnsPerPart = 64;

// Row `i` of A (batch offset oa) into `dst`, K permuted inside each block: the byte at i of a
// block holds codes k = c * i + j (j < c = 8 / bits), so A's float for phase j of byte i
// goes to j * blob + i. Zeros past K. The sum of each block into sums[blk]. Returns whether
// every value is finite.
bool permute_row(const MatMulNBitsArgs& g, int64_t oa, int64_t i, float* dst, float* sums) {
  const MatMulArgs& s = g.shape;
  const int64_t per_byte = 8 / g.bits;
  const float* row = g.a + oa + i * s.la.row_stride;
  bool finite = true;
  for (int64_t blk = 0; blk < g.blocks; ++blk) {
    float* out = dst + blk * g.block;
    float sum = 0;
    for (int64_t t = 0; t < g.block; ++t) {
      const int64_t k = blk * g.block + t;
      const float v = k < s.k ? row[k * s.la.col_stride] : 0.0f;
      out[(t % per_byte) * g.blob + t / per_byte] = v;
      sum += v;
    }
    sums[blk] = sum;
    finite = finite && std::isfinite(sum);
  }
  return finite;
}

// zs[n * blocks + blk] = scale * zero point of each block; returns whether every scale and
// zero point is finite (uint8 zero points are).
bool scaled_zero_points(const MatMulNBitsArgs& g, float* zs) {
  bool finite = true;
  for (int64_t n = 0; n < g.shape.n; ++n) {
    for (int64_t blk = 0; blk < g.blocks; ++blk) {
      const float s = g.scale(n, blk), z = g.zero_point(n, blk);
      finite = finite && std::isfinite(s) && std::isfinite(z);
      zs[n * g.blocks + blk] = s * z;
    }
  }
  return finite;
}

// log2 of the codes per byte of `bits` (2, 4 or 8).
int codes_per_byte_log2(int64_t bits) {
  return bits == 2 ? 2 : bits == 4 ? 1 : 0;
}

// W[k0, k0 + len) of column n, all in one block (its scale and zero point), as floats
// `stride` apart from dst.
void decode_run(const MatMulNBitsArgs& g, int64_t n, int64_t k0, int64_t len, float* dst,
                int64_t stride) {
  const int64_t blk = k0 / g.block, t0 = k0 - blk * g.block;
  const float z = g.zero_point(n, blk), s = g.scale(n, blk);
  const uint8_t* bytes = g.codes_of(n, blk);
  const int lg = codes_per_byte_log2(g.bits);
  const unsigned mask = (1u << g.bits) - 1, phase_mask = (1u << lg) - 1;
  for (int64_t t = t0; t < t0 + len; ++t) {
    const unsigned code =
        (bytes[t >> lg] >> ((static_cast<unsigned>(t) & phase_mask) * g.bits)) & mask;
    dst[(t - t0) * stride] = (static_cast<float>(code) - z) * s;
  }
}

// The GEMM's B packer: W[p0 : p0 + kc, j0 : j0 + nc] decoded into panels of nr columns.
void pack_w(const void* ctx, int64_t p0, int64_t kc, int64_t j0, int64_t nc, int64_t nr,
            float* dst) {
  const MatMulNBitsArgs& g = *static_cast<const MatMulNBitsArgs*>(ctx);
  const int64_t panels = (nc + nr - 1) / nr;
  for (int64_t q = 0; q < panels; ++q) {
    float* panel = dst + q * kc * nr;
    for (int64_t c = 0; c < nr; ++c) {
      if (q * nr + c >= nc) {
        for (int64_t p = 0; p < kc; ++p) panel[p * nr + c] = 0.0f;
        continue;
      }
      for (int64_t p = 0; p < kc;) {  // a block at a time: one scale and zero point
        const int64_t k = p0 + p;
        const int64_t len = std::min(kc - p, g.block - k % g.block);
        decode_run(g, j0 + q * nr + c, k, len, panel + p * nr + c, nr);
        p += len;
      }
    }
  }
}

class PortableMatMulNBits : public PreparedExtern {
 public:
  PortableMatMulNBits(const ExternCall& call, const std::vector<ExternBuffer>& constants,
                      int threads)
      : call_(call), threads_(std::max(threads, 1)) {
    // Constant scales and zero points are multiplied (and checked for non-finite values)
    // once, by the first run.
    tables_constant_ = is_constant_input(constants, 2) &&
                       (call.inputs.size() < 4 || is_constant_input(constants, 3));
  }

  void run(const ExternBuffer* inputs, const ExternBuffer* outputs) override {
    const MatMulNBitsArgs g = parse_matmul_nbits(call_, inputs, outputs);
    const MatMulArgs& s = g.shape;
    if (s.m == 0) return;
    const int64_t batches = s.batch_count();
    if (s.m <= kNBitsDirectRows && !(tables_constant_ && tables_checked_)) {
      tables_finite_ = scaled_zero_points(g, zs_.reserve(static_cast<size_t>(s.n * g.blocks)));
      tables_checked_ = true;
    }
    for (int64_t bi = 0; bi < batches; ++bi) {
      int64_t oa, ob, oc;
      s.batch_offsets(bi, &oa, &ob, &oc);
      if (s.m > kNBitsDirectRows || !tables_finite_ || !direct(g, oa, oc)) through_gemm(g, oa, oc);
    }
  }

 private:
  // The direct kernel; false (nothing written) when A holds a non-finite value.
  bool direct(const MatMulNBitsArgs& g, int64_t oa, int64_t oc) {
    const MatMulArgs& s = g.shape;
    const int64_t stride = g.blocks * g.block;
    float* a = rows_.reserve(static_cast<size_t>(s.m * stride));
    float* sums = sums_.reserve(static_cast<size_t>(s.m * g.blocks));
    bool finite = true;
    for (int64_t i = 0; i < s.m; ++i)
      finite = permute_row(g, oa, i, a + i * stride, sums + i * g.blocks) && finite;
    if (!finite) return false;
    const int64_t parts = (s.n + kColumnsPerPart - 1) / kColumnsPerPart;
    parallel_parts(threads_, parts, [&](int64_t part) {
      const int64_t n0 = part * kColumnsPerPart, n1 = std::min(s.n, n0 + kColumnsPerPart);
      for (int64_t i = 0; i < s.m; i += 4) {
        NBitsRowsTask t;
        t.g = &g;
        t.zs = zs_.data();
        t.a_rows = a + i * stride;
        t.a_stride = stride;
        t.a_sums = sums + i * g.blocks;
        t.rows = static_cast<int>(std::min<int64_t>(4, s.m - i));
        t.c = g.c + oc + i * s.lc.row_stride;
        t.c_rs = s.lc.row_stride;
        t.c_cs = s.lc.col_stride;
        nbits_dot_columns(t, n0, n1);
      }
    });
    return true;
  }

  void through_gemm(const MatMulNBitsArgs& g, int64_t oa, int64_t oc) {
    const MatMulArgs& s = g.shape;
    GemmF32 m;
    m.a = g.a + oa;
    m.a_rs = s.la.row_stride;
    m.a_cs = s.la.col_stride;
    m.b_packer = pack_w;
    m.b_ctx = &g;
    m.c = g.c + oc;
    m.c_rs = s.lc.row_stride;
    m.c_cs = s.lc.col_stride;
    m.m = s.m;
    m.n = s.n;
    m.k = s.k;
    gemm_f32(m, threads_, gemm_scratch_.reserve(gemm_f32_scratch_floats(m, threads_)));
  }

  const ExternCall& call_;
  int threads_;
  bool tables_constant_ = false;  // scales and zero points are plan constants
  bool tables_checked_ = false, tables_finite_ = false;
  FloatBuffer rows_;          // A's rows, permuted (direct)
  FloatBuffer sums_;          // their sums per block
  FloatBuffer zs_;            // scale times zero point per column and block
  FloatBuffer gemm_scratch_;  // the GEMM's packing blocks
};

}  // namespace

std::unique_ptr<PreparedExtern> prepare_portable_matmul_nbits(
    const ExternCall& call, const std::vector<ExternBuffer>& constants, int threads) {
  return std::make_unique<PortableMatMulNBits>(call, constants, threads);
}

}  // namespace ferrite
