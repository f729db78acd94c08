#include "runtime/kernels/reference/bitcast.h"

#include <cstring>
#include <vector>

#include "compiler/plan/error.h"
#include "compiler/plan/externs/bitcast_call.h"
#include "runtime/kernels/reference/operand_checks.h"

namespace ferrite {

void reference_bitcast(const ExternCall& call, const ExternBuffer* inputs,
                       const ExternBuffer* outputs) {
  const char* op = "BitCast";
  decode_bitcast_call(call);
  if (op_input_count(call) != 1 || call.outputs.size() != 1 || !call.post_ops.empty() ||
      !call.epilogue.empty())
    fail(op, ": expected 1 input, 1 output and no epilogue, got ", op_input_count(call), " and ",
         call.outputs.size());
  const TensorRef &rx = call.inputs[0], &ry = call.outputs[0];
  const size_t size = dtype_size(inputs[0].dtype);
  if (size == 0 || size != dtype_size(outputs[0].dtype) || inputs[0].dtype == DType::String ||
      outputs[0].dtype == DType::String)
    fail(op, ": ", dtype_name(inputs[0].dtype), " and ", dtype_name(outputs[0].dtype),
         " are not two types of one size");
  if (rx.shape != ry.shape)
    fail(op, ": X", dims_text(rx.shape), " and Y", dims_text(ry.shape), " differ in shape");
  check_view(op, "X", rx, inputs[0]);
  check_view(op, "Y", ry, outputs[0]);
  const int64_t count = element_count(op, rx.shape);
  const size_t rank = rx.shape.size();
  const auto* x = static_cast<const uint8_t*>(inputs[0].data);
  auto* y = static_cast<uint8_t*>(outputs[0].data);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t ox = rx.offset, oy = ry.offset;
    for (size_t d = 0; d < rank; ++d) {
      ox += idx[d] * rx.strides[d];
      oy += idx[d] * ry.strides[d];
    }
    std::memcpy(y + oy * static_cast<int64_t>(size), x + ox * static_cast<int64_t>(size), size);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < rx.shape[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace ferrite
