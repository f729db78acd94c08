// The scatter externs (ScatterElements, ScatterND) against values computed with numpy:
// every reduction, negative and duplicate indices, several dtypes, strided operands, and
// the operand and index checks. The portable implementations give the reference's bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "compiler/plan/error.h"
#include "compiler/plan/scalar_ops.h"
#include "runtime/kernels/portable/portable_backend.h"
#include "runtime/kernels/reference/reference_backend.h"
#include "tests/unit/runtime/dense_operands.h"
#include "tests/unit/runtime/extern_runs.h"

namespace ferrite {
namespace {

using namespace extern_test;

constexpr int64_t kSum = static_cast<int64_t>(ReduceKind::Sum);
constexpr int64_t kProd = static_cast<int64_t>(ReduceKind::Prod);
constexpr int64_t kMax = static_cast<int64_t>(ReduceKind::Max);
constexpr int64_t kMin = static_cast<int64_t>(ReduceKind::Min);

// Runs extern `op` on {data, indices, updates} and returns the output (data's shape).
Operand scatter(ExternOp op, const Operand& data, const Operand& indices, const Operand& updates,
                std::map<std::string, int64_t> ints) {
  Operand out = garbage(data.dtype, data.ref.shape);
  ExternCall call;
  call.op = op;
  call.ints = std::move(ints);
  call.inputs = {data.ref, indices.ref, updates.ref};
  call.outputs = {out.ref};
  ExternBuffer in[3] = {data.buffer(), indices.buffer(), updates.buffer()};
  // The portable implementation (a fast path for dense float32) must give the same bytes,
  // or the same error.
  Operand fast = garbage(data.dtype, data.ref.shape);
  ExternBuffer f = fast.buffer();
  std::string fast_error;
  try {
    run_backend_extern("portable", call, in, &f);
  } catch (const Error& e) {
    fast_error = e.what();
  }
  ExternBuffer o = out.buffer();
  try {
    run_reference_extern(call, in, &o);
  } catch (const Error& e) {
    EXPECT_EQ(fast_error, e.what());
    throw;
  }
  EXPECT_EQ(fast_error, "");
  EXPECT_EQ(fast.bytes, out.bytes) << extern_op_name(op) << ": portable differs from the reference";
  return out;
}

TEST(ScatterElements, OnnxExampleAxis0) {
  Operand data = operand<float>(DType::F32, {3, 3}, std::vector<float>(9, 0.f));
  Operand ind = operand<int64_t>(DType::I64, {2, 3}, {1, 0, 2, 0, 2, 1});
  Operand upd = operand<float>(DType::F32, {2, 3}, {1.f, 1.1f, 1.2f, 2.f, 2.1f, 2.2f});
  Operand out = scatter(ExternOp::ScatterElements, data, ind, upd, {{"axis", 0}});
  EXPECT_EQ(out.values<float>(),
            (std::vector<float>{2.f, 1.1f, 0.f, 1.f, 0.f, 2.2f, 0.f, 2.1f, 1.2f}));
}

TEST(ScatterElements, NegativeIndicesCountFromTheEnd) {
  Operand data = operand<float>(DType::F32, {1, 5}, {1, 2, 3, 4, 5});
  Operand ind = operand<int32_t>(DType::I32, {1, 2}, {1, -3});
  Operand upd = operand<float>(DType::F32, {1, 2}, {1.1f, 2.1f});
  Operand out = scatter(ExternOp::ScatterElements, data, ind, upd, {{"axis", 1}});
  EXPECT_EQ(out.values<float>(), (std::vector<float>{1.f, 1.1f, 2.1f, 4.f, 5.f}));
}

TEST(ScatterElements, DuplicateIndicesUnderEachReduction) {
  Operand data = operand<float>(DType::F32, {1, 5}, {1, 2, 3, 4, 5});
  Operand ind = operand<int64_t>(DType::I64, {1, 2}, {1, 1});
  Operand upd = operand<float>(DType::F32, {1, 2}, {1.1f, 2.1f});
  auto at1 = [&](std::map<std::string, int64_t> ints) {
    ints["axis"] = 1;
    return scatter(ExternOp::ScatterElements, data, ind, upd, ints).values<float>()[1];
  };
  EXPECT_EQ(at1({}), 2.1f);  // the last update wins
  EXPECT_EQ(at1({{"reduction", kSum}}), 2.f + 1.1f + 2.1f);
  EXPECT_EQ(at1({{"reduction", kProd}}), 2.f * 1.1f * 2.1f);
  EXPECT_EQ(at1({{"reduction", kMax}}), 2.1f);
  EXPECT_EQ(at1({{"reduction", kMin}}), 1.1f);
  // The other elements are data's.
  Operand out =
      scatter(ExternOp::ScatterElements, data, ind, upd, {{"axis", 1}, {"reduction", kSum}});
  EXPECT_EQ(out.values<float>()[0], 1.f);
  EXPECT_EQ(out.values<float>()[4], 5.f);
}

// Random float32 geometries (rank 1 to 3, every axis, updates smaller than data and longer
// along the axis, duplicate and negative indices, NaNs, strided views) under every
// reduction: the helper
// checks the portable fast path against the reference byte for byte.
TEST(ScatterElements, RandomFloatGeometriesMatchTheReference) {
  std::mt19937 rng(11);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int round = 0; round < 60; ++round) {
    const auto rank = static_cast<size_t>(uniform(1, 3));
    const auto axis = static_cast<size_t>(uniform(0, static_cast<int64_t>(rank) - 1));
    std::vector<int64_t> ds(rank), us(rank);
    for (size_t d = 0; d < rank; ++d) {
      ds[d] = uniform(1, 6);
      us[d] = d == axis ? uniform(1, 9) : uniform(1, ds[d]);
    }
    int64_t dn = 1, un = 1;
    for (size_t d = 0; d < rank; ++d) dn *= ds[d], un *= us[d];
    std::vector<float> dv(static_cast<size_t>(dn)), uv(static_cast<size_t>(un));
    auto value = [&] {  // few distinct values: ties, and zeros of both signs
      const float v = static_cast<float>(uniform(-4, 4)) / 2;
      return v == 0 && uniform(0, 1) ? -0.0f : v;
    };
    for (float& v : dv) v = value();
    for (float& v : uv) v = value();
    if (round % 4 == 1) uv[0] = std::nanf("");
    if (round % 4 == 2) dv.back() = std::nanf("");
    std::vector<int64_t> iv(static_cast<size_t>(un));
    for (int64_t& i : iv) i = uniform(-ds[axis], ds[axis] - 1);
    Operand data = operand<float>(DType::F32, ds, dv);
    Operand upd = operand<float>(DType::F32, us, uv);
    Operand ind =
        round % 2 ? operand<int64_t>(DType::I64, us, iv)
                  : operand<int32_t>(DType::I32, us, std::vector<int32_t>(iv.begin(), iv.end()));
    if (round % 3 == 0) {
      // Views: the index expanded along its last dim (stride 0, as torch's exported
      // scatter_add index) and the updates read backwards along theirs.
      ind.ref.strides.back() = 0;
      upd.ref.offset = us.back() - 1;
      upd.ref.strides.back() = -1;
    }
    for (int64_t red : {int64_t{-1}, kSum, kProd, kMax, kMin}) {
      SCOPED_TRACE(::testing::Message() << "round " << round << " reduction " << red);
      std::map<std::string, int64_t> ints{{"axis", static_cast<int64_t>(axis)}};
      if (red >= 0) ints["reduction"] = red;
      scatter(ExternOp::ScatterElements, data, ind, upd, ints);
    }
  }
}

// max / min of equal values keep the update, as scalar_ops' Max / Min do: visible on
// zeros of both signs.
TEST(ScatterElements, TiesOfSignedZerosTakeTheUpdate) {
  Operand data = operand<float>(DType::F32, {2}, {0.0f, -0.0f});
  Operand ind = operand<int64_t>(DType::I64, {2}, {0, 1});
  Operand upd = operand<float>(DType::F32, {2}, {-0.0f, 0.0f});
  for (int64_t red : {kMax, kMin}) {
    const std::vector<float> out =
        scatter(ExternOp::ScatterElements, data, ind, upd, {{"axis", 0}, {"reduction", red}})
            .values<float>();
    EXPECT_TRUE(std::signbit(out[0]));
    EXPECT_FALSE(std::signbit(out[1]));
  }
}

TEST(ScatterElements, Rank3Int64AddWithSmallerIndices) {
  // numpy: indices [1,2,3] along axis 1 of a [2,3,4] tensor, reduction add.
  std::vector<int64_t> d(24);
  for (int i = 0; i < 24; ++i) d[i] = i;
  Operand data = operand<int64_t>(DType::I64, {2, 3, 4}, d);
  Operand ind = operand<int64_t>(DType::I64, {1, 2, 3}, {2, 0, 1, 0, -1, 2});
  Operand upd = operand<int64_t>(DType::I64, {1, 2, 3}, {100, 200, 300, 400, 500, 600});
  Operand out =
      scatter(ExternOp::ScatterElements, data, ind, upd, {{"axis", 1}, {"reduction", kSum}});
  std::vector<int64_t> want = {400, 201, 2,  3,  4,  5,  306, 7,  108, 509, 610, 11,
                               12,  13,  14, 15, 16, 17, 18,  19, 20,  21,  22,  23};
  EXPECT_EQ(out.values<int64_t>(), want);
}

TEST(ScatterElements, NarrowTypes) {
  // uint8 add wraps; bool add is or, mul is and; float16 assignment copies the bits.
  Operand u8 = operand<uint8_t>(DType::U8, {3}, {250, 7, 9});
  Operand ind = operand<int64_t>(DType::I64, {2}, {0, 2});
  Operand u8_upd = operand<uint8_t>(DType::U8, {2}, {10, 1});
  EXPECT_EQ(scatter(ExternOp::ScatterElements, u8, ind, u8_upd, {{"axis", 0}, {"reduction", kSum}})
                .values<uint8_t>(),
            (std::vector<uint8_t>{4, 7, 10}));
  Operand b = operand<uint8_t>(DType::Bool, {3}, {0, 1, 1});
  Operand b_upd = operand<uint8_t>(DType::Bool, {2}, {1, 0});
  EXPECT_EQ(scatter(ExternOp::ScatterElements, b, ind, b_upd, {{"axis", 0}, {"reduction", kSum}})
                .values<uint8_t>(),
            (std::vector<uint8_t>{1, 1, 1}));
  EXPECT_EQ(scatter(ExternOp::ScatterElements, b, ind, b_upd, {{"axis", 0}, {"reduction", kProd}})
                .values<uint8_t>(),
            (std::vector<uint8_t>{0, 1, 0}));
  // A NaN with a payload and -0 keep their exact bits.
  Operand h = operand<uint16_t>(DType::F16, {3}, {0x3C00, 0x4000, 0x4200});
  Operand h_upd = operand<uint16_t>(DType::F16, {2}, {0x7E01, 0x8000});
  EXPECT_EQ(scatter(ExternOp::ScatterElements, h, ind, h_upd, {{"axis", 0}}).values<uint16_t>(),
            (std::vector<uint16_t>{0x7E01, 0x4000, 0x8000}));
  // float16 add: 1 + 2 = 3, 3 + 0.5 = 3.5.
  Operand h_add = operand<uint16_t>(DType::F16, {2}, {float_to_half(2.f), float_to_half(0.5f)});
  std::vector<uint16_t> got =
      scatter(ExternOp::ScatterElements, h, ind, h_add, {{"axis", 0}, {"reduction", kSum}})
          .values<uint16_t>();
  EXPECT_EQ(half_to_float(got[0]), 3.f);
  EXPECT_EQ(half_to_float(got[2]), 3.5f);
  // uint64 max compares as unsigned.
  Operand u64 = operand<uint64_t>(DType::U64, {3}, {1, 2, 3});
  Operand u64_upd = operand<uint64_t>(DType::U64, {2}, {~uint64_t{0}, 2});
  EXPECT_EQ(
      scatter(ExternOp::ScatterElements, u64, ind, u64_upd, {{"axis", 0}, {"reduction", kMax}})
          .values<uint64_t>(),
      (std::vector<uint64_t>{~uint64_t{0}, 2, 3}));
}

TEST(ScatterElements, StridedOperands) {
  // data is the transpose of a stored [[1,2,3],[4,5,6]]: [[1,4],[2,5],[3,6]].
  Operand data = operand<float>(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  data.ref.shape = {3, 2};
  data.ref.strides = {1, 3};
  // updates and indices broadcast along dim 0 (stride 0): two rows [[9, 8]], [[9, 8]].
  Operand upd = operand<float>(DType::F32, {1, 2}, {9, 8});
  upd.ref.shape = {2, 2};
  upd.ref.strides = {0, 1};
  Operand ind = operand<int64_t>(DType::I64, {1, 2}, {1, 0});
  ind.ref.shape = {2, 2};
  ind.ref.strides = {0, 1};
  Operand out = scatter(ExternOp::ScatterElements, data, ind, upd, {{"axis", 1}});
  EXPECT_EQ(out.values<float>(), (std::vector<float>{8, 9, 8, 9, 3, 6}));
}

TEST(ScatterElements, OutOfRangeIndexIsAnError) {
  Operand data = operand<float>(DType::F32, {1, 5}, {1, 2, 3, 4, 5});
  Operand upd = operand<float>(DType::F32, {1, 2}, {1, 2});
  for (int64_t bad : {5, -6}) {
    Operand ind = operand<int64_t>(DType::I64, {1, 2}, {0, bad});
    const std::string msg = error_of([&] {
      scatter(ExternOp::ScatterElements, data, ind, upd, {{"axis", 1}});
    });
    EXPECT_EQ(msg, "ScatterElements: index " + std::to_string(bad) +
                       " out of range [-5, 5) for data dim 1 at indices position [0,1]");
  }
}

TEST(ScatterElements, RejectsBadOperands) {
  Operand data = operand<float>(DType::F32, {2, 2}, {1, 2, 3, 4});
  Operand ind = operand<int64_t>(DType::I64, {2, 2}, {0, 1, 1, 0});
  Operand upd = operand<float>(DType::F32, {2, 2}, {5, 6, 7, 8});
  Operand upd64 = operand<double>(DType::F64, {2, 2}, {5, 6, 7, 8});
  Operand find = operand<float>(DType::F32, {2, 2}, {0, 1, 1, 0});
  Operand big = operand<float>(DType::F32, {3, 2}, {0, 0, 0, 0, 0, 0});
  Operand big_ind = operand<int64_t>(DType::I64, {3, 2}, {0, 0, 0, 0, 0, 0});
  auto msg = [&](const Operand& i, const Operand& u, std::map<std::string, int64_t> ints) {
    return error_of([&] { scatter(ExternOp::ScatterElements, data, i, u, ints); });
  };
  EXPECT_NE(msg(ind, upd64, {{"axis", 0}}).find("share one dtype"), std::string::npos);
  EXPECT_NE(msg(find, upd, {{"axis", 0}}).find("int32 or int64"), std::string::npos);
  EXPECT_NE(msg(ind, upd, {{"axis", 2}}).find("axis 2 out of range"), std::string::npos);
  EXPECT_NE(msg(ind, upd, {}).find("axis missing"), std::string::npos);
  EXPECT_NE(msg(ind, upd, {{"axis", 0}, {"reduction", 9}}).find("invalid reduction"),
            std::string::npos);
  // Past the enum's byte: the portable path once wrapped 2^62 to Sum and ran.
  EXPECT_NE(msg(ind, upd, {{"axis", 0}, {"reduction", int64_t{1} << 62}}).find("invalid reduction"),
            std::string::npos);
  EXPECT_NE(msg(big_ind, big, {{"axis", 1}}).find("exceed data"), std::string::npos);
  // A view reaching past its buffer.
  Operand short_ind = ind;
  short_ind.ref.strides = {3, 1};
  EXPECT_NE(msg(short_ind, upd, {{"axis", 0}}).find("outside its buffer"), std::string::npos);
  for (const std::string& m : {msg(ind, upd64, {{"axis", 0}}), msg(find, upd, {{"axis", 0}})})
    EXPECT_EQ(m.rfind("ScatterElements: ", 0), 0u) << m;
}

TEST(ScatterND, OnnxExampleAndReductions) {
  std::vector<float> d = {1, 2, 3, 4, 5, 6, 7, 8};
  Operand data = operand<float>(DType::F32, {8}, d);
  Operand ind = operand<int64_t>(DType::I64, {4, 1}, {4, 3, 1, 7});
  Operand upd = operand<float>(DType::F32, {4}, {9, 10, 11, 12});
  EXPECT_EQ(scatter(ExternOp::ScatterND, data, ind, upd, {}).values<float>(),
            (std::vector<float>{1, 11, 3, 10, 9, 6, 7, 12}));
  Operand dup = operand<int64_t>(DType::I64, {3, 1}, {0, 0, -1});
  Operand dup_upd = operand<float>(DType::F32, {3}, {5, 6, 7});
  EXPECT_EQ(scatter(ExternOp::ScatterND, data, dup, dup_upd, {}).values<float>(),
            (std::vector<float>{6, 2, 3, 4, 5, 6, 7, 7}));
  EXPECT_EQ(scatter(ExternOp::ScatterND, data, dup, dup_upd, {{"reduction", kSum}}).values<float>(),
            (std::vector<float>{12, 2, 3, 4, 5, 6, 7, 15}));
  EXPECT_EQ(
      scatter(ExternOp::ScatterND, data, dup, dup_upd, {{"reduction", kProd}}).values<float>(),
      (std::vector<float>{30, 2, 3, 4, 5, 6, 7, 56}));
}

TEST(ScatterND, PartialIndexTuplesReplaceSlices) {
  std::vector<float> d = {0, 1, 2, 3, 4, 5, 6, 7};
  Operand data = operand<float>(DType::F32, {2, 2, 2}, d);
  Operand ind = operand<int32_t>(DType::I32, {2, 2}, {0, 1, 1, 0});
  Operand upd = operand<float>(DType::F32, {2, 2}, {10, 11, 12, 13});
  EXPECT_EQ(scatter(ExternOp::ScatterND, data, ind, upd, {}).values<float>(),
            (std::vector<float>{0, 1, 10, 11, 12, 13, 6, 7}));
  // Full tuples with max / min, one index repeated.
  Operand full = operand<int64_t>(DType::I64, {3, 3}, {1, 1, 1, 0, 0, 0, 1, 1, 1});
  Operand vals = operand<float>(DType::F32, {3}, {-5, 50, 3});
  EXPECT_EQ(scatter(ExternOp::ScatterND, data, full, vals, {{"reduction", kMax}}).values<float>(),
            (std::vector<float>{50, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(scatter(ExternOp::ScatterND, data, full, vals, {{"reduction", kMin}}).values<float>(),
            (std::vector<float>{0, 1, 2, 3, 4, 5, 6, -5}));
}

TEST(ScatterND, OutOfRangeIndexAndBadShapesAreErrors) {
  Operand data = operand<float>(DType::F32, {2, 3}, {0, 1, 2, 3, 4, 5});
  Operand ind = operand<int64_t>(DType::I64, {1, 2}, {1, 3});
  Operand upd = operand<float>(DType::F32, {1}, {9});
  EXPECT_EQ(error_of([&] { scatter(ExternOp::ScatterND, data, ind, upd, {}); }),
            "ScatterND: index 3 out of range [-3, 3) for data dim 1 at indices position [0,1]");
  Operand wrong = operand<float>(DType::F32, {2}, {9, 9});
  EXPECT_NE(
      error_of([&] { scatter(ExternOp::ScatterND, data, ind, wrong, {}); }).find("must have shape"),
      std::string::npos);
  Operand deep = operand<int64_t>(DType::I64, {1, 3}, {0, 0, 0});
  EXPECT_NE(error_of([&] { scatter(ExternOp::ScatterND, data, deep, upd, {}); }).find("at most"),
            std::string::npos);
}

}  // namespace
}  // namespace ferrite
