// The MatMulNBits extern on every backend against products worked out by hand from its
// definition (runtime/kernels/reference/matmul_nbits.h), and its checks of the operands a
// plan (untrusted input) gives it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/plan/externs/matmul_nbits_call.h"
#include "runtime/backend.h"
#include "tests/unit/runtime/dense_operands.h"

namespace ferrite {
namespace {

using namespace extern_test;

struct NBitsCase {
  ExternCall call;
  std::vector<Operand> ins;
  Operand out;
};

// A [2, 3] @ W for K = 3, N = 2, 4-bit codes in one block of 16 (codes past K are junk and
// must be ignored): column 0 has codes 1, 2, 3, scale 0.5 and zero point 8 (W = -3.5, -3,
// -2.5); column 1 has codes 15, 15, 13, scale 2 and zero point 15 (W = 0, 0, -4).
NBitsCase hand_case(bool zero_points) {
  NBitsCase c;
  encode_extern(MatMulNBitsCall{4, 16}, &c.call);
  std::vector<uint8_t> codes(2 * 8, 0xAB);
  codes[0] = 0x21;
  codes[1] = 0xF3;
  codes[8] = 0xFF;
  codes[9] = 0xED;
  c.ins.push_back(operand<float>(DType::F32, {2, 3}, {1, 2, 3, -1, 0, 2}));
  c.ins.push_back(operand<uint8_t>(DType::U8, {2, 8}, codes));
  c.ins.push_back(operand<float>(DType::F32, {2, 1}, {0.5f, 2.0f}));
  if (zero_points) c.ins.push_back(operand<uint8_t>(DType::U8, {2, 1}, {8, 15}));
  c.out = garbage(DType::F32, {2, 2});
  for (const Operand& o : c.ins) c.call.inputs.push_back(o.ref);
  c.call.outputs = {c.out.ref};
  return c;
}

std::vector<float> run_on(const std::string& backend, NBitsCase& c) {
  std::vector<ExternBuffer> in;
  for (const Operand& o : c.ins) in.push_back(o.buffer());
  ExternBuffer out = c.out.buffer();
  make_backend(backend)->prepare_extern(c.call)->run(in.data(), &out);
  return c.out.values<float>();
}

TEST(MatMulNBits, EveryBackendDecodesTheCodesByTheDefinition) {
  for (const std::string& backend : backend_names()) {
    NBitsCase c = hand_case(true);
    // Row 0: 1 * W[0] + 2 * W[1] + 3 * W[2]; row 1: -1 * W[0] + 0 * W[1] + 2 * W[2].
    EXPECT_EQ(run_on(backend, c), (std::vector<float>{-17, -12, -1.5f, -8})) << backend;
    // Without zero points every one is 2^(bits - 1) = 8: column 1 is (15 - 8) * 2 = 14, 14,
    // (13 - 8) * 2 = 10.
    NBitsCase d = hand_case(false);
    EXPECT_EQ(run_on(backend, d), (std::vector<float>{-17, 72, -1.5f, 6})) << backend;
  }
}

TEST(MatMulNBits, RefusesOperandsThatDoNotFitTheCall) {
  for (const std::string& backend : backend_names()) {
    NBitsCase c = hand_case(true);
    c.call.inputs[1].strides = {1, 2};  // codes not row-major
    EXPECT_EQ(error_of([&] { run_on(backend, c); }),
              "MatMulNBits: B must be a row-major [2, 8], got shape [2,8] strides [1,2]")
        << backend;
    c = hand_case(true);
    c.call.inputs[2].shape = {2, 2};  // more scales than blocks
    c.call.inputs[2].strides = {2, 1};
    EXPECT_NE(
        error_of([&] { run_on(backend, c); }).find("MatMulNBits: S must be a row-major [2, 1]"),
        std::string::npos)
        << backend;
    c = hand_case(true);
    c.ins[3] = operand<int32_t>(DType::I32, {2, 1}, {8, 15});  // zero points of another type
    c.call.inputs[3] = c.ins[3].ref;
    EXPECT_EQ(error_of([&] { run_on(backend, c); }), "MatMulNBits: Z must be uint8, got int32")
        << backend;
    c = hand_case(true);
    c.call.ints["block_size"] = 2;  // K = 3 in 2 blocks would need [2, 16] codes
    EXPECT_NE(error_of([&] { run_on(backend, c); }), "no error") << backend;
  }
}

}  // namespace
}  // namespace ferrite
