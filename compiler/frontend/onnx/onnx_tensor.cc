#include "compiler/frontend/onnx/onnx_tensor.h"

#include <cstring>
#include <fstream>

#include "compiler/plan/error.h"
#include "compiler/plan/scalar_ops.h"

namespace ferrite::onnx {

namespace {

constexpr int32_t kOnnxString = 8;
constexpr int32_t kLocationExternal = 1;

template <class... Args>
[[noreturn]] void unsupported(Args&&... args) {
  throw UnsupportedError(str_cat(std::forward<Args>(args)...));
}

DType tensor_dtype(const TensorProto& t, const std::string& what) {
  if (t.data_type == kOnnxString) return DType::String;
  if (t.data_type == 0) fail("onnx: ", what, ": tensor has no data_type");
  DType dt;
  if (!dtype_from_onnx(t.data_type, &dt)) {
    unsupported("onnx: ", what, ": tensor data type ", t.data_type, " is not supported");
  }
  return dt;
}

// Bytes the dims call for as the tensor stores them: packed for the 4- and 2-bit types
// (two or four elements per byte, the first in the low bits), with every product checked.
size_t expected_bytes(const TensorProto& t, DType dt, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : t.dims) {
    if (d < 0) fail("onnx: ", what, ": negative dimension ", d);
    if (__builtin_mul_overflow(n, d, &n)) fail("onnx: ", what, ": element count overflows");
  }
  const int bits = dtype_bits(dt);
  if (bits < 8) return static_cast<size_t>(n / (8 / bits) + (n % (8 / bits) != 0));
  int64_t bytes;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(dtype_size(dt)), &bytes) ||
      static_cast<uint64_t>(bytes) > SIZE_MAX) {
    fail("onnx: ", what, ": byte size overflows");
  }
  return static_cast<size_t>(bytes);
}

// Packed 4- or 2-bit elements -> a byte each (sign-extended for the signed types), in place.
void unpack_subbyte(DType dt, int64_t elements, TensorData* out) {
  const int bits = dtype_bits(dt);
  const int per_byte = 8 / bits;
  ConstantBytes packed = out->bytes;
  out->bytes.resize(static_cast<size_t>(elements));
  uint8_t* dst = out->bytes.mutable_data();
  const uint8_t* src = packed.data();
  for (int64_t i = 0; i < elements; ++i) {
    const int code = (src[i / per_byte] >> (bits * (i % per_byte))) & ((1 << bits) - 1);
    dst[i] = narrow_to_bits(dt, code);
  }
}

// Non-negative decimal (external data offset/length); no exceptions, no overflow.
int64_t parse_count(const std::string& s, const std::string& what) {
  if (s.empty() || s.size() > 18) fail("onnx: ", what, ": bad external data number '", s, "'");
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') fail("onnx: ", what, ": bad external data number '", s, "'");
    v = v * 10 + (c - '0');
  }
  return v;
}

// A relative path that stays inside base_dir: no absolute paths, no '..' components.
void check_relative(const std::string& loc, const std::string& what) {
  if (loc.empty()) fail("onnx: ", what, ": external data has no location");
  if (loc[0] == '/' || loc[0] == '\\' || loc.find(':') != std::string::npos) {
    fail("onnx: ", what, ": external data location '", loc, "' must be a relative path");
  }
  size_t start = 0;
  while (start <= loc.size()) {
    size_t end = loc.find_first_of("/\\", start);
    if (end == std::string::npos) end = loc.size();
    if (loc.compare(start, end - start, "..") == 0) {
      fail("onnx: ", what, ": external data location '", loc, "' may not contain '..'");
    }
    start = end + 1;
  }
}

void read_external(const TensorProto& t, const std::string& base_dir, const std::string& what,
                   TensorData* out, size_t nbytes) {
  if (base_dir.empty()) fail("onnx: ", what, ": external data is not allowed (no base directory)");
  std::string loc;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data) {
    if (kv.first == "location") loc = kv.second;
    if (kv.first == "offset") offset = parse_count(kv.second, what);
    if (kv.first == "length") length = parse_count(kv.second, what);
  }
  check_relative(loc, what);
  std::string path = base_dir + "/" + loc;
  std::ifstream f(path, std::ios::binary);
  if (!f) fail("onnx: ", what, ": cannot open external data file '", path, "'");
  f.seekg(0, std::ios::end);
  int64_t size = static_cast<int64_t>(f.tellg());
  if (!f || size < 0) fail("onnx: ", what, ": cannot read external data file '", path, "'");
  if (length < 0) length = offset <= size ? size - offset : 0;
  if (offset > size || length > size - offset) {
    fail("onnx: ", what, ": external data file '", path, "' has ", size, " bytes, needs ", offset,
         " + ", length);
  }
  if (static_cast<uint64_t>(length) != nbytes) {
    fail("onnx: ", what, ": external data has ", length, " bytes, dims need ", nbytes);
  }
  out->bytes.resize(nbytes);
  f.seekg(offset);
  f.read(reinterpret_cast<char*>(out->bytes.mutable_data()), static_cast<std::streamsize>(nbytes));
  if (static_cast<size_t>(f.gcount()) != nbytes) {
    fail("onnx: ", what, ": short read from external data file '", path, "'");
  }
}

template <class Src>
void check_count(const std::vector<Src>& src, size_t n, const char* field,
                 const std::string& what) {
  if (src.size() != n) {
    fail("onnx: ", what, ": ", field, " has ", src.size(), " values, dims need ", n);
  }
}

// Writes each value's low `size` bytes little-endian (int32_data holding f16 bits etc.).
template <class Src>
void store_truncated(const std::vector<Src>& src, size_t size, TensorData* out) {
  out->bytes.resize(src.size() * size);
  uint8_t* bytes = out->bytes.mutable_data();
  for (size_t i = 0; i < src.size(); ++i) {
    uint64_t bits = static_cast<uint64_t>(src[i]);
    for (size_t k = 0; k < size; ++k) {
      bytes[i * size + k] = static_cast<uint8_t>(bits >> (8 * k));
    }
  }
}

template <class Src>
void store_same(const std::vector<Src>& src, TensorData* out) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(src.data());
  out->bytes.assign(p, p + src.size() * sizeof(Src));
}

void read_typed(const TensorProto& t, DType dt, size_t n, const std::string& what,
                TensorData* out) {
  switch (dt) {
    case DType::F32:
      check_count(t.float_data, n, "float_data", what);
      store_same(t.float_data, out);
      return;
    case DType::F64:
      check_count(t.double_data, n, "double_data", what);
      store_same(t.double_data, out);
      return;
    case DType::I64:
      check_count(t.int64_data, n, "int64_data", what);
      store_same(t.int64_data, out);
      return;
    case DType::U32:
    case DType::U64:
      check_count(t.uint64_data, n, "uint64_data", what);
      store_truncated(t.uint64_data, dtype_size(dt), out);
      return;
    default:  // a byte (or a packed byte of 4- or 2-bit elements) or two per value
      check_count(t.int32_data, n, "int32_data", what);
      store_truncated(t.int32_data, dtype_bits(dt) < 8 ? 1 : dtype_size(dt), out);
  }
}

// onnx.checker's rule: data in exactly one field (none for no elements or external data).
void check_value_fields(const TensorProto& t, size_t nbytes, const std::string& what) {
  int fields = (t.raw_data.size > 0) + !t.float_data.empty() + !t.int32_data.empty() +
               !t.int64_data.empty() + !t.double_data.empty() + !t.uint64_data.empty() +
               !t.string_data.empty();
  if (t.data_location == kLocationExternal && fields) {
    fail("onnx: ", what, ": external data and ", fields, " data fields besides");
  }
  if (t.data_location != kLocationExternal && nbytes && fields > 1) {
    fail("onnx: ", what, ": data in ", fields, " fields (one allowed)");
  }
}

// A string tensor: its elements in string_data, one per position of the dims.
TensorData strings_from_proto(const TensorProto& t, const std::string& what) {
  if (t.data_location == kLocationExternal || t.has_raw_data)
    fail("onnx: ", what, ": a string tensor keeps its elements in string_data");
  int64_t n = 1;
  for (int64_t d : t.dims) {
    if (d < 0) fail("onnx: ", what, ": negative dimension ", d);
    if (__builtin_mul_overflow(n, d, &n)) fail("onnx: ", what, ": element count overflows");
  }
  check_count(t.string_data, static_cast<size_t>(n), "string_data", what);
  TensorData out;
  out.dtype = DType::String;
  out.shape = t.dims;
  out.strings = std::make_shared<const std::vector<std::string>>(t.string_data);
  return out;
}

}  // namespace

TensorData tensor_from_proto(const TensorProto& t, const std::string& base_dir,
                             const std::string& what) {
  DType dt = tensor_dtype(t, what);
  if (t.has_segment) unsupported("onnx: ", what, ": segmented tensors are not supported");
  if (dt == DType::String) return strings_from_proto(t, what);
  size_t nbytes = expected_bytes(t, dt, what);
  check_value_fields(t, nbytes, what);
  TensorData out;
  out.dtype = dt;
  out.shape = t.dims;
  if (t.data_location == kLocationExternal) {
    read_external(t, base_dir, what, &out, nbytes);
  } else if (t.has_raw_data) {
    if (t.raw_data.size != nbytes) {
      fail("onnx: ", what, ": raw_data has ", t.raw_data.size, " bytes, dims need ", nbytes);
    }
    out.bytes.assign(t.raw_data.data, t.raw_data.data + t.raw_data.size);
  } else {
    read_typed(t, dt, dtype_bits(dt) < 8 ? nbytes : nbytes / dtype_size(dt), what, &out);
  }
  if (dtype_bits(dt) < 8) unpack_subbyte(dt, out.elements(), &out);
  if (dt == DType::Bool) {
    // Any byte other than 0/1 would be an invalid bool for code that loads it as one.
    uint8_t* b = out.bytes.mutable_data();
    for (size_t i = 0; i < out.bytes.size(); ++i) b[i] = b[i] != 0;
  }
  return out;
}

DType value_dtype(int32_t onnx_type, const std::string& what) {
  if (onnx_type == 0) return DType::Undefined;
  DType dt;
  if (!dtype_from_onnx(onnx_type, &dt)) {
    unsupported("onnx: ", what, ": element type ", onnx_type, " is not supported");
  }
  return dt;
}

}  // namespace ferrite::onnx
