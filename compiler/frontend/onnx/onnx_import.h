// The ONNX frontend: parses ModelProto bytes (our own protobuf wire reader, no libprotobuf,
// so the same code runs in wasm) into a Graph. Handles initializers (raw_data and typed
// fields), external data files, Constant nodes, opset imports and symbolic dims. Models are
// checked as onnx.checker checks them (onnx_check.h): invalid ones give ferrite::Error.
// Malformed, truncated or hostile bytes give ferrite::Error, never a crash or an
// allocation larger than the input justifies.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "compiler/graph/graph.h"

namespace ferrite {

// `base_dir`: where external data files are looked up ("" forbids external data).
std::unique_ptr<Graph> import_onnx(const uint8_t* data, size_t size, const std::string& base_dir);
std::unique_ptr<Graph> import_onnx_file(const std::string& path);

// A serialized TensorProto (the ONNX test suite's input_N.pb / output_N.pb).
TensorData parse_tensor_proto(const uint8_t* data, size_t size, std::string* name = nullptr);

// A serialized SequenceProto of tensors, or OptionalProto of a tensor or such a sequence (the
// test suite's data for sequence and optional values): `kind` is what it holds (Optional:
// nothing), `tensors` its tensors, `elem` their element type where the message gives it.
struct ContainerData {
  enum class Kind { Optional, Tensor, Sequence } kind = Kind::Optional;
  std::vector<TensorData> tensors;
  DType elem = DType::Undefined;
};
ContainerData parse_sequence_proto(const uint8_t* data, size_t size);
ContainerData parse_optional_proto(const uint8_t* data, size_t size);

}  // namespace ferrite
