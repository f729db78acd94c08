// .npy reading and writing: files written by numpy 1.24 (embedded byte for byte) are the
// oracle for the reader; the writer is checked by round trips and its header layout.
#include "bindings/cli/npy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "compiler/plan/error.h"

namespace ferrite {
namespace {

std::vector<uint8_t> bytes_of(const std::string& s) {
  return std::vector<uint8_t>(s.begin(), s.end());
}

// np.save(np.array([[1, 2, 3]], dtype=np.float32)), numpy 1.24: header padded to 128.
std::vector<uint8_t> numpy_f32_1x3() {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }";
  header.append(117 - header.size(), ' ');
  header += '\n';
  std::string file = std::string("\x93NUMPY\x01\x00", 8) + std::string("\x76\x00", 2) + header;
  const float values[3] = {1, 2, 3};
  file.append(reinterpret_cast<const char*>(values), sizeof(values));
  return bytes_of(file);
}

// The same file with the header text replaced (length field fixed up).
std::vector<uint8_t> with_header(const std::string& dict, const std::string& payload, int major = 1,
                                 bool newline = true) {
  std::string header = newline ? dict + "\n" : dict;
  std::string file = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  const size_t n = header.size();
  file += static_cast<char>(n & 0xff);
  file += static_cast<char>((n >> 8) & 0xff);
  if (major == 2) file += std::string(2, '\0');
  return bytes_of(file + header + payload);
}

std::string parse_error(const std::vector<uint8_t>& bytes) {
  try {
    parse_npy(bytes.data(), bytes.size(), "npy file 'probe.npy'");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Npy, ReadsNumpyFloat32File) {
  const std::vector<uint8_t> file = numpy_f32_1x3();
  const Tensor t = parse_npy(file.data(), file.size(), "x.npy");
  EXPECT_EQ(t.dtype(), DType::F32);
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(t.as<float>()[0], 1.0f);
  EXPECT_EQ(t.as<float>()[2], 3.0f);
}

TEST(Npy, ReadsNumpyBoolAndScalarFiles) {
  // np.save(np.array([True, False])) and np.save(np.array(7, dtype=np.int8)).
  const std::string pad = std::string(60, ' ');
  const std::vector<uint8_t> b =
      with_header("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }" + pad,
                  std::string("\x01\x00", 2));
  const Tensor tb = parse_npy(b.data(), b.size(), "b.npy");
  EXPECT_EQ(tb.dtype(), DType::Bool);
  EXPECT_EQ(tb.shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(tb.data()[0], 1);
  EXPECT_EQ(tb.data()[1], 0);
  const std::vector<uint8_t> s =
      with_header("{'descr': '|i1', 'fortran_order': False, 'shape': (), }", "\x07");
  const Tensor ts = parse_npy(s.data(), s.size(), "s.npy");
  EXPECT_EQ(ts.dtype(), DType::I8);
  EXPECT_TRUE(ts.shape().empty());
  EXPECT_EQ(ts.as<int8_t>()[0], 7);
}

TEST(Npy, ReadsVersion2AndAnyKeyOrder) {
  const int64_t v[2] = {-5, 1LL << 40};
  const std::vector<uint8_t> file =
      with_header("{'shape': (2,), 'descr': '<i8', 'fortran_order': False}",
                  std::string(reinterpret_cast<const char*>(v), 16), 2);
  const Tensor t = parse_npy(file.data(), file.size(), "v2.npy");
  EXPECT_EQ(t.dtype(), DType::I64);
  EXPECT_EQ(t.as<int64_t>()[0], -5);
  EXPECT_EQ(t.as<int64_t>()[1], 1LL << 40);
}

TEST(Npy, NormalizesBoolBytes) {
  const std::vector<uint8_t> file = with_header(
      "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", std::string("\x05\x00", 2));
  const Tensor t = parse_npy(file.data(), file.size(), "b.npy");
  EXPECT_EQ(t.data()[0], 1);
}

TEST(Npy, RoundTripsEveryDtype) {
  for (DType dt : {DType::F32, DType::F64, DType::F16, DType::I64, DType::I32, DType::I16,
                   DType::I8, DType::U8, DType::U16, DType::U32, DType::U64, DType::Bool}) {
    Tensor t(dt, {2, 3});
    for (size_t i = 0; i < t.nbytes(); ++i)
      t.data()[i] = static_cast<uint8_t>(dt == DType::Bool ? i % 2 : i * 7 + 1);
    const std::vector<uint8_t> file = encode_npy(t);
    ASSERT_EQ(file.size() % 64, t.nbytes() % 64) << dtype_name(dt);  // data starts 64-aligned
    const Tensor back = parse_npy(file.data(), file.size(), "rt.npy");
    EXPECT_EQ(back.dtype(), dt);
    EXPECT_EQ(back.shape(), t.shape());
    ASSERT_EQ(back.nbytes(), t.nbytes());
    EXPECT_EQ(std::memcmp(back.data(), t.data(), t.nbytes()), 0) << dtype_name(dt);
  }
}

TEST(Npy, WritesNumpyHeaderLayout) {
  Tensor t(DType::F32, {5});
  const std::vector<uint8_t> file = encode_npy(t);
  const std::string text(file.begin(), file.end());
  EXPECT_EQ(text.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(text.substr(10, 57), "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }");
  const size_t header_len = file[8] | (file[9] << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  EXPECT_EQ(file[10 + header_len - 1], '\n');
  EXPECT_EQ(file.size(), 10 + header_len + 20);
}

TEST(Npy, WritesBfloat16AsFloat32) {
  Tensor t(DType::BF16, {2});
  t.as<uint16_t>()[0] = 0x3F80;  // 1.0
  t.as<uint16_t>()[1] = 0xC040;  // -3.0
  const std::vector<uint8_t> file = encode_npy(t);
  const Tensor back = parse_npy(file.data(), file.size(), "bf.npy");
  EXPECT_EQ(back.dtype(), DType::F32);
  EXPECT_EQ(back.as<float>()[0], 1.0f);
  EXPECT_EQ(back.as<float>()[1], -3.0f);
}

TEST(Npy, RejectsMalformedFilesNamingThem) {
  const std::string ok = "'fortran_order': False, 'shape': (2,), }";
  const std::string two_f32(8, '\0');
  struct Case {
    std::vector<uint8_t> bytes;
    const char* expected;
  };
  std::vector<uint8_t> bad_magic = numpy_f32_1x3();
  bad_magic[1] = 'X';
  std::vector<uint8_t> v3 = numpy_f32_1x3();
  v3[6] = 3;
  std::vector<uint8_t> truncated = numpy_f32_1x3();
  truncated.resize(40);
  std::vector<uint8_t> short_data = numpy_f32_1x3();
  short_data.pop_back();
  std::vector<uint8_t> long_data = numpy_f32_1x3();
  long_data.push_back(0);
  const Case cases[] = {
      {bad_magic, "not an npy file"},
      {v3, "version 3.0"},
      {truncated, "truncated header"},
      {short_data, "data is 11 bytes"},
      {long_data, "data is 13 bytes"},
      {with_header("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", two_f32), "Fortran"},
      {with_header("{'descr': '>f4', " + ok, two_f32), "big-endian"},
      {with_header("{'descr': '<c8', " + ok, two_f32), "unsupported dtype '<c8'"},
      {with_header("{'descr': '<f4', 'shape': (2,), }", two_f32), "missing"},
      {with_header("{'descr': '<f4', 'descr': '<f4', " + ok, two_f32), "repeated key 'descr'"},
      {with_header("{'descr': '<f4', 'extra': 1, " + ok, two_f32), "key 'extra'"},
      {with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2), }", two_f32),
       "trailing comma"},
      {with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", two_f32),
       "non-negative"},
      {with_header("{'descr': '<f4', " + ok + " x", two_f32), "text after"},
      {with_header("{'descr': '<f4', " + ok, two_f32, 1, false), "newline"},
  };
  for (const Case& c : cases) {
    const std::string msg = parse_error(c.bytes);
    EXPECT_NE(msg.find("probe.npy"), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.expected), std::string::npos) << msg << " / wanted: " << c.expected;
  }
}

TEST(Npy, RejectsAbsurdShapesAndHeadersBeforeAllocating) {
  const std::string f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': ";
  std::string deep = "(";
  for (int i = 0; i < 65; ++i) deep += "1,";
  std::vector<uint8_t> long_header = numpy_f32_1x3();
  long_header[8] = long_header[9] = 0xff;  // 65535 header bytes, in a 140-byte file
  std::vector<uint8_t> long_header_v2 = with_header(f4 + "(2,), }", std::string(8, '\0'), 2);
  for (int i = 8; i < 12; ++i) long_header_v2[i] = 0xff;  // 4 GiB of header
  const struct {
    std::vector<uint8_t> bytes;
    const char* expected;
  } cases[] = {
      {with_header(f4 + "(1099511627776, 1099511627776), }", "x"), "shape too large"},
      {with_header(f4 + "(99999999999999999999,), }", "x"), "dimension too large"},
      {with_header(f4 + deep + "), }", "x"), "more than 64 dimensions"},
      {with_header(f4 + "(1000000000,), }", std::string(8, '\0')),
       "data is 8 bytes, but float32[1000000000] needs 4000000000"},
      {long_header, "truncated header"},
      {long_header_v2, "truncated header"},
      {bytes_of(""), "not an npy file"},
      {with_header("{'\x1b[2J\n': 1, }", ""), "unexpected or repeated key '\\x1b[2J\\n'"},
  };
  for (const auto& c : cases) {
    const std::string msg = parse_error(c.bytes);
    EXPECT_NE(msg.find(c.expected), std::string::npos) << msg << " / wanted: " << c.expected;
  }
  const std::vector<uint8_t> zero = with_header(f4 + "(0, 3), }", "");
  EXPECT_EQ(parse_npy(zero.data(), zero.size(), "x").shape(), (std::vector<int64_t>{0, 3}));
}

// Every prefix of a valid file, and each header byte replaced by a few values: an error or
// a tensor, never a crash (ASan checks the reads); the fuzz target goes further.
TEST(Npy, SurvivesTruncationAndByteChanges) {
  const std::vector<uint8_t> file = numpy_f32_1x3();
  int parsed = 0;
  for (size_t n = 0; n <= file.size(); ++n) {
    const std::vector<uint8_t> prefix(file.begin(), file.begin() + static_cast<long>(n));
    parsed += parse_error(prefix) == "(no error)";
  }
  EXPECT_EQ(parsed, 1);  // only the whole file
  for (size_t i = 0; i < 128; ++i) {
    for (uint8_t v : {0x00, 0x0a, 0x20, 0x27, 0x28, 0x29, 0x2c, 0x39, 0x7f, 0xff}) {
      std::vector<uint8_t> changed = file;
      changed[i] = v;
      parse_error(changed);
    }
  }
}

TEST(Npy, MissingFileIsNamed) {
  try {
    read_npy("/nonexistent/dir/input.npy");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/input.npy"), std::string::npos);
  }
}

// np.save(np.array(['hé', '', '日本語'])): '<U3', each element 3 UTF-32LE code units,
// NUL-padded; read as UTF-8 strings, and written back byte for byte.
TEST(Npy, ReadsAndWritesNumpyUnicodeArrays) {
  const std::string dict = "{'descr': '<U3', 'fortran_order': False, 'shape': (3,), }";
  std::string header = dict;
  header.append(117 - header.size(), ' ');
  const uint32_t units[9] = {'h', 0xE9, 0, 0, 0, 0, 0x65E5, 0x672C, 0x8A9E};
  const std::string payload(reinterpret_cast<const char*>(units), sizeof(units));
  const std::vector<uint8_t> file = with_header(header, payload);
  const Tensor t = parse_npy(file.data(), file.size(), "s.npy");
  EXPECT_EQ(t.dtype(), DType::String);
  EXPECT_EQ(t.strings(),
            (std::vector<std::string>{"h\xC3\xA9", "", "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E"}));
  EXPECT_EQ(encode_npy(t), file);
  // Sizes that do not match, code points that are not characters, text that is not UTF-8.
  EXPECT_EQ(parse_error(with_header(dict, payload.substr(4))),
            "npy file 'probe.npy': data is 32 bytes, but 3 strings of 3 characters need 36");
  const uint32_t surrogate = 0xD800;
  EXPECT_EQ(parse_error(with_header("{'descr': '<U1', 'fortran_order': False, 'shape': (1,), }",
                                    std::string(reinterpret_cast<const char*>(&surrogate), 4))),
            "npy file 'probe.npy': 55296 is not a Unicode scalar value");
  const Tensor latin1({1}, {"\xE9"});
  EXPECT_THROW(encode_npy(latin1), Error);
}

TEST(Npy, DescrOfUnsupportedDtypeThrows) {
  EXPECT_EQ(npy_descr(DType::I32), "<i4");
  EXPECT_EQ(npy_descr(DType::U8), "|u1");
  EXPECT_THROW(npy_descr(DType::String), Error);
}

}  // namespace
}  // namespace ferrite
