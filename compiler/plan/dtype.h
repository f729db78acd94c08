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
  // The small types, each held in one byte per element in memory (plans, buffers, host
  // tensors); ONNX files pack the 4- and 2-bit ones (dtype_bits), which the importer and
  // the tensor readers unpack. Float types compute as f32, the integers as i64.
  F8E4M3FN = 17,
  F8E4M3FNUZ = 18,
  F8E5M2 = 19,
  F8E5M2FNUZ = 20,
  U4 = 21,
  I4 = 22,
  F4E2M1 = 23,
  F8E8M0 = 24,
  U2 = 25,
  I2 = 26,
};

// Size in bytes of one element in memory; 0 for Undefined and String.
size_t dtype_size(DType t);
// Bits of one element as ONNX files pack it: 4 for U4, I4 and F4E2M1, 2 for U2 and I2,
// 8 * dtype_size otherwise.
int dtype_bits(DType t);
// The float types of 8 bits or fewer (float8, float4, e8m0): minifloat.h converts them.
bool dtype_is_minifloat(DType t);
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
