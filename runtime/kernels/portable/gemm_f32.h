// The portable backend's float32 GEMM (Highway): C = epilogue(alpha * A @ B) for one matrix,
// any strides. Goto/BLIS structure: B is packed in KC x NC blocks of NR-wide panels, A in
// MC x KC blocks of MR-row panels, and an MR x NR register-tiled microkernel accumulates each
// tile over KC with fused multiply-adds (MR x NR per target: gemm_micro-inl.h). Packing is
// where the strides are absorbed, so transposed or broadcast operands cost one copy, not a
// slow loop. Around that core:
//   - weights packed once (gemm_f32_pack_a / _b, at prepare time) are used as they are; a B
//     packed for one-row products (GEMVs) has its panels interleaved along k in the groups
//     a single row runs at once, so that the whole of B is read as one stream;
//   - when B's rows have unit stride and A has few rows (GEMV-like; with AVX-512's wide
//     panels, any single block of A: convolutions with few output channels), B is read in
//     place instead of packed (copying it would cost about as much as using it);
//   - a B that exists only implicitly (a convolution's im2col matrix) is packed straight
//     from its source by a callback, without being materialized;
//   - the epilogue (epilogue.h) runs on each tile right after its last K block, while the
//     tile is in registers and L1;
//   - threads split C into blocks of whole tiles. Every element is computed by one thread
//     with the same operations in the same order whatever the split, so results do not
//     depend on the thread count.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/kernels/portable/epilogue.h"
#include "runtime/kernels/portable/float_buffer.h"

namespace ferrite {

// The blocking of the target the dispatcher picks (a packed operand is tied to it), the most
// rows of A for which a B with unit-stride rows is read in place rather than packed, and the
// panels a block of A with a single row runs at once.
struct GemmGeometry {
  int64_t mr = 0, nr = 0, kc = 0, mc = 0, nc = 0;
  int64_t in_place_b_max_m = 0;
  int64_t row_group = 0;
  bool operator==(const GemmGeometry& o) const {
    return mr == o.mr && nr == o.nr && kc == o.kc && mc == o.mc && nc == o.nc &&
           row_group == o.row_group;
  }
};
GemmGeometry gemm_f32_geometry();

// A whole operand packed for one geometry: per block of kc rows of K (from 0), the panels of
// the block in order — B: K x N as panels of nr columns (kc x nr each, zero-padded past N);
// A: M x K as panels of mr rows (kc x mr each, k-major, zero-padded past M). A B packed
// `row_grouped` holds each run of geometry.row_group whole panels as one panel of
// row_group * nr columns (kc rows of row_group * nr floats: the same floats, interleaved
// along k); the panels after the last whole group are as usual. One-row products read such
// a B front to back as a single stream (a hardware prefetcher follows one stream better
// than row_group of them: a 784x512 GEMV on a Zen 4 core read its weights from L3 at 92 GB/s
// as one stream, 78 as four); any product may use it.
struct PackedOperand {
  const float* data = nullptr;  // in `owned`, or in memory the caller gave
  FloatBuffer owned;
  GemmGeometry geometry;
  int64_t rows = 0, cols = 0;  // the logical matrix: K x N for B, M x K for A
  bool row_grouped = false;
};
// Floats of a packed A (m x k) or B (k x n) for the current geometry.
size_t gemm_f32_packed_a_floats(int64_t m, int64_t k);
size_t gemm_f32_packed_b_floats(int64_t k, int64_t n);
// Packs into `dst` (that many floats) or, when it is null, into out->owned.
void gemm_f32_pack_a(const float* a, int64_t a_rs, int64_t a_cs, int64_t m, int64_t k,
                     PackedOperand* out, float* dst = nullptr);
void gemm_f32_pack_b(const float* b, int64_t b_rs, int64_t b_cs, int64_t k, int64_t n,
                     PackedOperand* out, float* dst = nullptr, bool row_grouped = false);
// Whether `p` was packed for the current geometry with these dims (else it must be ignored).
bool gemm_f32_packed_usable(const PackedOperand* p, int64_t rows, int64_t cols);

// Packed operands as bytes a compiled plan carries (PackedInput), for `count` operands of one
// kind ('A' or 'B') and dims packed one after another: the layout names the SIMD target, the
// geometry, the dims, whether B is row-grouped and `what` (the caller's own transform of the
// weights, e.g. Winograd's); gemm_f32_adopt_packed fills `out` from `bytes` when they have
// that layout and size.
std::string gemm_f32_packed_layout(const std::string& what, char kind, int64_t rows, int64_t cols,
                                   size_t count, bool row_grouped = false);
bool gemm_f32_adopt_packed(const std::string& layout, const uint8_t* bytes, size_t size,
                           const std::string& what, char kind, int64_t rows, int64_t cols,
                           std::vector<PackedOperand>* out, bool row_grouped = false);
// `ops` (all packed alike, of `kind`) as one blob, as gemm_f32_adopt_packed reads it.
std::vector<uint8_t> gemm_f32_packed_bytes(const std::vector<PackedOperand>& ops, char kind);

// Packs B[p0 : p0 + kc, j0 : j0 + nc] of a B that exists only implicitly (a convolution's
// im2col matrix) as panels of nr columns, the layout of a packed B block: panel q at
// dst + q * kc * nr, kc rows of nr floats, zero-padded past nc.
using GemmPackB = void (*)(const void* ctx, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                           int64_t nr, float* dst);

struct GemmF32 {
  const float* a = nullptr;  // element (0, 0) of A
  int64_t a_rs = 0, a_cs = 0;
  const PackedOperand* a_packed = nullptr;  // used instead of `a` when usable
  const float* b = nullptr;
  int64_t b_rs = 0, b_cs = 0;
  const PackedOperand* b_packed = nullptr;
  GemmPackB b_packer = nullptr;  // when set, B is what it packs (b and b_packed unused)
  const void* b_ctx = nullptr;
  float* c = nullptr;
  int64_t c_rs = 0, c_cs = 0;
  int64_t m = 0, n = 0, k = 0;  // k > 0; every element the strides reach must exist
  float alpha = 1;
  const Epilogue* epilogue = nullptr;  // in C's coordinates; null or inactive: none
};

// Floats of scratch (per-thread packing blocks) gemm_f32(g, threads, ...) uses.
size_t gemm_f32_scratch_floats(const GemmF32& g, int threads);

// Computes C on up to `threads` threads; `scratch`: gemm_f32_scratch_floats(g, threads)
// floats, 64-byte aligned, or null (then allocated here).
void gemm_f32(const GemmF32& g, int threads = 1, float* scratch = nullptr);

}  // namespace ferrite
