// The extern manifest and the typed calls: every op in enumerator order, names that resolve
// back to their op, encode then decode giving the call back, and the decoders refusing what
// a plan (untrusted input) may hold instead.
#include <gtest/gtest.h>

#include <string>

#include "compiler/plan/error.h"
#include "compiler/plan/externs/conv_call.h"
#include "compiler/plan/externs/matmul_call.h"
#include "compiler/plan/externs/matmul_integer_call.h"
#include "compiler/plan/externs/matmul_nbits_call.h"
#include "compiler/plan/externs/scatter_call.h"
#include "compiler/plan/externs/segment_reduce_call.h"
#include "compiler/plan/externs/topk_call.h"
#include "compiler/plan/plan.h"

namespace ferrite {
namespace {

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ExternManifest, NamesEveryOpOnceInEnumeratorOrder) {
  for (size_t i = 0; i < kExternOpCount; ++i) {
    const ExternOpInfo& info = kExternOps[i];
    EXPECT_EQ(static_cast<size_t>(info.op), i) << info.name;
    EXPECT_EQ(find_extern_op(info.name), info.op) << info.name;
  }
  EXPECT_EQ(find_extern_op("Relu"), std::nullopt);
  EXPECT_EQ(find_extern_op(""), std::nullopt);
  EXPECT_STREQ(extern_op_name(static_cast<ExternOp>(kExternOpCount)), "(invalid extern op)");
}

TEST(ExternCalls, ConvRoundTripsAndChecksRanges) {
  const ConvCall c{true, 2, {1, 3}, {2, 1}, {0, -1}, {4, -2}};
  ExternCall call;
  encode_extern(c, &call);
  EXPECT_EQ(call.op, ExternOp::ConvTranspose);
  const ConvCall back = decode_conv_call(call, 2);
  EXPECT_EQ(back.transpose, true);
  EXPECT_EQ(back.group, 2);
  EXPECT_EQ(back.stride, c.stride);
  EXPECT_EQ(back.dilation, c.dilation);
  EXPECT_EQ(back.pad_begin, c.pad_begin);
  EXPECT_EQ(back.pad_end, c.pad_end);
  // Absent attributes take their defaults; a Conv's pads may not be negative.
  ExternCall bare;
  bare.op = ExternOp::Conv;
  const ConvCall d = decode_conv_call(bare, 1);
  EXPECT_EQ(d.group, 1);
  EXPECT_EQ(d.stride, std::vector<int64_t>{1});
  EXPECT_EQ(d.pad_end, std::vector<int64_t>{0});
  bare.ints["pad_end0"] = -1;
  EXPECT_EQ(error_of([&] { decode_conv_call(bare, 1); }),
            "Conv: pad_end0 = -1 is out of range [0, 1073741824)");
  call.ints["dilation1"] = 0;
  EXPECT_EQ(error_of([&] { decode_conv_call(call, 2); }),
            "ConvTranspose: dilation1 = 0 is out of range [1, 1073741824)");
  call.ints["group"] = int64_t{1} << 40;
  EXPECT_EQ(error_of([&] { decode_conv_call(call, 2); }),
            "ConvTranspose: group = 1099511627776 is out of range [1, 1073741824)");
  call.op = ExternOp::MatMul;
  EXPECT_EQ(error_of([&] { decode_conv_call(call, 2); }), "extern 'MatMul' is not a convolution");
}

TEST(ExternCalls, IntegerCallsRoundTripAndCheckTheirFlags) {
  ExternCall call;
  encode_extern(ConvIntegerCall{ConvCall{false, 4, {2}, {1}, {1}, {0}}, false, true}, &call);
  EXPECT_EQ(call.op, ExternOp::ConvInteger);
  const ConvIntegerCall back = decode_conv_integer_call(call, 1);
  EXPECT_EQ(back.conv.group, 4);
  EXPECT_EQ(back.conv.stride, std::vector<int64_t>{2});
  EXPECT_EQ(back.conv.pad_begin, std::vector<int64_t>{1});
  EXPECT_FALSE(back.x_signed);
  EXPECT_TRUE(back.w_signed);
  call.ints["pad_begin0"] = -1;  // a Conv's geometry: no negative pads
  EXPECT_EQ(error_of([&] { decode_conv_integer_call(call, 1); }),
            "ConvInteger: pad_begin0 = -1 is out of range [0, 1073741824)");
  call.ints["pad_begin0"] = 0;
  call.ints["x_signed"] = 2;
  EXPECT_EQ(error_of([&] { decode_conv_integer_call(call, 1); }),
            "ConvInteger: x_signed must be 0 or 1, got 2");
  call.op = ExternOp::Conv;
  EXPECT_EQ(error_of([&] { decode_conv_integer_call(call, 1); }),
            "extern 'Conv' is not a ConvInteger");

  ExternCall mm;
  encode_extern(MatMulIntegerCall{true, false}, &mm);
  EXPECT_EQ(mm.op, ExternOp::MatMulInteger);
  EXPECT_TRUE(decode_matmul_integer_call(mm).a_signed);
  EXPECT_FALSE(decode_matmul_integer_call(mm).b_signed);
  mm.ints["b_signed"] = -1;
  EXPECT_EQ(error_of([&] { decode_matmul_integer_call(mm); }),
            "MatMulInteger: b_signed must be 0 or 1, got -1");
}

TEST(ExternCalls, MatMulRoundTrips) {
  ExternCall call;
  encode_extern(MatMulCall{0.25}, &call);
  EXPECT_EQ(call.op, ExternOp::MatMul);
  EXPECT_EQ(decode_matmul_call(call).alpha, 0.25);
  call.floats.clear();
  EXPECT_EQ(decode_matmul_call(call).alpha, 1.0);
}

TEST(ExternCalls, MatMulNBitsRoundTripsAndChecksItsGeometry) {
  ExternCall call;
  encode_extern(MatMulNBitsCall{2, 64}, &call);
  EXPECT_EQ(call.op, ExternOp::MatMulNBits);
  const MatMulNBitsCall back = decode_matmul_nbits_call(call);
  EXPECT_EQ(back.bits, 2);
  EXPECT_EQ(back.block_size, 64);
  EXPECT_EQ(back.codes_per_byte(), 4);
  EXPECT_EQ(back.blob_bytes(), 16);
  call.ints["bits"] = 3;
  EXPECT_EQ(error_of([&] { decode_matmul_nbits_call(call); }),
            "MatMulNBits: bits must be 2, 4 or 8, got 3");
  call.ints["bits"] = 4;
  for (int64_t block : {int64_t{8}, int64_t{48}, int64_t{1} << 17}) {
    call.ints["block_size"] = block;
    EXPECT_EQ(error_of([&] { decode_matmul_nbits_call(call); }),
              "MatMulNBits: block_size must be a power of 2 in [16, 65536], got " +
                  std::to_string(block));
  }
  call.ints.erase("block_size");  // required: no default a plan could rely on
  EXPECT_NE(error_of([&] { decode_matmul_nbits_call(call); }), "(no error)");
  call.op = ExternOp::MatMul;
  EXPECT_EQ(error_of([&] { decode_matmul_nbits_call(call); }),
            "extern 'MatMul' is not a MatMulNBits");
}

TEST(ExternCalls, ScatterRoundTripsAndChecks) {
  ExternCall call;
  encode_extern(ScatterCall{false, 2, ReduceKind::Max}, &call);
  EXPECT_EQ(call.op, ExternOp::ScatterElements);
  ScatterCall back = decode_scatter_call(call, 3);
  EXPECT_EQ(back.axis, 2);
  EXPECT_EQ(back.reduction, ReduceKind::Max);
  EXPECT_EQ(error_of([&] { decode_scatter_call(call, 2); }),
            "ScatterElements: axis 2 out of range for data of rank 2");
  call.ints.erase("axis");
  EXPECT_EQ(error_of([&] { decode_scatter_call(call, 2); }),
            "ScatterElements: axis missing out of range for data of rank 2");
  encode_extern(ScatterCall{true, 0, std::nullopt}, &call);
  EXPECT_EQ(call.op, ExternOp::ScatterND);
  EXPECT_EQ(call.ints.size(), 0u);  // ScatterND has no axis; no reduction: none
  back = decode_scatter_call(call, 1);
  EXPECT_TRUE(back.nd);
  EXPECT_EQ(back.reduction, std::nullopt);
  for (int64_t bad : {int64_t{4}, int64_t{-1}, int64_t{1} << 62}) {
    call.ints["reduction"] = bad;  // ArgMax, and values that wrap in the enum's type
    EXPECT_EQ(error_of([&] { decode_scatter_call(call, 1); }),
              str_cat("ScatterND: invalid reduction ", bad));
  }
}

TEST(ExternCalls, SegmentReduceRoundTripsAndChecks) {
  ExternCall call;
  encode_extern(SegmentReduceCall{ReduceKind::Min, 7, true}, &call);
  EXPECT_EQ(call.op, ExternOp::SegmentReduce);
  const SegmentReduceCall back = decode_segment_reduce_call(call);
  EXPECT_EQ(back.reduction, ReduceKind::Min);
  EXPECT_EQ(back.rows, 7);
  EXPECT_TRUE(back.weighted);
  call.ints["reduction"] = static_cast<int64_t>(ReduceKind::Prod);
  EXPECT_EQ(error_of([&] { decode_segment_reduce_call(call); }),
            "SegmentReduce: invalid reduction 1");
  call.ints.erase("rows");
  EXPECT_EQ(error_of([&] { decode_segment_reduce_call(call); }),
            "SegmentReduce: missing ints[\"rows\"]");
}

TEST(ExternCalls, TopKRoundTripsAndChecks) {
  ExternCall call;
  encode_extern(TopKCall{1, 3, false}, &call);
  EXPECT_EQ(call.op, ExternOp::TopK);
  const TopKCall back = decode_topk_call(call, {2, 5});
  EXPECT_EQ(back.axis, 1);
  EXPECT_EQ(back.k, 3);
  EXPECT_FALSE(back.largest);
  EXPECT_EQ(error_of([&] {
              decode_topk_call(call, {2, 2});
            }),
            "TopK: k = 3 outside [0, 2] (X [2,2], axis 1)");
  EXPECT_EQ(error_of([&] { decode_topk_call(call, {4}); }),
            "TopK: axis 1 out of range for X of rank 1");
}

}  // namespace
}  // namespace ferrite
