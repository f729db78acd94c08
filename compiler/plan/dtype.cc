#include "compiler/plan/dtype.h"

namespace ferrite {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::F32:
    case DType::I32:
    case DType::U32:
      return 4;
    case DType::U8:
    case DType::I8:
    case DType::Bool:
      return 1;
    case DType::U16:
    case DType::I16:
    case DType::F16:
    case DType::BF16:
      return 2;
    case DType::I64:
    case DType::U64:
    case DType::F64:
      return 8;
    case DType::Undefined:
    case DType::String:
      return 0;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Undefined:
      return "undefined";
    case DType::F32:
      return "float32";
    case DType::U8:
      return "uint8";
    case DType::I8:
      return "int8";
    case DType::U16:
      return "uint16";
    case DType::I16:
      return "int16";
    case DType::I32:
      return "int32";
    case DType::I64:
      return "int64";
    case DType::String:
      return "string";
    case DType::Bool:
      return "bool";
    case DType::F16:
      return "float16";
    case DType::F64:
      return "float64";
    case DType::U32:
      return "uint32";
    case DType::U64:
      return "uint64";
    case DType::BF16:
      return "bfloat16";
  }
  return "?";
}

bool dtype_from_onnx(int64_t v, DType* out) {
  switch (v) {
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 6:
    case 7:
    case 8:
    case 9:
    case 10:
    case 11:
    case 12:
    case 13:
    case 16:
      *out = static_cast<DType>(v);
      return true;
    default:
      return false;
  }
}

bool dtype_is_float(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16;
}

const char* scalar_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::F32:
      return "f32";
    case ScalarType::F64:
      return "f64";
    case ScalarType::I64:
      return "i64";
    case ScalarType::Bool:
      return "bool";
  }
  return "?";
}

ScalarType compute_type(DType t) {
  switch (t) {
    case DType::F32:
    case DType::F16:
    case DType::BF16:
      return ScalarType::F32;
    case DType::F64:
      return ScalarType::F64;
    case DType::Bool:
      return ScalarType::Bool;
    default:
      return ScalarType::I64;
  }
}

DType storage_type(ScalarType t) {
  switch (t) {
    case ScalarType::F32:
      return DType::F32;
    case ScalarType::F64:
      return DType::F64;
    case ScalarType::I64:
      return DType::I64;
    case ScalarType::Bool:
      return DType::Bool;
  }
  return DType::Undefined;
}

}  // namespace ferrite
