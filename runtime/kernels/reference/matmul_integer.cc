#include "runtime/kernels/reference/matmul_integer.h"

#include "compiler/plan/error.h"
#include "compiler/plan/externs/matmul_integer_call.h"
#include "runtime/kernels/reference/operand_checks.h"

namespace ferrite {
namespace {

constexpr const char* kOp = "MatMulInteger";

bool is_int8(DType t) {
  return t == DType::U8 || t == DType::I8;
}

void check_operand(const char* what, const TensorRef& r, const ExternBuffer& buf, size_t rank,
                   bool eight_bit) {
  if (eight_bit ? !is_int8(buf.dtype) : buf.dtype != DType::I32)
    fail(kOp, ": ", what, " must be ", eight_bit ? "uint8 or int8" : "int32", ", got ",
         dtype_name(buf.dtype));
  if (r.shape.size() != rank)
    fail(kOp, ": ", what, " has rank ", r.shape.size(), ", expected ", rank);
  check_view(kOp, what, r, buf);
}

}  // namespace

MatMulIntegerArgs parse_matmul_integer(const ExternCall& call, const ExternBuffer* inputs,
                                       const ExternBuffer* outputs) {
  const MatMulIntegerCall attrs = decode_matmul_integer_call(call);
  if (op_input_count(call) != 4 || call.outputs.size() != 1 || !call.post_ops.empty() ||
      !call.epilogue.empty())
    fail(kOp, ": expected 4 inputs, 1 output and no epilogue, got ", op_input_count(call), ", ",
         call.outputs.size(), (call.post_ops.empty() && call.epilogue.empty()) ? "" : " and one");
  const TensorRef &ra = call.inputs[0], &rb = call.inputs[1], &rc = call.outputs[0];
  const TensorRef &raz = call.inputs[2], &rbz = call.inputs[3];
  const size_t rank = ra.shape.size();
  if (rank < 2) fail(kOp, ": operands need rank >= 2, A has rank ", rank);
  check_operand("A", ra, inputs[0], rank, true);
  check_operand("B", rb, inputs[1], rank, true);
  check_operand("C", rc, outputs[0], rank, false);
  MatMulIntegerArgs g;
  MatMulArgs& s = g.shape;
  s.m = ra.shape[rank - 2];
  s.k = ra.shape[rank - 1];
  s.n = rb.shape[rank - 1];
  s.batch.assign(ra.shape.begin(), ra.shape.end() - 2);
  const std::vector<int64_t> b_batch(rb.shape.begin(), rb.shape.end() - 2);
  const std::vector<int64_t> c_batch(rc.shape.begin(), rc.shape.end() - 2);
  if (rb.shape[rank - 2] != s.k || rc.shape[rank - 2] != s.m || rc.shape[rank - 1] != s.n ||
      b_batch != s.batch || c_batch != s.batch)
    fail(kOp, ": shapes A", dims_text(ra.shape), " B", dims_text(rb.shape), " C",
         dims_text(rc.shape), " do not match [..., M, K] x [..., K, N] -> [..., M, N]");
  element_count(kOp, rc.shape);
  if (raz.shape != std::vector<int64_t>{1} || inputs[2].dtype != inputs[0].dtype)
    fail(kOp, ": AZ must be one value of A's type, got ", dtype_name(inputs[2].dtype),
         dims_text(raz.shape));
  if (rbz.shape != std::vector<int64_t>{s.n} || inputs[3].dtype != inputs[1].dtype)
    fail(kOp, ": BZ must be N = ", s.n, " values of B's type, got ", dtype_name(inputs[3].dtype),
         dims_text(rbz.shape));
  if ((inputs[0].dtype == DType::I8) != attrs.a_signed ||
      (inputs[1].dtype == DType::I8) != attrs.b_signed)
    fail(kOp, ": A and B are ", dtype_name(inputs[0].dtype), " and ", dtype_name(inputs[1].dtype),
         ", the call says ", attrs.a_signed ? "int8" : "uint8", " and ",
         attrs.b_signed ? "int8" : "uint8");
  check_view(kOp, "AZ", raz, inputs[2]);
  check_view(kOp, "BZ", rbz, inputs[3]);
  g.a = inputs[0].data;
  g.b = inputs[1].data;
  g.c = static_cast<int32_t*>(outputs[0].data);
  g.a_signed = inputs[0].dtype == DType::I8;
  g.b_signed = inputs[1].dtype == DType::I8;
  g.a_zero_point = int8_element(inputs[2], raz.offset);
  g.b_zero_points.resize(static_cast<size_t>(s.n));
  for (int64_t j = 0; j < s.n; ++j)
    g.b_zero_points[static_cast<size_t>(j)] =
        int8_element(inputs[3], rbz.offset + j * rbz.strides[0]);
  s.la = matmul_layout(ra);
  s.lb = matmul_layout(rb);
  s.lc = matmul_layout(rc);
  return g;
}

void reference_matmul_integer(const ExternCall& call, const ExternBuffer* inputs,
                              const ExternBuffer* outputs) {
  const MatMulIntegerArgs g = parse_matmul_integer(call, inputs, outputs);
  const MatMulArgs& s = g.shape;
  if (s.m == 0 || s.n == 0) return;
  const int64_t batches = s.batch_count();
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t oa, ob, oc;
    s.batch_offsets(bi, &oa, &ob, &oc);
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < s.n; ++j) {
        int64_t acc = 0;
        const int32_t bz = g.b_zero_points[static_cast<size_t>(j)];
        for (int64_t p = 0; p < s.k; ++p)
          acc += int64_t{g.a_at(oa + i * s.la.row_stride + p * s.la.col_stride) - g.a_zero_point} *
                 (g.b_at(ob + p * s.lb.row_stride + j * s.lb.col_stride) - bz);
        g.c[oc + i * s.lc.row_stride + j * s.lc.col_stride] =
            static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(acc)));
      }
    }
  }
}

}  // namespace ferrite
