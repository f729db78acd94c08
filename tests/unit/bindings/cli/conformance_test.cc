// The conformance runner on hand-made cases: a temporary directory laid out like the ONNX
// backend tests, with TensorProto files written by a small encoder here. The expected
// outputs are computed in the test (relu(x + c) for tests/cli/fixtures/add_relu.onnx).
#include "bindings/cli/conformance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "bindings/cli/cli.h"
#include "tests/unit/support/source_dir.h"

namespace ferrite {
namespace {

namespace fs = std::filesystem;

const std::string kFixtures = test::source_dir() + "/tests/cli/fixtures/";

void put_varint(std::string* s, uint64_t v) {
  while (v >= 0x80) {
    s->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  s->push_back(static_cast<char>(v));
}

// TensorProto: dims = 1 (varint), data_type = 2, name = 8, raw_data = 9.
std::string tensor_pb(int data_type, const std::vector<int64_t>& dims, const std::string& raw) {
  std::string s;
  for (int64_t d : dims) {
    s.push_back(0x08);
    put_varint(&s, static_cast<uint64_t>(d));
  }
  s.push_back(0x10);
  put_varint(&s, static_cast<uint64_t>(data_type));
  s.push_back(0x4A);
  put_varint(&s, raw.size());
  return s + raw;
}

std::string raw_f32(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

const std::vector<float> kX = {-1.0f, 0.25f, -0.75f, 2.0f, 0.5f, 0.1f};

std::vector<float> relu_x_plus_c() {
  const float c[3] = {-0.5f, 0.0f, 0.5f};
  std::vector<float> y(6);
  for (int i = 0; i < 6; ++i) y[i] = std::max(kX[i] + c[i % 3], 0.0f);
  return y;
}

class ConformanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("ferrite_conformance_" +
             std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // A case directory with `model` and one data set.
  fs::path make_case(const std::string& name, const std::string& model,
                     const std::vector<std::string>& inputs,
                     const std::vector<std::string>& outputs) {
    const fs::path dir = root_ / name;
    fs::create_directories(dir / "test_data_set_0");
    fs::copy_file(kFixtures + model, dir / "model.onnx");
    for (size_t i = 0; i < inputs.size(); ++i) {
      write_file(dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb"), inputs[i]);
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      write_file(dir / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb"), outputs[i]);
    }
    return dir;
  }

  fs::path root_;
  EngineOptions options_;
};

TEST_F(ConformanceTest, PassingCase) {
  const fs::path dir = make_case("test_ok", "add_relu.onnx", {tensor_pb(1, {2, 3}, raw_f32(kX))},
                                 {tensor_pb(1, {2, 3}, raw_f32(relu_x_plus_c()))});
  const CaseResult r = run_conformance_case(dir.string(), options_);
  EXPECT_EQ(r.status, CaseStatus::Pass) << r.reason;
  EXPECT_EQ(r.reason, "");
}

TEST_F(ConformanceTest, MismatchFailsNamingTheOutput) {
  std::vector<float> wrong = relu_x_plus_c();
  wrong[4] += 0.01f;
  const fs::path dir = make_case("test_bad", "add_relu.onnx", {tensor_pb(1, {2, 3}, raw_f32(kX))},
                                 {tensor_pb(1, {2, 3}, raw_f32(wrong))});
  const CaseResult r = run_conformance_case(dir.string(), options_);
  EXPECT_EQ(r.status, CaseStatus::Fail);
  EXPECT_NE(r.reason.find("output 0 'y'"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("index 4"), std::string::npos) << r.reason;
}

TEST_F(ConformanceTest, WrongInputCountFails) {
  const std::string x = tensor_pb(1, {2, 3}, raw_f32(kX));
  const fs::path dir = make_case("test_two", "add_relu.onnx", {x, x}, {x});
  const CaseResult r = run_conformance_case(dir.string(), options_);
  EXPECT_EQ(r.status, CaseStatus::Fail);
  EXPECT_NE(r.reason.find("2 input files for 1 model inputs"), std::string::npos) << r.reason;
}

TEST_F(ConformanceTest, UnsupportedOpsAreSkippedAndStringTensorsRead) {
  const std::string x = tensor_pb(1, {2, 3}, raw_f32(kX));
  const fs::path op = make_case("test_fancy", "unknown_op.onnx", {x}, {x});
  const CaseResult r = run_conformance_case(op.string(), options_);
  EXPECT_EQ(r.status, CaseStatus::Skip) << r.reason;
  EXPECT_NE(r.reason.find("FancyOp"), std::string::npos) << r.reason;
  std::string str_tensor;  // data_type 8 (string), dims [1], string_data (field 6) "a"
  str_tensor += std::string(
      "\x08\x01\x10\x08\x32\x01"
      "a",
      7);
  // Read (strings are a type the engine holds), and fed where floats are declared: a fail
  // that names the input.
  const fs::path s = make_case("test_str", "add_relu.onnx", {str_tensor}, {x});
  const CaseResult strings = run_conformance_case(s.string(), options_);
  EXPECT_EQ(strings.status, CaseStatus::Fail);
  EXPECT_NE(strings.reason.find("input 'x': expected float32, got string"), std::string::npos)
      << strings.reason;
}

TEST_F(ConformanceTest, Bfloat16DataStoredAsUint16IsReadAsDeclared) {
  // ONNX's test data keep bfloat16 tensors as uint16 (data_type 4) bit patterns.
  const uint16_t bits[3] = {0x3F80, 0xC040, 0x3EC0};  // 1, -3, 0.375
  const std::string x = tensor_pb(4, {3}, std::string(reinterpret_cast<const char*>(bits), 6));
  const std::string y = tensor_pb(1, {3}, raw_f32({1.0f, -3.0f, 0.375f}));
  const fs::path dir = make_case("test_bf16", "bf16_cast.onnx", {x}, {y});
  const CaseResult r = run_conformance_case(dir.string(), options_);
  EXPECT_EQ(r.status, CaseStatus::Pass) << r.reason;
}

TEST_F(ConformanceTest, ToleranceOptionsChooseTheComparison) {
  // relu(x + c) is exact, so an expected output off by 1e-3 at index 0 (where the true value
  // is 0) fails the default rule and passes a loose atol or a normwise 1e-3 (max |y| = 1.5).
  std::vector<float> off = relu_x_plus_c();
  off[0] += 1e-3f;
  const std::string x = tensor_pb(1, {2, 3}, raw_f32(kX));
  const fs::path dir =
      make_case("test_off", "add_relu.onnx", {x}, {tensor_pb(1, {2, 3}, raw_f32(off))});
  EXPECT_EQ(run_conformance_case(dir.string(), options_).status, CaseStatus::Fail);
  Tolerance loose;
  loose.atol = 2e-3;
  EXPECT_EQ(run_conformance_case(dir.string(), options_, loose).status, CaseStatus::Pass);
  Tolerance normwise;
  normwise.max_rel_err = 1e-3;
  EXPECT_EQ(run_conformance_case(dir.string(), options_, normwise).status, CaseStatus::Pass);
  normwise.max_rel_err = 1e-4;
  const CaseResult r = run_conformance_case(dir.string(), options_, normwise);
  EXPECT_EQ(r.status, CaseStatus::Fail);
  EXPECT_NE(r.reason.find("max |actual - expected|"), std::string::npos) << r.reason;

  const std::string expect = (root_ / "expect.txt").string();
  write_file(expect, "test_off\n");
  const std::string d = root_.string();
  EXPECT_EQ(conformance_command({d, "--expect", expect}), 1);
  EXPECT_EQ(conformance_command({d, "--expect", expect, "--atol", "2e-3"}), 0);
  EXPECT_EQ(conformance_command({d, "--expect", expect, "--max-rel-err", "1e-3"}), 0);
  EXPECT_EQ(conformance_command({d, "--expect", expect, "--max-rel-err", "1e-4"}), 1);
  EXPECT_THROW(conformance_command({d, "--max-rel-err", "1e-3", "--rtol", "1e-3"}), UsageError);
  EXPECT_THROW(conformance_command({d, "--rtol", "-1"}), UsageError);
}

TEST_F(ConformanceTest, ListsCaseDirectoriesSorted) {
  const std::string x = tensor_pb(1, {2, 3}, raw_f32(kX));
  make_case("test_b", "add_relu.onnx", {x}, {x});
  make_case("test_a", "add_relu.onnx", {x}, {x});
  fs::create_directories(root_ / "test_no_data");
  fs::copy_file(kFixtures + "add_relu.onnx", root_ / "test_no_data" / "model.onnx");
  fs::create_directories(root_ / "test_no_model" / "test_data_set_0");
  write_file(root_ / "stray_file", "x");
  EXPECT_EQ(list_conformance_cases(root_.string()), (std::vector<std::string>{"test_a", "test_b"}));
  EXPECT_THROW(list_conformance_cases((root_ / "stray_file").string()), Error);
}

TEST_F(ConformanceTest, ReadsExpectFiles) {
  write_file(root_ / "expect.txt", "# header\ntest_a\n  test_b  # why\n\n#test_c\ntest_d\r\n");
  EXPECT_EQ(read_expect_file((root_ / "expect.txt").string()),
            (std::set<std::string>{"test_a", "test_b", "test_d"}));
  EXPECT_THROW(read_expect_file((root_ / "missing.txt").string()), Error);
}

TEST_F(ConformanceTest, CommandFailsOnlyOnRegressions) {
  const std::string x = tensor_pb(1, {2, 3}, raw_f32(kX));
  const std::string y = tensor_pb(1, {2, 3}, raw_f32(relu_x_plus_c()));
  make_case("test_good", "add_relu.onnx", {x}, {y});
  make_case("test_wrong", "add_relu.onnx", {x}, {x});
  const std::string dir = root_.string();
  const std::string expect = (root_ / "expect.txt").string();
  const std::string written = (root_ / "written.txt").string();
  write_file(expect, "test_good\n");
  EXPECT_EQ(conformance_command({dir, "--backend", "reference", "--expect", expect}), 0);
  write_file(expect, "test_good\ntest_wrong\n");
  EXPECT_EQ(conformance_command({dir, "--expect", expect}), 1);
  EXPECT_EQ(conformance_command({dir, "--expect", expect, "--filter", "good"}), 0);
  EXPECT_EQ(conformance_command({dir, "--write-expect", written}), 0);
  EXPECT_EQ(read_expect_file(written), std::set<std::string>{"test_good"});
}

}  // namespace
}  // namespace ferrite
