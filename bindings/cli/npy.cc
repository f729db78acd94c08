// .npy reading and writing (see npy.h). The header is a Python dict literal; we accept the
// subset numpy writes — quoted strings, True/False and tuples of integers — and nothing
// else, so a malformed file fails with a message instead of being half understood.
#include "bindings/cli/npy.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include "bindings/cli/tensor_values.h"
#include "compiler/plan/error.h"

namespace ferrite {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// numpy 2's NPY_MAXDIMS (numpy 1 allows 32): more is a corrupt or hostile header.
constexpr size_t kMaxRank = 64;

struct DescrEntry {
  const char* descr;
  DType dtype;
};

// Byte order is meaningless for 1-byte types, so numpy writes '|' there; accept '<' too.
constexpr DescrEntry kDescrs[] = {
    {"<f4", DType::F32}, {"<f8", DType::F64},  {"<f2", DType::F16},  {"<i8", DType::I64},
    {"<i4", DType::I32}, {"<i2", DType::I16},  {"|i1", DType::I8},   {"<i1", DType::I8},
    {"|u1", DType::U8},  {"<u1", DType::U8},   {"<u2", DType::U16},  {"<u4", DType::U32},
    {"<u8", DType::U64}, {"|b1", DType::Bool}, {"<b1", DType::Bool},
};

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& what) : text_(text), what_(what) {}

  Header parse() {
    Header h;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    expect('{');
    while (peek() != '}') {
      const std::string key = parse_string();
      expect(':');
      if (key == "descr" && !seen_descr) {
        h.descr = parse_string();
        seen_descr = true;
      } else if (key == "fortran_order" && !seen_order) {
        h.fortran_order = parse_bool();
        seen_order = true;
      } else if (key == "shape" && !seen_shape) {
        h.shape = parse_shape();
        seen_shape = true;
      } else {
        error("unexpected or repeated key '" + key + "'");
      }
      if (peek() != '}') expect(',');
    }
    expect('}');
    if (!seen_descr || !seen_order || !seen_shape) error("missing descr, fortran_order or shape");
    if (text_.empty() || text_.back() != '\n') error("header does not end with a newline");
    if (text_.find_first_not_of(" \n", pos_) != std::string::npos) error("text after the dict");
    return h;
  }

 private:
  [[noreturn]] void error(const std::string& msg) const {
    fail(what_, ": malformed header (", msg, " at offset ", pos_, ")");
  }

  char peek() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
    if (pos_ >= text_.size()) error("unexpected end");
    return text_[pos_];
  }

  void expect(char c) {
    if (peek() != c) error(std::string("expected '") + c + "'");
    ++pos_;
  }

  std::string parse_string() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') error("expected a quoted string");
    const size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string::npos) error("unterminated string");
    std::string s = text_.substr(pos_ + 1, end - pos_ - 1);
    if (s.find('\\') != std::string::npos) error("escapes are not supported");
    pos_ = end + 1;
    return s;
  }

  bool parse_bool() {
    peek();
    for (const char* word : {"True", "False"}) {
      if (text_.compare(pos_, std::strlen(word), word) == 0) {
        pos_ += std::strlen(word);
        return word[0] == 'T';
      }
    }
    error("expected True or False");
  }

  int64_t parse_dim() {
    peek();
    const size_t start = pos_;
    int64_t v = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      if (v > (int64_t{1} << 50)) error("dimension too large");
      v = v * 10 + (text_[pos_++] - '0');
    }
    if (pos_ == start) error("expected a non-negative integer");
    return v;
  }

  // "()", "(5,)", "(2, 3)" or "(2, 3,)"; a single element needs its comma, as in Python.
  std::vector<int64_t> parse_shape() {
    std::vector<int64_t> shape;
    expect('(');
    bool comma = false;
    while (peek() != ')') {
      if (shape.size() == kMaxRank) error("more than 64 dimensions");
      shape.push_back(parse_dim());
      comma = peek() == ',';
      if (comma)
        ++pos_;
      else if (peek() != ')')
        error("expected ',' or ')'");
    }
    if (shape.size() == 1 && !comma) error("a 1-element shape needs a trailing comma");
    expect(')');
    return shape;
  }

  const std::string& text_;
  const std::string& what_;
  size_t pos_ = 0;
};

DType dtype_of_descr(const std::string& descr, const std::string& what) {
  for (const DescrEntry& e : kDescrs) {
    if (descr == e.descr) return e.dtype;
  }
  if (!descr.empty() && descr[0] == '>')
    fail(what, ": big-endian dtype '", descr, "' is not supported");
  fail(what, ": unsupported dtype '", descr, "'");
}

uint32_t read_le(const uint8_t* p, size_t bytes) {
  uint32_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

// The header dict as numpy writes it: keys sorted, a trailing ", ".
std::string header_dict(const std::string& descr, const std::vector<int64_t>& shape) {
  std::string s = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",), }" : "), }");
}

}  // namespace

std::string npy_descr(DType dtype) {
  if (dtype == DType::BF16 || dtype_is_minifloat(dtype)) return "<f4";  // widened
  if (dtype == DType::U4 || dtype == DType::U2) return "|u1";           // a byte each
  if (dtype == DType::I4 || dtype == DType::I2) return "|i1";
  for (const DescrEntry& e : kDescrs) {
    if (e.dtype == dtype) return e.descr;
  }
  fail("a ", dtype_name(dtype), " tensor cannot be stored in an npy file");
}

// numpy's unicode arrays ('<U{n}'): n UTF-32 code units per element, NUL-padded.
bool unicode_width(const std::string& descr, uint64_t* width) {
  if (descr.size() < 3 || descr.compare(0, 2, "<U") != 0 || descr.size() > 12) return false;
  uint64_t n = 0;
  for (size_t i = 2; i < descr.size(); ++i) {
    if (descr[i] < '0' || descr[i] > '9') return false;
    n = n * 10 + static_cast<uint64_t>(descr[i] - '0');
  }
  *width = n;
  return true;
}

void append_utf8(std::string* s, uint32_t c, const std::string& what) {
  if (c >= 0xD800 && (c < 0xE000 || c > 0x10FFFF))
    fail(what, ": ", c, " is not a Unicode scalar value");
  if (c < 0x80) {
    s->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    s->push_back(static_cast<char>(0xC0 | (c >> 6)));
    s->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    s->push_back(static_cast<char>(0xE0 | (c >> 12)));
    s->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    s->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    s->push_back(static_cast<char>(0xF0 | (c >> 18)));
    s->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    s->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    s->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

// The code points of UTF-8 text; a malformed sequence is an error naming `what`.
std::vector<uint32_t> code_points(const std::string& s, const std::string& what) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    const uint8_t b = static_cast<uint8_t>(s[i]);
    const int extra = b < 0x80         ? 0
                      : (b >> 5) == 6  ? 1
                      : (b >> 4) == 14 ? 2
                      : (b >> 3) == 30 ? 3
                                       : -1;
    if (extra < 0 || i + static_cast<size_t>(extra) >= s.size())
      fail(what, ": a string is not UTF-8");
    uint32_t c = extra == 0 ? b : b & (0x3F >> extra);
    for (int k = 1; k <= extra; ++k) {
      const uint8_t t = static_cast<uint8_t>(s[i + static_cast<size_t>(k)]);
      if ((t >> 6) != 2) fail(what, ": a string is not UTF-8");
      c = (c << 6) | (t & 0x3F);
    }
    out.push_back(c);
    i += static_cast<size_t>(extra) + 1;
  }
  return out;
}

Tensor parse_npy(const uint8_t* data, size_t size, const std::string& what) {
  if (size < 10 || std::memcmp(data, kMagic, kMagicSize) != 0) fail(what, ": not an npy file");
  const int major = data[6], minor = data[7];
  if ((major != 1 && major != 2) || minor != 0) {
    fail(what, ": unsupported npy format version ", major, ".", minor, " (expected 1.0 or 2.0)");
  }
  const size_t len_bytes = major == 1 ? 2 : 4;
  if (size < 8 + len_bytes) fail(what, ": truncated header");
  const size_t header_len = read_le(data + 8, len_bytes);
  const size_t data_offset = 8 + len_bytes + header_len;
  if (header_len > size - 8 - len_bytes) fail(what, ": truncated header");
  const std::string text(reinterpret_cast<const char*>(data) + 8 + len_bytes, header_len);
  const Header h = HeaderParser(text, what).parse();
  if (h.fortran_order) fail(what, ": Fortran-order arrays are not supported (save in C order)");
  uint64_t width = 0;
  const bool unicode = unicode_width(h.descr, &width);
  const DType dtype = unicode ? DType::String : dtype_of_descr(h.descr, what);

  const size_t payload = size - data_offset;
  uint64_t count = 1;
  for (int64_t d : h.shape) {
    // Dims are < 2^51, so this bound keeps count * 8 from overflowing.
    if (d != 0 && count > (uint64_t{1} << 58) / static_cast<uint64_t>(d)) {
      fail(what, ": shape too large");
    }
    count *= static_cast<uint64_t>(d);
  }
  if (unicode) {  // UTF-32 code units to UTF-8 strings, the NUL padding dropped
    if (width > (uint64_t{1} << 30) || count * width * 4 != payload)
      fail(what, ": data is ", payload, " bytes, but ", count, " strings of ", width,
           " characters need ", count * width * 4);
    std::vector<std::string> strings(static_cast<size_t>(count));
    const uint8_t* p = data + data_offset;
    for (uint64_t k = 0; k < count; ++k) {
      uint64_t len = width;
      while (len > 0 && read_le(p + (k * width + len - 1) * 4, 4) == 0) --len;
      for (uint64_t c = 0; c < len; ++c)
        append_utf8(&strings[k], read_le(p + (k * width + c) * 4, 4), what);
    }
    return Tensor(h.shape, std::move(strings));
  }
  const uint64_t expected = count * dtype_size(dtype);
  if (expected != payload) {
    fail(what, ": data is ", payload, " bytes, but ", format_type(dtype, h.shape), " needs ",
         expected);
  }
  Tensor t(dtype, h.shape);
  if (payload) std::memcpy(t.data(), data + data_offset, payload);
  if (dtype == DType::Bool) {
    for (size_t i = 0; i < payload; ++i) t.data()[i] = t.data()[i] != 0;
  }
  return t;
}

Tensor read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open npy file '", path, "'");
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  if (in.bad()) fail("cannot read npy file '", path, "'");
  return parse_npy(bytes.data(), bytes.size(), "npy file '" + path + "'");
}

std::vector<uint8_t> encode_npy(const Tensor& t) {
  // Strings as numpy's unicode ('<U{n}', n the most code points of any).
  std::vector<std::vector<uint32_t>> text;
  size_t width = 1;
  for (const std::string& s : t.strings()) {
    text.push_back(code_points(s, "a string output"));
    width = std::max(width, text.back().size());
  }
  std::string header = header_dict(
      t.dtype() == DType::String ? str_cat("<U", width) : npy_descr(t.dtype()), t.shape());
  // numpy pads so the data starts on a 64-byte boundary; the header ends with '\n'.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out(kMagic, kMagic + kMagicSize);
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<uint8_t>(header.size() & 0xff));
  out.push_back(static_cast<uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  if (t.dtype() == DType::String) {
    for (const std::vector<uint32_t>& cs : text) {
      for (size_t k = 0; k < width; ++k) {
        const uint32_t c = k < cs.size() ? cs[k] : 0;
        for (int b = 0; b < 4; ++b) out.push_back(static_cast<uint8_t>(c >> (8 * b)));
      }
    }
  } else if (t.dtype() == DType::BF16 || dtype_is_minifloat(t.dtype())) {
    for (int64_t i = 0; i < t.elements(); ++i) {
      const float f = static_cast<float>(element_as_double(t, i));
      const uint8_t* p = reinterpret_cast<const uint8_t*>(&f);
      out.insert(out.end(), p, p + sizeof(f));
    }
  } else {
    out.insert(out.end(), t.data(), t.data() + t.nbytes());
  }
  return out;
}

void write_npy(const std::string& path, const Tensor& t) {
  const std::vector<uint8_t> bytes = encode_npy(t);
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) fail("cannot write npy file '", path, "'");
}

}  // namespace ferrite
