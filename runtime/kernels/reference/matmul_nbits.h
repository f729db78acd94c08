// The MatMulNBits extern (com.microsoft MatMulNBits' product), defined by its reference
// implementation here:
//   C[..., M, N] = A[..., M, K] @ W,  W[k, n] = (code(n, k) - Z[n, k / bs]) * S[n, k / bs]
// inputs = {A, B, S} or {A, B, S, Z}, outputs = {C}; ints "bits" and "block_size" (bs), as
// matmul_nbits_call.h checks them. With blocks = ceil(K / bs) and blob = bs * bits / 8:
//   A  float32, rank r >= 2, any strides; its leading dims are the batch.
//   B  uint8 [N, blocks * blob], row-major: row n holds W's column n as codes, block after
//      block, 8 / bits codes per byte, low bits first; codes past K are ignored.
//   S  float32 [N, blocks], row-major.
//   Z  uint8 (one zero point per byte, any value) or float32, [N, blocks], row-major; without
//      it every zero point is 2^(bits - 1).
//   C  float32, rank r, [..., M, N] (A's batch dims), any strides; it must not overlap the
//      inputs. No post-ops.
// Each weight is (float(code) - float(z)) * s in float32, and the sums accumulate in float32
// (the reference in k order; a backend may sum in another order). The weights stay packed:
// the backends decode them as they multiply, never into a float copy of W.
#pragma once

#include <cstdint>

#include "runtime/backend.h"
#include "runtime/kernels/reference/matmul.h"

namespace ferrite {

struct MatMulNBitsArgs {
  MatMulArgs shape;  // m, k, n, batch, the layouts of A and C (lb all zeros; b unused)
  const float* a = nullptr;
  float* c = nullptr;
  const uint8_t* codes = nullptr;     // B at its offset
  const float* scales = nullptr;      // S at its offset
  const uint8_t* zp_codes = nullptr;  // Z at its offset when it is uint8
  const float* zp_floats = nullptr;   // ... when it is float32
  int64_t bits = 4, block = 32, blocks = 0, blob = 0;

  // Column n's block `blk` of codes (blob bytes), its scale and its zero point.
  const uint8_t* codes_of(int64_t n, int64_t blk) const {
    return codes + (n * blocks + blk) * blob;
  }
  float scale(int64_t n, int64_t blk) const { return scales[n * blocks + blk]; }
  float zero_point(int64_t n, int64_t blk) const {
    if (zp_floats) return zp_floats[n * blocks + blk];
    if (zp_codes) return static_cast<float>(zp_codes[n * blocks + blk]);
    return static_cast<float>(int64_t{1} << (bits - 1));
  }
  // The code of W[k, n].
  int64_t code(int64_t n, int64_t k) const {
    const int64_t per_byte = 8 / bits;
    const uint8_t byte = codes_of(n, k / block)[(k % block) / per_byte];
    return (byte >> ((k % per_byte) * bits)) & ((1 << bits) - 1);
  }
};

// Checks the call (operand count, dtypes, ranks, shapes, layouts, bounds against the
// buffers) and throws ferrite::Error "MatMulNBits: ..." on any problem.
MatMulNBitsArgs parse_matmul_nbits(const ExternCall& call, const ExternBuffer* inputs,
                                   const ExternBuffer* outputs);

// Each weight decoded as it is used, products summed in float32 in k order.
void reference_matmul_nbits(const ExternCall& call, const ExternBuffer* inputs,
                            const ExternBuffer* outputs);

}  // namespace ferrite
