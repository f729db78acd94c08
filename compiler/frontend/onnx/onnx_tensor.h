// TensorProto -> TensorData: raw_data, the typed repeated fields (int32_data also carries
// the bits of f16/bf16/bool/8- and 16-bit integers), and external data files. The element
// count from dims must match the data present, so nothing is allocated on a claim alone.
#pragma once

#include <string>

#include "compiler/frontend/onnx/onnx_proto.h"
#include "compiler/graph/graph.h"

namespace ferrite::onnx {

// `what` names the tensor in errors ("initializer 'W'"). `base_dir` is where external data
// files are looked up; "" forbids external data. A string tensor keeps its elements in
// TensorData::strings (from string_data only).
TensorData tensor_from_proto(const TensorProto& t, const std::string& base_dir,
                             const std::string& what);

// The element type of a value's declared type; UnsupportedError for types Ferrite lacks
// (complex, float8, ...). 0 (UNDEFINED) gives DType::Undefined.
DType value_dtype(int32_t onnx_type, const std::string& what);

}  // namespace ferrite::onnx
