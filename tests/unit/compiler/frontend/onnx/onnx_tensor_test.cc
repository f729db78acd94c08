// TensorProto decoding through parse_tensor_proto and initializers: raw_data, every typed
// field (packed and unpacked), int32_data carrying f16/bf16/bool/small ints, external data,
// and the errors for data that does not match its dims.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "compiler/frontend/onnx/onnx_import.h"
#include "compiler/plan/error.h"
#include "tests/unit/compiler/frontend/onnx/proto_writer.h"

namespace ferrite {
namespace {

using testing::Pb;

TensorData parse(const Pb& t) {
  return parse_tensor_proto(t.data(), t.size());
}

std::string error_of(const Pb& t) {
  try {
    parse(t);
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(OnnxTensor, RawDataFloat) {
  std::vector<float> v = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 8.0f};
  std::string raw(reinterpret_cast<const char*>(v.data()), v.size() * 4);
  std::string name;
  Pb t = Pb().packed_varints(1, {2, 3}).i64(2, 1).str(8, "w").str(9, raw);
  TensorData d = parse_tensor_proto(t.data(), t.size(), &name);
  EXPECT_EQ(name, "w");
  EXPECT_EQ(d.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(d.float_at(2), 3.25);
  EXPECT_EQ(d.float_at(5), 8.0);
}

TEST(OnnxTensor, TypedFieldsPackedAndUnpacked) {
  // float_data packed
  TensorData f = parse(Pb().i64(1, 3).i64(2, 1).packed_floats(4, {1, 2, 3}));
  EXPECT_EQ(f.float_at(1), 2.0);
  // float_data unpacked, dims unpacked
  TensorData fu = parse(Pb().i64(1, 2).i64(2, 1).f32(4, 0.5f).f32(4, -4.0f));
  EXPECT_EQ(fu.float_at(0), 0.5);
  EXPECT_EQ(fu.float_at(1), -4.0);
  // int64_data, both encodings mixed
  TensorData i = parse(Pb().i64(1, 3).i64(2, 7).packed_varints(7, {-1, 5}).i64(7, 1LL << 40));
  EXPECT_EQ(i.to_ints(), (std::vector<int64_t>{-1, 5, 1LL << 40}));
  // double_data
  TensorData dd = parse(Pb().i64(1, 2).i64(2, 11).packed_doubles(10, {0.125, 1e100}));
  EXPECT_EQ(dd.float_at(1), 1e100);
  // uint64_data as uint32 and uint64
  TensorData u32 = parse(Pb().i64(1, 1).i64(2, 12).varint(11, 4000000000u));
  EXPECT_EQ(u32.bytes.size(), 4u);
  EXPECT_EQ(u32.int_at(0), 4000000000LL);
  TensorData u64 = parse(Pb().i64(1, 1).i64(2, 13).varint(11, 1ULL << 63));
  EXPECT_EQ(u64.float_at(0), 9223372036854775808.0);
  // a scalar (no dims) holds one element
  TensorData s = parse(Pb().i64(2, 6).i64(5, -42));
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(s.int_at(0), -42);
}

TEST(OnnxTensor, Int32DataCarriesNarrowTypes) {
  // f16 bits 0x3C00 = 1.0, 0xC500 = -5.0; bf16 0x4049 = 3.140625.
  TensorData h = parse(Pb().i64(1, 2).i64(2, 10).packed_varints(5, {0x3C00, 0xC500}));
  EXPECT_EQ(h.bytes.size(), 4u);
  EXPECT_EQ(h.float_at(1), -5.0);
  TensorData bf = parse(Pb().i64(1, 1).i64(2, 16).i64(5, 0x4049));
  EXPECT_EQ(bf.float_at(0), 3.140625);
  TensorData b = parse(Pb().i64(1, 3).i64(2, 9).packed_varints(5, {0, 1, 1}));
  EXPECT_EQ(b.to_ints(), (std::vector<int64_t>{0, 1, 1}));
  TensorData i8 = parse(Pb().i64(1, 2).i64(2, 3).packed_varints(5, {-128, 127}));
  EXPECT_EQ(i8.to_ints(), (std::vector<int64_t>{-128, 127}));
  TensorData u8 = parse(Pb().i64(1, 1).i64(2, 2).i64(5, 255));
  EXPECT_EQ(u8.int_at(0), 255);
  TensorData i16 = parse(Pb().i64(1, 1).i64(2, 5).i64(5, -30000));
  EXPECT_EQ(i16.int_at(0), -30000);
  TensorData u16 = parse(Pb().i64(1, 1).i64(2, 4).i64(5, 65535));
  EXPECT_EQ(u16.int_at(0), 65535);
  TensorData i32 = parse(Pb().i64(1, 1).i64(2, 6).i64(5, -7));
  EXPECT_EQ(i32.int_at(0), -7);
}

TEST(OnnxTensor, SmallTypesArePackedInFilesAndByteWideInMemory) {
  // int4 (22): two per byte, the first in the low nibble; the odd last byte half used.
  TensorData i4 = parse(Pb().i64(1, 5).i64(2, 22).str(9, std::string("\x87\xa9\x0f", 3)));
  EXPECT_EQ(i4.bytes.size(), 5u);
  EXPECT_EQ(i4.to_ints(), (std::vector<int64_t>{7, -8, -7, -6, -1}));
  // uint4 (21) in int32_data: one packed byte per value.
  TensorData u4 = parse(Pb().i64(1, 4).i64(2, 21).packed_varints(5, {0x21, 0xf0}));
  EXPECT_EQ(u4.to_ints(), (std::vector<int64_t>{1, 2, 0, 15}));
  // uint2 (25) and int2 (26): four per byte.
  TensorData u2 = parse(Pb().i64(1, 3).i64(2, 25).str(9, std::string("\x39", 1)));
  EXPECT_EQ(u2.to_ints(), (std::vector<int64_t>{1, 2, 3}));
  TensorData i2 = parse(Pb().i64(1, 4).i64(2, 26).str(9, std::string("\x39", 1)));
  EXPECT_EQ(i2.to_ints(), (std::vector<int64_t>{1, -2, -1, 0}));
  // float8e4m3fn (17), e5m2 (19): a byte each, raw or in int32_data; float4e2m1 (23) packed.
  TensorData f8 = parse(Pb().i64(1, 2).i64(2, 17).str(9, std::string("\x38\x7e", 2)));
  EXPECT_EQ(f8.float_at(0), 1.0);
  EXPECT_EQ(f8.float_at(1), 448.0);
  TensorData e5 = parse(Pb().i64(1, 1).i64(2, 19).i64(5, 0xC0));
  EXPECT_EQ(e5.float_at(0), -2.0);
  TensorData f4 = parse(Pb().i64(1, 2).i64(2, 23).str(9, std::string("\xf1", 1)));
  EXPECT_EQ(f4.float_at(0), 0.5);
  EXPECT_EQ(f4.float_at(1), -6.0);
  // The packed size is what the data must have.
  EXPECT_NE(
      error_of(Pb().i64(1, 5).i64(2, 22).str(9, "ab")).find("raw_data has 2 bytes, dims need 3"),
      std::string::npos);
  EXPECT_NE(error_of(Pb().i64(1, 5).i64(2, 21).packed_varints(5, {1, 2})).find("int32_data has 2"),
            std::string::npos);
}

TEST(OnnxTensor, MismatchedOrHostileSizesAreErrors) {
  EXPECT_NE(error_of(Pb().i64(1, 3).i64(2, 1).packed_floats(4, {1, 2})).find("float_data has 2"),
            std::string::npos);
  EXPECT_NE(error_of(Pb().i64(1, 2).i64(2, 1).str(9, "abc")).find("raw_data has 3 bytes"),
            std::string::npos);
  // 2^40 elements claimed, none present: an error, and nothing is allocated for them.
  EXPECT_THROW(parse(Pb().i64(1, 1LL << 20).i64(1, 1LL << 20).i64(2, 1)), Error);
  // A product that overflows int64.
  EXPECT_NE(error_of(Pb().i64(1, 1LL << 40).i64(1, 1LL << 40).i64(2, 1)).find("overflow"),
            std::string::npos);
  EXPECT_NE(error_of(Pb().i64(1, -3).i64(2, 1)).find("negative"), std::string::npos);
  EXPECT_NE(error_of(Pb().i64(1, 1).i64(2, 1)).find("float_data has 0"), std::string::npos);
  EXPECT_THROW(parse(Pb().i64(1, 1).i64(2, 99).str(9, "abcd")), UnsupportedError);
  // Strings: one per element, in string_data only.
  const TensorData hello = parse(Pb().i64(1, 1).i64(2, 8).str(6, "hello"));
  EXPECT_EQ(hello.dtype, DType::String);
  ASSERT_TRUE(hello.strings);
  EXPECT_EQ(*hello.strings, (std::vector<std::string>{"hello"}));
  EXPECT_NE(error_of(Pb().i64(1, 2).i64(2, 8).str(6, "hello")).find("string_data has 1 values"),
            std::string::npos);
  EXPECT_NE(error_of(Pb().i64(1, 1).i64(2, 8).str(9, "hello")).find("string_data"),
            std::string::npos);
  EXPECT_THROW(parse(Pb().i64(1, 1)), Error);  // no data_type
  // A length-delimited field claiming 2^60 bytes.
  Pb huge = Pb().i64(2, 1).key(9, 2).raw_varint(1ULL << 60);
  std::string msg = error_of(huge);
  EXPECT_NE(msg.find("truncated length-delimited field 9 at offset 2 (TensorProto)"),
            std::string::npos)
      << msg;
  // Packed floats whose byte count is not a multiple of 4.
  EXPECT_THROW(parse(Pb().i64(1, 1).i64(2, 1).str(4, "abcde")), Error);
}

TEST(OnnxTensor, BoolRawBytesAreNormalized) {
  TensorData b = parse(Pb().i64(1, 2).i64(2, 9).str(9, std::string("\x00\x07", 2)));
  EXPECT_EQ(b.bytes[1], 1);
}

// A model with one initializer 'w' (external data) feeding Identity.
Pb external_model(const std::vector<std::pair<std::string, std::string>>& entries) {
  Pb t = Pb().i64(1, 2).i64(2, 1).str(8, "w").i64(14, 1);
  for (const auto& kv : entries) t.msg(13, Pb().str(1, kv.first).str(2, kv.second));
  Pb graph = Pb().msg(1, testing::node("Identity", {"w"}, {"y"})).str(2, "g").msg(5, t);
  graph.msg(12, testing::value_info("y", 1, {2}));
  return testing::model(graph);
}

class ExternalData : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ferrite_ext_" + std::to_string(reinterpret_cast<uintptr_t>(this)));
    std::filesystem::create_directories(dir_ / "sub");
    std::ofstream f(dir_ / "sub" / "w.bin", std::ios::binary);
    std::vector<float> v = {9.0f, 1.5f, -2.5f, 4.0f};  // the tensor is bytes 4..12
    f.write(reinterpret_cast<const char*>(v.data()), 16);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::unique_ptr<Graph> import(const Pb& m) {
    return import_onnx(m.data(), m.size(), dir_.string());
  }
  std::filesystem::path dir_;
};

TEST_F(ExternalData, ReadsOffsetAndLength) {
  auto g = import(external_model({{"location", "sub/w.bin"}, {"offset", "4"}, {"length", "8"}}));
  const Value* w = g->find("w");
  ASSERT_TRUE(w && w->is_constant());
  EXPECT_EQ(w->data->float_at(0), 1.5);
  EXPECT_EQ(w->data->float_at(1), -2.5);
  // Without length, the rest of the file must be exactly the tensor.
  auto g2 = import(external_model({{"location", "sub/w.bin"}, {"offset", "8"}}));
  EXPECT_EQ(g2->find("w")->data->float_at(1), 4.0);
}

TEST_F(ExternalData, RejectsEscapesAndBadSizes) {
  EXPECT_THROW(import(external_model({{"location", "/etc/passwd"}})), Error);
  EXPECT_THROW(import(external_model({{"location", "../w.bin"}})), Error);
  EXPECT_THROW(import(external_model({{"location", "sub/../sub/w.bin"}, {"offset", "4"}})), Error);
  EXPECT_THROW(import(external_model({{"location", "sub/missing.bin"}})), Error);
  EXPECT_THROW(import(external_model({{"location", "sub/w.bin"}})), Error);  // 16 != 8 bytes
  EXPECT_THROW(
      import(external_model({{"location", "sub/w.bin"}, {"offset", "12"}, {"length", "8"}})),
      Error);
  EXPECT_THROW(import(external_model({{"location", "sub/w.bin"}, {"offset", "-4"}})), Error);
  EXPECT_THROW(
      import(external_model({{"location", "sub/w.bin"}, {"offset", "99999999999999999999"}})),
      Error);
  Pb m = external_model({{"location", "sub/w.bin"}, {"offset", "4"}, {"length", "8"}});
  EXPECT_THROW(import_onnx(m.data(), m.size(), ""), Error);  // no base dir: not allowed
}

}  // namespace
}  // namespace ferrite
