#include "runtime/kernels/reference/matmul_nbits.h"

#include "compiler/plan/error.h"
#include "compiler/plan/externs/matmul_nbits_call.h"
#include "runtime/kernels/reference/operand_checks.h"

namespace ferrite {
namespace {

constexpr const char* kOp = "MatMulNBits";

// A row-major [rows, cols] view of `dtype` inside its buffer (a dim of size 1 may have any
// stride).
void check_table(const char* what, const TensorRef& r, const ExternBuffer& buf, DType dtype,
                 int64_t rows, int64_t cols) {
  if (buf.dtype != dtype)
    fail(kOp, ": ", what, " must be ", dtype_name(dtype), ", got ", dtype_name(buf.dtype));
  if (r.shape != std::vector<int64_t>{rows, cols} || r.strides.size() != 2 ||
      (rows > 1 && r.strides[0] != cols) || (cols > 1 && r.strides[1] != 1))
    fail(kOp, ": ", what, " must be a row-major [", rows, ", ", cols, "], got shape ",
         dims_text(r.shape), " strides ", dims_text(r.strides));
  check_view(kOp, what, r, buf);
}

}  // namespace

MatMulNBitsArgs parse_matmul_nbits(const ExternCall& call, const ExternBuffer* inputs,
                                   const ExternBuffer* outputs) {
  const MatMulNBitsCall attrs = decode_matmul_nbits_call(call);
  const size_t n_in = op_input_count(call);
  if ((n_in != 3 && n_in != 4) || call.outputs.size() != 1 || !call.post_ops.empty() ||
      !call.epilogue.empty())
    fail(kOp, ": expected 3 or 4 inputs, 1 output and no epilogue, got ", n_in, ", ",
         call.outputs.size(), (call.post_ops.empty() && call.epilogue.empty()) ? "" : " and one");
  const TensorRef &ra = call.inputs[0], &rc = call.outputs[0];
  const size_t rank = ra.shape.size();
  if (rank < 2) fail(kOp, ": A needs rank >= 2, got rank ", rank);
  check_f32_view(kOp, "A", ra, inputs[0], rank);
  check_f32_view(kOp, "C", rc, outputs[0], rank);
  MatMulNBitsArgs g;
  MatMulArgs& s = g.shape;
  s.m = ra.shape[rank - 2];
  s.k = ra.shape[rank - 1];
  s.n = rc.shape[rank - 1];
  s.batch.assign(ra.shape.begin(), ra.shape.end() - 2);
  const std::vector<int64_t> c_batch(rc.shape.begin(), rc.shape.end() - 2);
  if (rc.shape[rank - 2] != s.m || c_batch != s.batch)
    fail(kOp, ": C", dims_text(rc.shape), " does not match A", dims_text(ra.shape),
         " as [..., M, N] for [..., M, K]");
  element_count(kOp, ra.shape);
  element_count(kOp, rc.shape);
  if (s.k < 1 || s.n < 1) fail(kOp, ": K and N must be positive, got ", s.k, " and ", s.n);
  g.bits = attrs.bits;
  g.block = attrs.block_size;
  g.blob = attrs.blob_bytes();
  g.blocks = (s.k - 1) / g.block + 1;
  int64_t row_bytes = 0;
  if (__builtin_mul_overflow(g.blocks, g.blob, &row_bytes))
    fail(kOp, ": K = ", s.k, " is too large");
  check_table("B", call.inputs[1], inputs[1], DType::U8, s.n, row_bytes);
  check_table("S", call.inputs[2], inputs[2], DType::F32, s.n, g.blocks);
  if (n_in == 4) {
    const DType zt = inputs[3].dtype == DType::F32 ? DType::F32 : DType::U8;
    check_table("Z", call.inputs[3], inputs[3], zt, s.n, g.blocks);
    if (zt == DType::F32)
      g.zp_floats = static_cast<const float*>(inputs[3].data) + call.inputs[3].offset;
    else
      g.zp_codes = static_cast<const uint8_t*>(inputs[3].data) + call.inputs[3].offset;
  }
  g.a = static_cast<const float*>(inputs[0].data);
  g.c = static_cast<float*>(outputs[0].data);
  g.codes = static_cast<const uint8_t*>(inputs[1].data) + call.inputs[1].offset;
  g.scales = static_cast<const float*>(inputs[2].data) + call.inputs[2].offset;
  s.la = matmul_layout(ra);
  s.lc = matmul_layout(rc);
  s.lb.batch_strides.assign(s.batch.size(), 0);
  return g;
}

void reference_matmul_nbits(const ExternCall& call, const ExternBuffer* inputs,
                            const ExternBuffer* outputs) {
  const MatMulNBitsArgs g = parse_matmul_nbits(call, inputs, outputs);
  const MatMulArgs& s = g.shape;
  if (s.m == 0) return;
  const int64_t batches = s.batch_count();
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t oa, ob, oc;
    s.batch_offsets(bi, &oa, &ob, &oc);
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < s.n; ++j) {
        float acc = 0;
        for (int64_t p = 0; p < s.k; ++p) {
          const float w = (static_cast<float>(g.code(j, p)) - g.zero_point(j, p / g.block)) *
                          g.scale(j, p / g.block);
          acc += g.a[oa + i * s.la.row_stride + p * s.la.col_stride] * w;
        }
        g.c[oc + i * s.lc.row_stride + j * s.lc.col_stride] = acc;
      }
    }
  }
}

}  // namespace ferrite
