// A bounded reader for the protobuf wire format, enough for ONNX's messages. Every read is
// checked against the bytes left in the current message; lengths are checked before any
// use, so hostile input gives ferrite::Error ("onnx: truncated ... at offset N (GraphProto)")
// and never an out-of-bounds read or an allocation larger than the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ferrite::onnx {

enum class WireType : uint8_t {
  Varint = 0,
  I64 = 1,
  Len = 2,
  StartGroup = 3,
  EndGroup = 4,
  I32 = 5
};

// A view of bytes inside the buffer being parsed (which outlives the parse).
struct Bytes {
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::string str() const {
    return size ? std::string(reinterpret_cast<const char*>(data), size) : "";
  }
};

class WireReader {
 public:
  // `message` names the message type for errors; `origin` is the start of the whole buffer,
  // so offsets in errors are absolute.
  WireReader(const uint8_t* data, size_t size, const char* message,
             const uint8_t* origin = nullptr);

  // A reader over a nested message's bytes (from bytes()).
  WireReader nested(Bytes b, const char* message) const;

  // Reads the next field key; false at the end of the message.
  bool next();
  uint32_t field() const { return field_; }
  WireType wire_type() const { return wire_type_; }
  const char* message() const { return message_; }

  // Scalar reads of the current field; each checks the wire type.
  uint64_t read_varint();
  int64_t read_int64() { return static_cast<int64_t>(read_varint()); }
  int32_t read_int32() { return static_cast<int32_t>(static_cast<uint32_t>(read_varint())); }
  float read_float();
  double read_double();
  Bytes read_bytes();
  std::string read_string() { return read_bytes().str(); }

  // Repeated scalars, packed (one Len field) or not (one value per field); appended to out.
  void read_int64s(std::vector<int64_t>* out);
  void read_uint64s(std::vector<uint64_t>* out);
  void read_int32s(std::vector<int32_t>* out);
  void read_floats(std::vector<float>* out);
  void read_doubles(std::vector<double>* out);

  // Skips the current field by its wire type (groups are rejected).
  void skip();

  [[noreturn]] void fail_field(const std::string& what) const;

 private:
  uint64_t raw_varint(const char* what);
  const uint8_t* take(size_t n, const char* what);
  void expect(WireType wt) const;
  template <class T, class Read>
  void read_repeated(std::vector<T>* out, WireType scalar, Read read_one);

  const uint8_t* origin_;
  const uint8_t* pos_;
  const uint8_t* end_;
  const char* message_;
  uint32_t field_ = 0;
  WireType wire_type_ = WireType::Varint;
  size_t key_offset_ = 0;
};

}  // namespace ferrite::onnx
