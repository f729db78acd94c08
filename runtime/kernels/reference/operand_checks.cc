#include "runtime/kernels/reference/operand_checks.h"

#include "compiler/plan/error.h"

namespace ferrite {

void check_bounds(const char* op, const char* what, const TensorRef& r, const ExternBuffer& buf) {
  int64_t lo = r.offset, hi = r.offset;
  for (int64_t d : r.shape)
    if (d == 0) return;  // reaches nothing
  for (size_t d = 0; d < r.shape.size(); ++d) {
    int64_t span = 0;
    bool ovf = __builtin_mul_overflow(r.shape[d] - 1, r.strides[d], &span);
    ovf = ovf || (span > 0 ? __builtin_add_overflow(hi, span, &hi)
                           : __builtin_add_overflow(lo, span, &lo));
    if (ovf) fail(op, ": ", what, " element offsets overflow");
  }
  if (lo < 0 || hi >= buf.elements)
    fail(op, ": ", what, " reaches elements [", lo, ", ", hi, "] outside its buffer of ",
         buf.elements, " elements");
}

void check_view(const char* op, const char* what, const TensorRef& r, const ExternBuffer& buf) {
  if (r.strides.size() != r.shape.size())
    fail(op, ": ", what, " has ", r.shape.size(), " dims but ", r.strides.size(), " strides");
  for (int64_t d : r.shape)
    if (d < 0) fail(op, ": ", what, " has a negative dimension in ", dims_text(r.shape));
  check_bounds(op, what, r, buf);
}

void check_f32_view(const char* op, const char* what, const TensorRef& r, const ExternBuffer& buf,
                    size_t rank) {
  if (buf.dtype != DType::F32) fail(op, ": dtype ", dtype_name(buf.dtype), " unsupported");
  if (r.shape.size() != rank || r.strides.size() != rank)
    fail(op, ": ", what, " has rank ", r.shape.size(), " (strides ", r.strides.size(),
         "), expected ", rank);
  check_view(op, what, r, buf);
}

int64_t element_count(const char* op, const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) fail(op, ": negative dimension in ", dims_text(shape));
    if (__builtin_mul_overflow(n, d, &n))
      fail(op, ": element count of ", dims_text(shape), " overflows");
  }
  return n;
}

}  // namespace ferrite
