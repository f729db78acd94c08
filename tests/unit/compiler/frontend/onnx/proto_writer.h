// A tiny protobuf wire-format writer for tests: builds ONNX messages byte by byte, including
// malformed ones (hostile lengths, wrong wire types) that no real exporter would write.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ferrite::testing {

class Pb {
 public:
  static void put_varint(std::string* s, uint64_t v) {
    while (v >= 0x80) {
      s->push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    s->push_back(static_cast<char>(v));
  }
  Pb& key(uint32_t field, int wire_type) {
    put_varint(&s_, (static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type));
    return *this;
  }
  Pb& varint(uint32_t field, uint64_t v) {
    key(field, 0);
    put_varint(&s_, v);
    return *this;
  }
  Pb& i64(uint32_t field, int64_t v) { return varint(field, static_cast<uint64_t>(v)); }
  Pb& f32(uint32_t field, float f) {
    key(field, 5);
    char b[4];
    std::memcpy(b, &f, 4);
    s_.append(b, 4);
    return *this;
  }
  Pb& f64(uint32_t field, double d) {
    key(field, 1);
    char b[8];
    std::memcpy(b, &d, 8);
    s_.append(b, 8);
    return *this;
  }
  Pb& str(uint32_t field, const std::string& v) {
    key(field, 2);
    put_varint(&s_, v.size());
    s_ += v;
    return *this;
  }
  Pb& msg(uint32_t field, const Pb& m) { return str(field, m.s_); }
  Pb& packed_varints(uint32_t field, const std::vector<int64_t>& vs) {
    std::string body;
    for (int64_t v : vs) put_varint(&body, static_cast<uint64_t>(v));
    return str(field, body);
  }
  Pb& packed_floats(uint32_t field, const std::vector<float>& vs) {
    std::string body(vs.size() * 4, '\0');
    if (!vs.empty()) std::memcpy(&body[0], vs.data(), body.size());
    return str(field, body);
  }
  Pb& packed_doubles(uint32_t field, const std::vector<double>& vs) {
    std::string body(vs.size() * 8, '\0');
    if (!vs.empty()) std::memcpy(&body[0], vs.data(), body.size());
    return str(field, body);
  }
  Pb& raw_varint(uint64_t v) {
    put_varint(&s_, v);
    return *this;
  }
  Pb& raw(const std::string& bytes) {
    s_ += bytes;
    return *this;
  }
  const std::string& bytes() const { return s_; }
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(s_.data()); }
  size_t size() const { return s_.size(); }

 private:
  std::string s_;
};

// ONNX message helpers (field numbers from onnx.proto).
inline Pb tensor_type(int32_t elem, const std::vector<int64_t>& dims) {
  Pb shape;
  for (int64_t d : dims) {
    Pb dim;
    if (d >= 0) {
      dim.i64(1, d);
    } else {
      dim.str(2, "N");
    }
    shape.msg(1, dim);
  }
  return Pb().msg(1, Pb().i64(1, elem).msg(2, shape));
}

inline Pb value_info(const std::string& name, int32_t elem, const std::vector<int64_t>& dims) {
  return Pb().str(1, name).msg(2, tensor_type(elem, dims));
}

inline Pb node(const std::string& op, const std::vector<std::string>& ins,
               const std::vector<std::string>& outs, const std::string& name = "") {
  Pb n;
  for (const auto& i : ins) n.str(1, i);
  for (const auto& o : outs) n.str(2, o);
  if (!name.empty()) n.str(3, name);
  n.str(4, op);
  return n;
}

inline Pb model(const Pb& graph, int64_t opset = 13) {
  return Pb().i64(1, 8).msg(8, Pb().str(1, "").i64(2, opset)).msg(7, graph);
}

}  // namespace ferrite::testing
