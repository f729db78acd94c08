// A protobuf message as a tree of fields, for the ONNX mutator: decoded with the project's
// own wire reader (compiler/frontend/onnx/wire_reader.h), edited in place, and written back
// with the small wire writer here (there is no libprotobuf). Which length-delimited fields
// are nested messages comes from a schema (onnx_schema.h); a field the schema does not know,
// or whose bytes do not parse as the message it should be, is kept as bytes, so that any
// input round-trips and a mutant can be as malformed as the mutation made it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/frontend/onnx/wire_reader.h"
#include "tests/fuzz/onnx_schema.h"

namespace ferrite::fuzz {

using onnx::WireType;
struct ProtoMessage;

struct ProtoField {
  uint32_t number = 0;
  WireType wire = WireType::Varint;
  uint64_t scalar = 0;                    // a varint's value, or fixed32/fixed64 bits
  std::string bytes;                      // a length-delimited payload that is no message
  std::unique_ptr<ProtoMessage> message;  // a length-delimited payload decoded per the schema

  ProtoField() = default;
  ProtoField(const ProtoField& other);
  ProtoField& operator=(const ProtoField& other);
  ProtoField(ProtoField&&) = default;
  ProtoField& operator=(ProtoField&&) = default;

  static ProtoField varint(uint32_t number, uint64_t v);
  static ProtoField len(uint32_t number, std::string payload);
  static ProtoField nested(uint32_t number, ProtoMessage m);
};

struct ProtoMessage {
  Msg type = Msg::None;
  std::vector<ProtoField> fields;

  ProtoField* first(uint32_t number);
  std::vector<ProtoField*> all(uint32_t number);
  size_t count(uint32_t number) const;
  // The string value of the first field `number`, "" when absent.
  std::string string_of(uint32_t number) const;
  void remove_all(uint32_t number);
  void set_varint(uint32_t number, uint64_t v);  // replaces every field `number`
  void set_string(uint32_t number, const std::string& s);
};

// Decodes `data` as message `type`. False when the bytes are not a protobuf message at all
// (a nested field that fails to decode is kept as bytes instead).
bool parse_proto(const uint8_t* data, size_t size, Msg type, ProtoMessage* out);
std::string serialize_proto(const ProtoMessage& m);

// Packed (or single) repeated varints and fixed32 floats, as ONNX writes ints, dims and
// floats; decoding stops quietly at malformed bytes.
std::vector<int64_t> decode_varints(const std::string& packed);
std::string encode_varints(const std::vector<int64_t>& values);
std::vector<float> decode_floats(const std::string& packed);
std::string encode_floats(const std::vector<float>& values);

// Every repeated int64 field `number` of m (packed or not) as one list, and back as one
// packed field in place of the first.
std::vector<int64_t> get_ints(ProtoMessage& m, uint32_t number);
void set_ints(ProtoMessage& m, uint32_t number, const std::vector<int64_t>& values);

}  // namespace ferrite::fuzz
