#include "runtime/kernels/reference/matmul.h"

#include <string>

#include "compiler/plan/error.h"
#include "compiler/plan/externs/matmul_call.h"
#include "runtime/kernels/reference/operand_checks.h"
#include "runtime/kernels/reference/post_ops_apply.h"

namespace ferrite {
MatMulLayout matmul_layout(const TensorRef& r) {
  MatMulLayout l;
  const size_t rank = r.shape.size();
  l.offset = r.offset;
  l.batch_strides.assign(r.strides.begin(), r.strides.end() - 2);
  l.row_stride = r.strides[rank - 2];
  l.col_stride = r.strides[rank - 1];
  return l;
}

int64_t MatMulArgs::batch_count() const {
  int64_t n = 1;
  for (int64_t d : batch) n *= d;  // parse_matmul checked that this does not overflow
  return n;
}

void MatMulArgs::batch_offsets(int64_t i, int64_t* oa, int64_t* ob, int64_t* oc) const {
  *oa = la.offset;
  *ob = lb.offset;
  *oc = lc.offset;
  for (size_t d = batch.size(); d-- > 0;) {
    const int64_t idx = i % batch[d];
    i /= batch[d];
    *oa += idx * la.batch_strides[d];
    *ob += idx * lb.batch_strides[d];
    *oc += idx * lc.batch_strides[d];
  }
}

MatMulArgs parse_matmul(const ExternCall& call, const ExternBuffer* inputs,
                        const ExternBuffer* outputs) {
  if (op_input_count(call) != 2 || call.outputs.size() != 1)
    fail("MatMul: expected 2 inputs and 1 output, got ", op_input_count(call), " and ",
         call.outputs.size());
  const TensorRef &ra = call.inputs[0], &rb = call.inputs[1], &rc = call.outputs[0];
  const size_t rank = ra.shape.size();
  if (rank < 2) fail("MatMul: operands need rank >= 2, A has rank ", rank);
  check_f32_view("MatMul", "A", ra, inputs[0], rank);
  check_f32_view("MatMul", "B", rb, inputs[1], rank);
  check_f32_view("MatMul", "C", rc, outputs[0], rank);
  MatMulArgs m;
  m.m = ra.shape[rank - 2];
  m.k = ra.shape[rank - 1];
  m.n = rb.shape[rank - 1];
  m.batch.assign(ra.shape.begin(), ra.shape.end() - 2);
  const std::vector<int64_t> b_batch(rb.shape.begin(), rb.shape.end() - 2);
  const std::vector<int64_t> c_batch(rc.shape.begin(), rc.shape.end() - 2);
  if (rb.shape[rank - 2] != m.k || rc.shape[rank - 2] != m.m || rc.shape[rank - 1] != m.n ||
      b_batch != m.batch || c_batch != m.batch)
    fail("MatMul: shapes A", dims_text(ra.shape), " B", dims_text(rb.shape), " C",
         dims_text(rc.shape), " do not match [..., M, K] x [..., K, N] -> [..., M, N]");
  int64_t batches = 1;
  for (int64_t d : m.batch)
    if (__builtin_mul_overflow(batches, d, &batches)) fail("MatMul: batch count overflows");
  m.alpha = static_cast<float>(decode_matmul_call(call).alpha);
  m.a = static_cast<const float*>(inputs[0].data);
  m.b = static_cast<const float*>(inputs[1].data);
  m.c = static_cast<float*>(outputs[0].data);
  m.la = matmul_layout(ra);
  m.lb = matmul_layout(rb);
  m.lc = matmul_layout(rc);
  return m;
}

void reference_matmul(const ExternCall& call, const ExternBuffer* inputs,
                      const ExternBuffer* outputs) {
  const MatMulArgs g = parse_matmul(call, inputs, outputs);
  if (g.m == 0 || g.n == 0) return;
  const int64_t batches = g.batch_count();
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t oa, ob, oc;
    g.batch_offsets(bi, &oa, &ob, &oc);
    for (int64_t i = 0; i < g.m; ++i) {
      for (int64_t j = 0; j < g.n; ++j) {
        float acc = 0;
        for (int64_t p = 0; p < g.k; ++p)
          acc += g.a[oa + i * g.la.row_stride + p * g.la.col_stride] *
                 g.b[ob + p * g.lb.row_stride + j * g.lb.col_stride];
        g.c[oc + i * g.lc.row_stride + j * g.lc.col_stride] = g.alpha * acc;
      }
    }
  }
  apply_post_ops(call, inputs, outputs);
}

}  // namespace ferrite
