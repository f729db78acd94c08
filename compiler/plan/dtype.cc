#include "compiler/plan/dtype.h"

#include <iterator>

namespace ferrite {

namespace {

// Each dtype's facts: its name (as errors and plans print it), its short name (kernel
// listings), its element size (0: none fixed) and the type a loaded element computes in.
struct DTypeInfo {
  DType dtype;
  const char* name;
  const char* short_name;
  size_t size;
  ScalarType compute;
};

constexpr ScalarType kF = ScalarType::F32, kI = ScalarType::I64;
constexpr DTypeInfo kDTypes[] = {
    {DType::Undefined, "undefined", "undefined", 0, kI},
    {DType::F32, "float32", "f32", 4, kF},
    {DType::U8, "uint8", "u8", 1, kI},
    {DType::I8, "int8", "i8", 1, kI},
    {DType::U16, "uint16", "u16", 2, kI},
    {DType::I16, "int16", "i16", 2, kI},
    {DType::I32, "int32", "i32", 4, kI},
    {DType::I64, "int64", "i64", 8, kI},
    {DType::String, "string", "string", 0, kI},
    {DType::Bool, "bool", "bool", 1, ScalarType::Bool},
    {DType::F16, "float16", "f16", 2, kF},
    {DType::F64, "float64", "f64", 8, ScalarType::F64},
    {DType::U32, "uint32", "u32", 4, kI},
    {DType::U64, "uint64", "u64", 8, kI},
    {DType::BF16, "bfloat16", "bf16", 2, kF},
    {DType::F8E4M3FN, "float8e4m3fn", "f8e4m3fn", 1, kF},
    {DType::F8E4M3FNUZ, "float8e4m3fnuz", "f8e4m3fnuz", 1, kF},
    {DType::F8E5M2, "float8e5m2", "f8e5m2", 1, kF},
    {DType::F8E5M2FNUZ, "float8e5m2fnuz", "f8e5m2fnuz", 1, kF},
    {DType::U4, "uint4", "u4", 1, kI},
    {DType::I4, "int4", "i4", 1, kI},
    {DType::F4E2M1, "float4e2m1", "f4e2m1", 1, kF},
    {DType::F8E8M0, "float8e8m0", "f8e8m0", 1, kF},
    {DType::U2, "uint2", "u2", 1, kI},
    {DType::I2, "int2", "i2", 1, kI},
};

const DTypeInfo* find_dtype(DType t) {
  for (const DTypeInfo& info : kDTypes)
    if (info.dtype == t) return &info;
  return nullptr;
}

}  // namespace

size_t dtype_size(DType t) {
  const DTypeInfo* info = find_dtype(t);
  return info ? info->size : 0;
}

int dtype_bits(DType t) {
  switch (t) {
    case DType::U4:
    case DType::I4:
    case DType::F4E2M1:
      return 4;
    case DType::U2:
    case DType::I2:
      return 2;
    default:
      return static_cast<int>(8 * dtype_size(t));
  }
}

bool dtype_is_minifloat(DType t) {
  switch (t) {
    case DType::F8E4M3FN:
    case DType::F8E4M3FNUZ:
    case DType::F8E5M2:
    case DType::F8E5M2FNUZ:
    case DType::F4E2M1:
    case DType::F8E8M0:
      return true;
    default:
      return false;
  }
}

const char* dtype_name(DType t) {
  const DTypeInfo* info = find_dtype(t);
  return info ? info->name : "?";
}

const char* dtype_short_name(DType t) {
  const DTypeInfo* info = find_dtype(t);
  return info ? info->short_name : "?";
}

bool dtype_from_onnx(int64_t v, DType* out) {  // the enumerators are ONNX's numbers
  for (const DTypeInfo& info : kDTypes) {
    if (info.dtype != DType::Undefined && static_cast<int64_t>(info.dtype) == v) {
      *out = info.dtype;
      return true;
    }
  }
  return false;
}

bool dtype_is_float(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16 ||
         dtype_is_minifloat(t);
}

const char* scalar_type_name(ScalarType t) {
  static constexpr const char* kNames[] = {"f32", "f64", "i64", "bool"};  // enumerator order
  const size_t i = static_cast<size_t>(t);
  return i < std::size(kNames) ? kNames[i] : "?";
}

ScalarType compute_type(DType t) {
  const DTypeInfo* info = find_dtype(t);
  return info ? info->compute : ScalarType::I64;
}

DType storage_type(ScalarType t) {
  static constexpr DType kStorage[] = {DType::F32, DType::F64, DType::I64, DType::Bool};
  const size_t i = static_cast<size_t>(t);
  return i < std::size(kStorage) ? kStorage[i] : DType::Undefined;
}

}  // namespace ferrite
