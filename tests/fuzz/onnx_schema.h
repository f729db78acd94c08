// What the ONNX mutator knows of onnx.proto (IR version 10): the message types, which fields
// nest which messages, the field numbers it edits, and the vocabularies it draws from (op
// types of the default domain, attribute names and string values, element types).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ferrite::fuzz {

enum class Msg : uint8_t {
  None,
  Model,
  Graph,
  Node,
  Attribute,
  Tensor,
  SparseTensor,
  ValueInfo,
  Type,
  TypeTensor,
  TypeSequence,
  TypeMap,
  TypeOptional,
  Shape,
  Dim,
  OpsetId,
  Function,
  StringEntry,
};

// The message a length-delimited field of `parent` holds (Msg::None: bytes or a string).
Msg sub_message(Msg parent, uint32_t field);

// Field numbers the mutations use, per message.
namespace field {
// ModelProto
constexpr uint32_t kModelIrVersion = 1, kModelOpset = 8, kModelGraph = 7, kModelFunctions = 25;
// GraphProto
constexpr uint32_t kGraphNode = 1, kGraphName = 2, kGraphInitializer = 5, kGraphInput = 11,
                   kGraphOutput = 12, kGraphValueInfo = 13;
// NodeProto
constexpr uint32_t kNodeInput = 1, kNodeOutput = 2, kNodeName = 3, kNodeOpType = 4,
                   kNodeAttribute = 5, kNodeDomain = 7;
// AttributeProto
constexpr uint32_t kAttrName = 1, kAttrF = 2, kAttrI = 3, kAttrS = 4, kAttrT = 5, kAttrG = 6,
                   kAttrFloats = 7, kAttrInts = 8, kAttrStrings = 9, kAttrTensors = 10,
                   kAttrGraphs = 11, kAttrType = 20, kAttrRefName = 21;
// TensorProto
constexpr uint32_t kTensorDims = 1, kTensorDataType = 2, kTensorFloatData = 4, kTensorInt32Data = 5,
                   kTensorInt64Data = 7, kTensorName = 8, kTensorRawData = 9,
                   kTensorDoubleData = 10, kTensorDataLocation = 14;
// ValueInfoProto, TypeProto, TypeProto.Tensor, TensorShapeProto, its Dimension
constexpr uint32_t kValueInfoName = 1, kValueInfoType = 2;
constexpr uint32_t kTypeTensor = 1, kTypeSequence = 4, kTypeOptional = 9;
constexpr uint32_t kTypeTensorElem = 1, kTypeTensorShape = 2;
constexpr uint32_t kShapeDim = 1;
constexpr uint32_t kDimValue = 1, kDimParam = 2;
// OperatorSetIdProto
constexpr uint32_t kOpsetDomain = 1, kOpsetVersion = 2;
// FunctionProto
constexpr uint32_t kFunctionName = 1, kFunctionInput = 4, kFunctionOutput = 5,
                   kFunctionAttribute = 6, kFunctionNode = 7, kFunctionOpset = 9,
                   kFunctionDomain = 10;
}  // namespace field

// AttributeProto.AttributeType numbers.
enum AttrType : int {
  kFloat = 1,
  kInt = 2,
  kString = 3,
  kTensor = 4,
  kGraph = 5,
  kFloats = 6,
  kInts = 7,
  kStrings = 8
};

const std::vector<std::string>& onnx_op_types();
const std::vector<std::string>& onnx_attribute_names();
const std::vector<std::string>& onnx_attribute_strings();  // mode, auto_pad, direction, ...
// TensorProto.DataType numbers: every defined one, and a few that are not.
const std::vector<int64_t>& onnx_elem_types();

}  // namespace ferrite::fuzz
