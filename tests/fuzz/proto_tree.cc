#include "tests/fuzz/proto_tree.h"

#include <cstring>

#include "compiler/plan/error.h"

namespace ferrite::fuzz {
namespace {

// Deeper nesting stays bytes: bounds the recursion on hostile inputs (ONNX's own limit on
// subgraphs is 64 graphs, each a few messages deep).
constexpr int kMaxDepth = 200;

void parse_fields(onnx::WireReader r, Msg type, int depth, ProtoMessage* out);

ProtoField read_field(onnx::WireReader& r, Msg type, int depth) {
  ProtoField f;
  f.number = r.field();
  f.wire = r.wire_type();
  switch (f.wire) {
    case WireType::Varint:
      f.scalar = r.read_varint();
      break;
    case WireType::I32: {
      float v = r.read_float();
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      f.scalar = bits;
      break;
    }
    case WireType::I64: {
      double v = r.read_double();
      std::memcpy(&f.scalar, &v, 8);
      break;
    }
    default: {
      onnx::Bytes b = r.read_bytes();
      const Msg sub = sub_message(type, f.number);
      if (sub != Msg::None && depth < kMaxDepth) {
        auto m = std::make_unique<ProtoMessage>();
        m->type = sub;
        try {
          parse_fields(r.nested(b, "fuzz"), sub, depth + 1, m.get());
          f.message = std::move(m);
          break;
        } catch (const Error&) {
          // Not a valid message: kept as bytes below.
        }
      }
      f.bytes = b.str();
    }
  }
  return f;
}

void parse_fields(onnx::WireReader r, Msg type, int depth, ProtoMessage* out) {
  while (r.next()) out->fields.push_back(read_field(r, type, depth));
}

void put_varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void write_message(const ProtoMessage& m, std::string* out);

void write_field(const ProtoField& f, std::string* out) {
  put_varint(out, (static_cast<uint64_t>(f.number) << 3) | static_cast<uint64_t>(f.wire));
  switch (f.wire) {
    case WireType::Varint:
      put_varint(out, f.scalar);
      break;
    case WireType::I32:
      for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(f.scalar >> (8 * i)));
      break;
    case WireType::I64:
      for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(f.scalar >> (8 * i)));
      break;
    default:
      if (f.message) {
        std::string payload;
        write_message(*f.message, &payload);
        put_varint(out, payload.size());
        out->append(payload);
      } else {
        put_varint(out, f.bytes.size());
        out->append(f.bytes);
      }
  }
}

void write_message(const ProtoMessage& m, std::string* out) {
  for (const ProtoField& f : m.fields) write_field(f, out);
}

}  // namespace

ProtoField::ProtoField(const ProtoField& other)
    : number(other.number), wire(other.wire), scalar(other.scalar), bytes(other.bytes) {
  if (other.message) message = std::make_unique<ProtoMessage>(*other.message);
}

ProtoField& ProtoField::operator=(const ProtoField& other) {
  if (this != &other) *this = ProtoField(other);
  return *this;
}

ProtoField ProtoField::varint(uint32_t number, uint64_t v) {
  ProtoField f;
  f.number = number;
  f.scalar = v;
  return f;
}

ProtoField ProtoField::len(uint32_t number, std::string payload) {
  ProtoField f;
  f.number = number;
  f.wire = WireType::Len;
  f.bytes = std::move(payload);
  return f;
}

ProtoField ProtoField::nested(uint32_t number, ProtoMessage m) {
  ProtoField f;
  f.number = number;
  f.wire = WireType::Len;
  f.message = std::make_unique<ProtoMessage>(std::move(m));
  return f;
}

ProtoField* ProtoMessage::first(uint32_t number) {
  for (ProtoField& f : fields) {
    if (f.number == number) return &f;
  }
  return nullptr;
}

std::vector<ProtoField*> ProtoMessage::all(uint32_t number) {
  std::vector<ProtoField*> out;
  for (ProtoField& f : fields) {
    if (f.number == number) out.push_back(&f);
  }
  return out;
}

size_t ProtoMessage::count(uint32_t number) const {
  size_t n = 0;
  for (const ProtoField& f : fields) n += f.number == number;
  return n;
}

std::string ProtoMessage::string_of(uint32_t number) const {
  for (const ProtoField& f : fields) {
    if (f.number == number && f.wire == WireType::Len && !f.message) return f.bytes;
  }
  return "";
}

void ProtoMessage::remove_all(uint32_t number) {
  std::vector<ProtoField> kept;
  for (ProtoField& f : fields) {
    if (f.number != number) kept.push_back(std::move(f));
  }
  fields = std::move(kept);
}

void ProtoMessage::set_varint(uint32_t number, uint64_t v) {
  remove_all(number);
  fields.push_back(ProtoField::varint(number, v));
}

void ProtoMessage::set_string(uint32_t number, const std::string& s) {
  remove_all(number);
  fields.push_back(ProtoField::len(number, s));
}

bool parse_proto(const uint8_t* data, size_t size, Msg type, ProtoMessage* out) {
  out->type = type;
  out->fields.clear();
  try {
    parse_fields(onnx::WireReader(data, size, "fuzz"), type, 0, out);
  } catch (const Error&) {
    return false;
  }
  return true;
}

std::string serialize_proto(const ProtoMessage& m) {
  std::string out;
  write_message(m, &out);
  return out;
}

std::vector<int64_t> decode_varints(const std::string& packed) {
  std::vector<int64_t> out;
  uint64_t v = 0;
  int shift = 0;
  for (char c : packed) {
    const auto b = static_cast<uint8_t>(c);
    if (shift < 64) v |= static_cast<uint64_t>(b & 0x7f) << shift;
    shift += 7;
    if (!(b & 0x80)) {
      out.push_back(static_cast<int64_t>(v));
      v = 0;
      shift = 0;
    }
  }
  return out;
}

std::string encode_varints(const std::vector<int64_t>& values) {
  std::string out;
  for (int64_t v : values) put_varint(&out, static_cast<uint64_t>(v));
  return out;
}

std::vector<float> decode_floats(const std::string& packed) {
  std::vector<float> out(packed.size() / 4);
  if (!out.empty()) std::memcpy(out.data(), packed.data(), out.size() * 4);
  return out;
}

std::string encode_floats(const std::vector<float>& values) {
  std::string out(values.size() * 4, '\0');
  if (!values.empty()) std::memcpy(&out[0], values.data(), out.size());
  return out;
}

std::vector<int64_t> get_ints(ProtoMessage& m, uint32_t number) {
  std::vector<int64_t> out;
  for (ProtoField* f : m.all(number)) {
    if (f->wire == WireType::Varint) {
      out.push_back(static_cast<int64_t>(f->scalar));
    } else if (f->wire == WireType::Len && !f->message) {
      for (int64_t v : decode_varints(f->bytes)) out.push_back(v);
    }
  }
  return out;
}

void set_ints(ProtoMessage& m, uint32_t number, const std::vector<int64_t>& values) {
  size_t at = m.fields.size();
  for (size_t i = 0; i < m.fields.size(); ++i) {
    if (m.fields[i].number == number) {
      at = i;
      break;
    }
  }
  ProtoField packed = ProtoField::len(number, encode_varints(values));
  if (at == m.fields.size()) {
    m.fields.push_back(std::move(packed));
    return;
  }
  m.fields[at] = std::move(packed);
  for (size_t i = m.fields.size(); i-- > at + 1;) {
    if (m.fields[i].number == number) m.fields.erase(m.fields.begin() + static_cast<long>(i));
  }
}

}  // namespace ferrite::fuzz
