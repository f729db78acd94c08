// The attributes of the MatMulNBits extern (what it means:
// runtime/kernels/reference/matmul_nbits.h): a float32 product by weights stored as 2-, 4- or
// 8-bit codes in blocks along K, each block with its scale and zero point.
#pragma once

#include <cstdint>

#include "compiler/plan/externs/extern_op.h"

namespace ferrite {

struct MatMulNBitsCall {
  int64_t bits = 4;         // 2, 4 or 8: codes per byte 8 / bits, low bits first
  int64_t block_size = 32;  // codes per block along K: a power of 2, at least 16

  ExternOp op() const { return ExternOp::MatMulNBits; }
  int64_t codes_per_byte() const { return 8 / bits; }
  int64_t blob_bytes() const { return block_size / codes_per_byte(); }  // bytes per block
};

// ints "bits", "block_size".
ExternAttrs encode(const MatMulNBitsCall& c);
// Both are required and checked (bits 2, 4 or 8; block_size a power of 2 in [16, 2^16]).
// The op must be MatMulNBits.
MatMulNBitsCall decode_matmul_nbits_call(const ExternCall& call);

}  // namespace ferrite
