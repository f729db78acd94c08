// The ONNX messages as plain structs, decoded from the wire format by onnx_proto.cc. Only
// the fields the importer uses are kept; the rest are skipped. Byte fields (raw_data) are
// views into the input buffer, so the buffer must outlive these structs. Field numbers
// follow onnx/onnx.proto (IR version 8).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "compiler/frontend/onnx/wire_reader.h"

namespace ferrite::onnx {

struct TensorProto {
  std::vector<int64_t> dims;
  int32_t data_type = 0;
  std::string name;
  bool has_raw_data = false;
  Bytes raw_data;
  std::vector<float> float_data;
  std::vector<int32_t> int32_data;
  std::vector<int64_t> int64_data;
  std::vector<double> double_data;
  std::vector<uint64_t> uint64_data;
  std::vector<std::string> string_data;
  bool has_segment = false;
  int32_t data_location = 0;  // 1: EXTERNAL
  std::vector<std::pair<std::string, std::string>> external_data;
};

// TypeProto, reduced to what a tensor value needs. Sequence/map/optional/sparse types keep
// only their kind (their nested types are skipped, not parsed).
struct TypeProto {
  enum class Kind { None, Tensor, Sequence, Map, Optional, SparseTensor };
  struct Dim {
    bool has_value = false;
    int64_t value = 0;
    std::string param;
  };
  Kind kind = Kind::None;
  // A sequence's or optional's element: kind (Tensor, or Sequence of tensors for an optional
  // sequence), and the tensors' elem_type and dims below. Deeper nesting reads as None.
  Kind elem_kind = Kind::None;
  int32_t elem_type = 0;
  bool has_shape = false;
  std::vector<Dim> dims;
};

struct ValueInfoProto {
  std::string name;
  TypeProto type;
};

struct GraphProto;

struct AttributeProto {
  // AttributeProto.AttributeType numbers.
  enum Type {
    kUndefined = 0,
    kFloat = 1,
    kInt = 2,
    kString = 3,
    kTensor = 4,
    kGraph = 5,
    kFloats = 6,
    kInts = 7,
    kStrings = 8,
    kTensors = 9,
    kGraphs = 10,
    kSparseTensor = 11,
    kSparseTensors = 12,
    kTypeProto = 13,
    kTypeProtos = 14
  };
  std::string name;
  std::string ref_attr_name;
  int32_t type = kUndefined;
  bool has_f = false, has_i = false, has_s = false;
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::unique_ptr<TensorProto> t;
  std::unique_ptr<GraphProto> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<TensorProto> tensors;
  std::vector<GraphProto> graphs;
  size_t sparse_count = 0;        // sparse_tensor / sparse_tensors present
  size_t type_proto_count = 0;    // tp / type_protos present
  std::unique_ptr<TypeProto> tp;  // the `tp` field, when present
};

struct NodeProto {
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::string name;
  std::string op_type;
  std::string domain;
  std::vector<AttributeProto> attributes;
};

struct GraphProto {
  std::string name;
  std::vector<NodeProto> nodes;
  std::vector<TensorProto> initializers;
  size_t sparse_initializer_count = 0;
  std::vector<ValueInfoProto> inputs;
  std::vector<ValueInfoProto> outputs;
  std::vector<ValueInfoProto> value_infos;
};

struct ModelProto {
  int64_t ir_version = 0;
  std::vector<std::pair<std::string, int64_t>> opset_imports;
  bool has_graph = false;
  GraphProto graph;
};

// Subgraphs nest through attributes; deeper models are rejected (bounds the recursion).
constexpr int kMaxGraphNesting = 64;

ModelProto parse_model(const uint8_t* data, size_t size);
TensorProto parse_tensor(WireReader r);

}  // namespace ferrite::onnx
