// Element types of tensors and buffers, numbered as ONNX's TensorProto.DataType so the
// frontend and the plan serializer share one table. Kernels compute in a smaller set of
// scalar types (ScalarType): every integer width computes as i64, f16/bf16 as f32.
// This header is part of the runtime contract (the Plan), so it lives beside the Plan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ferrite {

enum class DType : uint8_t {
  Undefined = 0,
  F32 = 1,
  U8 = 2,
  I8 = 3,
  U16 = 4,
  I16 = 5,
  I32 = 6,
  I64 = 7,
  String = 8,
  Bool = 9,
  F16 = 10,
  F64 = 11,
  U32 = 12,
  U64 = 13,
  BF16 = 16,
};

// Size in bytes of one element; 0 for Undefined and String.
size_t dtype_size(DType t);
const char* dtype_name(DType t);
// "f32", "i64", ...: as kernel listings print it.
const char* dtype_short_name(DType t);
// Maps an ONNX TensorProto.DataType number; false for unknown or unsupported numbers.
bool dtype_from_onnx(int64_t onnx_type, DType* out);
bool dtype_is_float(DType t);

// The types a kernel computes in.
enum class ScalarType : uint8_t { F32 = 0, F64 = 1, I64 = 2, Bool = 3 };
const char* scalar_type_name(ScalarType t);
// The compute type a loaded element of storage type `t` becomes.
ScalarType compute_type(DType t);
// The storage type that represents a compute type exactly.
DType storage_type(ScalarType t);

}  // namespace ferrite
