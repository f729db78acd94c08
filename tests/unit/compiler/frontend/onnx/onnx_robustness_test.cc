// Malformed input never crashes the importer: every truncation of real models, random byte
// flips (fixed seed), and the whole ONNX node suite (which must import except for features
// Ferrite rejects with UnsupportedError). These run under ASan/UBSan in CI.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <random>

#include "compiler/frontend/onnx/onnx_import.h"
#include "compiler/plan/error.h"

namespace ferrite {
namespace {

namespace fs = std::filesystem;
const std::string kNode = "/usr/share/libonnx-testdata/data/node";

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::vector<uint8_t> bytes;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return bytes;
  uint8_t buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
  std::fclose(f);
  return bytes;
}

// Either a valid graph or ferrite::Error; anything else (crash, other exception) fails.
bool imports(const std::vector<uint8_t>& bytes, size_t size) {
  try {
    auto g = import_onnx(bytes.data(), size, "");
    g->validate();
    graph_to_string(*g);  // the printer must cope with whatever was accepted
    return true;
  } catch (const Error&) {
    return false;
  }
}

TEST(OnnxRobustness, EveryTruncation) {
  for (const char* name : {"test_loop11", "test_if", "test_conv_with_strides_padding"}) {
    std::vector<uint8_t> bytes = read_bytes(kNode + "/" + name + "/model.onnx");
    if (bytes.empty()) GTEST_SKIP() << "libonnx-testdata not installed";
    int ok = 0;
    for (size_t len = 0; len < bytes.size(); ++len) ok += imports(bytes, len);
    EXPECT_TRUE(imports(bytes, bytes.size())) << name;
    EXPECT_LT(ok, static_cast<int>(bytes.size())) << name;  // most prefixes are rejected
  }
}

TEST(OnnxRobustness, RandomByteFlips) {
  std::vector<uint8_t> original = read_bytes(kNode + "/test_loop11/model.onnx");
  if (original.empty()) GTEST_SKIP() << "libonnx-testdata not installed";
  constexpr int kTrials = 2000;
  std::mt19937 rng(12345);
  int accepted = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    std::vector<uint8_t> bytes = original;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) {
      size_t pos = rng() % bytes.size();
      // Half the flips write "interesting" bytes: continuation bits, huge lengths, zero.
      static const uint8_t kSpecial[] = {0xff, 0x80, 0x7f, 0x00, 0x01};
      bytes[pos] = (rng() & 1) ? static_cast<uint8_t>(rng()) : kSpecial[rng() % 5];
    }
    accepted += imports(bytes, bytes.size());
  }
  // Some flips land in payload bytes (names, tensor data) and still form a valid model.
  EXPECT_GT(accepted, 0);
  EXPECT_LT(accepted, kTrials);
}

TEST(OnnxRobustness, WholeNodeSuiteImports) {
  if (!fs::exists(kNode)) GTEST_SKIP() << "libonnx-testdata not installed";
  int ok = 0, unsupported = 0, failed = 0, pb_ok = 0, pb_rejected = 0;
  std::string failures;
  for (const auto& entry : fs::directory_iterator(kNode)) {
    std::string dir = entry.path().string();
    try {
      auto g = import_onnx_file(dir + "/model.onnx");
      ok += !g->nodes.empty() || !g->outputs.empty();
    } catch (const UnsupportedError&) {
      ++unsupported;
    } catch (const Error& e) {
      ++failed;
      failures += dir + ": " + e.what() + "\n";
    }
    // Test data files: TensorProtos, except for sequence/optional cases (other messages),
    // which must then be rejected cleanly.
    for (const auto& f : fs::directory_iterator(dir)) {
      if (!f.is_directory()) continue;
      for (const auto& pb : fs::directory_iterator(f.path())) {
        std::vector<uint8_t> bytes = read_bytes(pb.path().string());
        try {
          parse_tensor_proto(bytes.data(), bytes.size());
          ++pb_ok;
        } catch (const Error&) {
          ++pb_rejected;
        }
      }
    }
  }
  std::printf(
      "node suite: %d imported, %d unsupported, %d failed; test data: %d tensors parsed, "
      "%d rejected\n",
      ok, unsupported, failed, pb_ok, pb_rejected);
  EXPECT_EQ(failed, 0) << failures;
  EXPECT_GE(ok, 900);
  EXPECT_GE(pb_ok, 1800);
}

}  // namespace
}  // namespace ferrite
