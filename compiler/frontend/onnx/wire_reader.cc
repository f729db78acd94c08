#include "compiler/frontend/onnx/wire_reader.h"

#include <cstring>
#include <iterator>

#include "compiler/plan/error.h"

namespace ferrite::onnx {

namespace {

const char* wire_type_name(WireType wt) {
  static constexpr const char* kNames[] = {"varint",      "fixed64",   "length-delimited",
                                           "start-group", "end-group", "fixed32"};
  const size_t i = static_cast<size_t>(wt);  // enumerator order
  return i < std::size(kNames) ? kNames[i] : "?";
}

}  // namespace

WireReader::WireReader(const uint8_t* data, size_t size, const char* message, const uint8_t* origin)
    : origin_(origin ? origin : data), pos_(data), end_(data + size), message_(message) {}

WireReader WireReader::nested(Bytes b, const char* message) const {
  return WireReader(b.data, b.size, message, origin_);
}

void WireReader::fail_field(const std::string& what) const {
  if (field_ == 0) fail("onnx: ", what, " at offset ", key_offset_, " (", message_, ")");
  fail("onnx: ", what, " field ", field_, " at offset ", key_offset_, " (", message_, ")");
}

const uint8_t* WireReader::take(size_t n, const char* what) {
  if (n > static_cast<size_t>(end_ - pos_)) fail_field(std::string("truncated ") + what);
  const uint8_t* p = pos_;
  pos_ += n;
  return p;
}

uint64_t WireReader::raw_varint(const char* what) {
  uint64_t v = 0;
  for (int i = 0; i < 10; ++i) {
    if (pos_ == end_) fail_field(std::string("truncated ") + what);
    uint8_t b = *pos_++;
    v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) return v;
  }
  fail_field(std::string("over-long ") + what);
}

bool WireReader::next() {
  if (pos_ == end_) return false;
  key_offset_ = static_cast<size_t>(pos_ - origin_);
  field_ = 0;
  uint64_t key = raw_varint("field key");
  uint64_t wt = key & 7;
  uint64_t field = key >> 3;
  if (field == 0 || field > 0x1fffffff) {
    fail_field("invalid field number " + std::to_string(field) + " in field key");
  }
  field_ = static_cast<uint32_t>(field);
  if (wt == 3 || wt == 4 || wt > 5) {
    fail_field(std::string("unsupported wire type ") + std::to_string(wt) + " for");
  }
  wire_type_ = static_cast<WireType>(wt);
  return true;
}

void WireReader::expect(WireType wt) const {
  if (wire_type_ != wt) {
    fail_field(std::string("wire type ") + wire_type_name(wire_type_) + " (expected " +
               wire_type_name(wt) + ") for");
  }
}

uint64_t WireReader::read_varint() {
  expect(WireType::Varint);
  return raw_varint("varint");
}

float WireReader::read_float() {
  expect(WireType::I32);
  float f;
  std::memcpy(&f, take(4, "fixed32"), 4);
  return f;
}

double WireReader::read_double() {
  expect(WireType::I64);
  double d;
  std::memcpy(&d, take(8, "fixed64"), 8);
  return d;
}

Bytes WireReader::read_bytes() {
  expect(WireType::Len);
  uint64_t n = raw_varint("length of");
  // Compare in 64 bits before narrowing: a length of 2^60 must fail here, not wrap.
  if (n > static_cast<uint64_t>(end_ - pos_)) fail_field("truncated length-delimited");
  Bytes b;
  b.size = static_cast<size_t>(n);
  b.data = take(b.size, "length-delimited");
  return b;
}

void WireReader::skip() {
  switch (wire_type_) {
    case WireType::Varint:
      raw_varint("varint");
      return;
    case WireType::I64:
      take(8, "fixed64");
      return;
    case WireType::I32:
      take(4, "fixed32");
      return;
    case WireType::Len:
      read_bytes();
      return;
    default:
      fail_field("unsupported wire type for");
  }
}

template <class T, class Read>
void WireReader::read_repeated(std::vector<T>* out, WireType scalar, Read read_one) {
  if (wire_type_ != WireType::Len) {
    expect(scalar);
    out->push_back(read_one(*this));
    return;
  }
  // Packed: the values are read from a sub-reader over exactly the field's bytes, so the
  // vector grows only with values actually present.
  WireReader packed = nested(read_bytes(), message_);
  packed.field_ = field_;
  packed.key_offset_ = key_offset_;
  packed.wire_type_ = scalar;
  while (packed.pos_ != packed.end_) out->push_back(read_one(packed));
}

void WireReader::read_int64s(std::vector<int64_t>* out) {
  read_repeated(out, WireType::Varint, [](WireReader& r) { return r.read_int64(); });
}

void WireReader::read_uint64s(std::vector<uint64_t>* out) {
  read_repeated(out, WireType::Varint, [](WireReader& r) { return r.read_varint(); });
}

void WireReader::read_int32s(std::vector<int32_t>* out) {
  read_repeated(out, WireType::Varint, [](WireReader& r) { return r.read_int32(); });
}

void WireReader::read_floats(std::vector<float>* out) {
  read_repeated(out, WireType::I32, [](WireReader& r) { return r.read_float(); });
}

void WireReader::read_doubles(std::vector<double>* out) {
  read_repeated(out, WireType::I64, [](WireReader& r) { return r.read_double(); });
}

}  // namespace ferrite::onnx
