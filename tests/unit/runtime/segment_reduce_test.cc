// The SegmentReduce extern called directly: values worked by hand (negative and int32
// indices, a row without edges, data, max), the portable and jit implementations against
// the reference, and the operand checks a hand-written or corrupted plan would hit.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "compiler/plan/ops.h"
#include "runtime/backend.h"
#include "tests/unit/runtime/dense_operands.h"

namespace ferrite {
namespace {

using namespace extern_test;

constexpr int64_t kSum = static_cast<int64_t>(ReduceKind::Sum);
constexpr int64_t kMax = static_cast<int64_t>(ReduceKind::Max);

// x: 3 nodes x 2 features; 4 edges src -> dst: 0 -> 1, 2 -> 1, -1 (= 2) -> 0, 1 -> -3 (= 0).
struct Call {
  Operand x = operand<float>(DType::F32, {3, 2}, {1, 2, 10, 20, 100, 200});
  Operand src = operand<int64_t>(DType::I64, {4}, {0, 2, -1, 1});
  Operand dst = operand<int32_t>(DType::I32, {4}, {1, 1, 0, -3});
  Operand w = operand<float>(DType::F32, {4}, {1, 0.5f, 2, -1});
  Operand data = operand<float>(DType::F32, {3, 2}, {5, 5, 5, 5, 5, 5});
  std::map<std::string, int64_t> ints{{"rows", 3}, {"weighted", 1}, {"reduction", kSum}};
  bool with_data = false;

  // Runs `backend`'s implementation (prepared as a session would) and returns out.
  std::vector<float> run(const std::string& backend) const {
    ExternCall call;
    call.op = ExternOp::SegmentReduce;
    call.ints = ints;
    call.inputs = {x.ref, src.ref, dst.ref};
    std::vector<ExternBuffer> in{x.buffer(), src.buffer(), dst.buffer()};
    if (ints.at("weighted")) {
      call.inputs.push_back(w.ref);
      in.push_back(w.buffer());
    }
    if (with_data) {
      call.inputs.push_back(data.ref);
      in.push_back(data.buffer());
    }
    Operand out = garbage(DType::F32, {3, 2});
    call.outputs = {out.ref};
    ExternBuffer o = out.buffer();
    make_backend(backend, BackendOptions{})->prepare_extern(call)->run(in.data(), &o);
    return out.values<float>();
  }
};

TEST(SegmentReduce, ValuesByHandOnEveryBackend) {
  for (const std::string& backend : backend_names()) {
    SCOPED_TRACE(backend);
    Call c;
    // Row 0: 2 * x[2] + -1 * x[1]; row 1: 1 * x[0] + 0.5 * x[2]; row 2: no edges.
    EXPECT_EQ(c.run(backend), (std::vector<float>{190, 380, 51, 102, 0, 0}));
    c.with_data = true;
    EXPECT_EQ(c.run(backend), (std::vector<float>{195, 385, 56, 107, 5, 5}));
    c.ints["reduction"] = kMax;
    c.ints["weighted"] = 0;
    // Row 0: max(5, x[2], x[1]); row 1: max(5, x[0], x[2]); row 2: data.
    EXPECT_EQ(c.run(backend), (std::vector<float>{100, 200, 100, 200, 5, 5}));
  }
}

TEST(SegmentReduce, BadOperandsAreErrors) {
  auto error = [](const std::function<void(Call&)>& spoil) {
    Call c;
    spoil(c);
    return error_of([&] { c.run("portable"); });
  };
  EXPECT_EQ(error([](Call& c) { c.ints.erase("rows"); }), "SegmentReduce: missing ints[\"rows\"]");
  EXPECT_EQ(error([](Call& c) { c.ints["reduction"] = 9; }), "SegmentReduce: invalid reduction 9");
  EXPECT_EQ(error([](Call& c) {
              c.dst = operand<int64_t>(DType::I64, {3}, {0, 1, 2});
            }),
            "SegmentReduce: dst has 3 edges, src has 4");
  EXPECT_EQ(error([](Call& c) {
              c.src = operand<float>(DType::F32, {4}, {0, 1, 2, 0});
            }),
            "SegmentReduce: src must be int32 or int64, got float32");
  EXPECT_EQ(error([](Call& c) {
              c.src = operand<int64_t>(DType::I64, {2, 2}, {0, 1, 2, 0});
            }),
            "SegmentReduce: src must be 1-D, got [2,2]");
  EXPECT_EQ(error([](Call& c) { c.ints["rows"] = 2; }),
            "SegmentReduce: out must have shape [2,2], got [3,2]");
  EXPECT_EQ(error([](Call& c) {
              c.src = operand<int64_t>(DType::I64, {4}, {0, 3, 0, 0});
            }),
            "SegmentReduce: src[1] = 3 is out of range [-3, 3)");
  EXPECT_EQ(error([](Call& c) {
              c.w = operand<float>(DType::F32, {3}, {1, 1, 1});
            }),
            "SegmentReduce: weight must have shape [4], got [3]");
}

}  // namespace
}  // namespace ferrite
