#include "compiler/plan/externs/matmul_nbits_call.h"

#include "compiler/plan/error.h"
#include "compiler/plan/plan.h"

namespace ferrite {

ExternAttrs encode(const MatMulNBitsCall& c) {
  ExternAttrs a;
  a.ints["bits"] = c.bits;
  a.ints["block_size"] = c.block_size;
  return a;
}

MatMulNBitsCall decode_matmul_nbits_call(const ExternCall& call) {
  const char* op = "MatMulNBits";
  if (call.op != ExternOp::MatMulNBits)
    fail("extern '", extern_op_name(call.op), "' is not a MatMulNBits");
  MatMulNBitsCall c;
  c.bits = decode_int(call, "bits", 0);
  c.block_size = decode_int(call, "block_size", 0);
  if (c.bits != 2 && c.bits != 4 && c.bits != 8) fail(op, ": bits must be 2, 4 or 8, got ", c.bits);
  if (c.block_size < 16 || c.block_size > (int64_t{1} << 16) ||
      (c.block_size & (c.block_size - 1)) != 0)
    fail(op, ": block_size must be a power of 2 in [16, 65536], got ", c.block_size);
  return c;
}

}  // namespace ferrite
