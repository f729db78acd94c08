// The Conv and ConvTranspose externs: the reference against values worked out by hand and
// against a naive computation written a different way (conv_cases.h); the portable backend
// against the reference over random shapes (1-D to 3-D, groups, depthwise, strides,
// dilations, asymmetric and negative pads, bias, batch > 1), strided operands, on every SIMD
// target; and the operand checks. The portable paths one by one: conv_paths_test.cc.
#include <gtest/gtest.h>

#include "compiler/plan/error.h"
#include "tests/unit/runtime/conv_cases.h"

namespace ferrite {
namespace {

using namespace conv_cases;  // NOLINT: the shared cases of these tests

TEST(Conv, ReferenceMatchesHandComputedValues) {
  // 1-D: x = 1..5, taps [1, 0, -1], pads 1/1, stride 2, bias 0.5:
  // o0 = 0 - 2, o1 = 2 - 4, o2 = 4 - 0 (each plus 0.5).
  Geometry g1 = conv1d(1, 1, 1, 5, 3, 2, 1, 1);
  g1.bias = true;
  // 2-D, ONNX's basic case: 5x5 input 0..24, 3x3 ones, pads 1: sums of 3x3 neighbourhoods.
  Geometry g2 = conv2d(1, 1, 1, 1, {5, 5}, 3, 1, 1, 1);
  g2.bias = false;
  std::vector<float> x2(25), ones(9, 1.0f);
  for (int i = 0; i < 25; ++i) x2[i] = static_cast<float>(i);
  // Groups: channels (1, -1) and (4, 5), 1x1 taps 2 and 3, group 2: y = (2 x0, 3 x1).
  Geometry g3 = conv1d(2, 2, 2, 2, 1, 1, 0, 0);
  // ConvTranspose 1-D: x = [1, 2, 3], taps [1, 2, 3] to one output channel, stride 2: the
  // full output is [1, 2, 3+2, 4, 6+3, 6, 9]; pad_begin 1 drops its first element and
  // pad_end -1 (output_padding 1) appends one that only the bias (0.25) reaches.
  Geometry g4 = conv1d(1, 1, 1, 3, 3, 2, 1, -1);
  g4.transpose = true;
  g4.bias = true;
  struct Case {
    Geometry g;
    std::vector<float> x, w, b, want;
  } cases[] = {
      {g1, {1, 2, 3, 4, 5}, {1, 0, -1}, {0.5f}, {-1.5f, -1.5f, 4.5f}},
      {g2, x2, ones, {}, {12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                          117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84}},
      {g3, {1, -1, 4, 5}, {2, 3}, {}, {2, -2, 12, 15}},
      {g4, {1, 2, 3}, {1, 2, 3}, {0.25f}, {2.25f, 5.25f, 4.25f, 9.25f, 6.25f, 9.25f, 0.25f}},
  };
  for (Case& c : cases) {
    SCOPED_TRACE(c.g.text());
    Operand x = dense(c.g.x_dims(), c.x), w = dense(c.g.w_dims(), c.w), b = dense({c.g.m}, c.b);
    Operand y = dense(c.g.y_dims(), std::vector<float>(c.want.size(), NAN));
    std::vector<Operand*> ins{&x, &w};
    if (c.g.bias) ins.push_back(&b);
    const ExternCall call = make_call(c.g, ins, y);
    std::vector<ExternBuffer> bufs;
    for (Operand* o : ins) bufs.push_back(o->buffer());
    for (const char* backend : {"reference", "portable"}) {
      ExternBuffer out = y.buffer();
      make_backend(backend)->prepare_extern(call)->run(bufs.data(), &out);
      for (size_t i = 0; i < c.want.size(); ++i)
        EXPECT_FLOAT_EQ(y.data[i], c.want[i]) << backend << " at " << i;
    }
  }
}

TEST(Conv, RandomShapesMatchNaiveAndReference) {
  std::mt19937 rng(42);
  for (int i = 0; i < 120; ++i) {
    const Geometry g = random_geometry(rng, i % 2 == 1);
    check_geometry(g, rng, true, i % 5 == 0);
    if (HasFatalFailure()) return;
  }
}

TEST(Conv, RejectsBadOperands) {
  std::mt19937 rng(3);
  Geometry g = conv2d(1, 4, 6, 2, {5, 5}, 3, 1, 1, 1);
  Operand x = random_dense(g.x_dims(), rng), w = random_dense(g.w_dims(), rng);
  Operand y = dense(g.y_dims(), std::vector<float>(product(g.y_dims())));
  Operand b = random_dense({g.m}, rng);
  ExternBuffer in[3] = {x.buffer(), w.buffer(), b.buffer()};
  ExternBuffer out = y.buffer();
  auto expect_error = [&](const ExternCall& call, const ExternBuffer* ins, const char* start) {
    for (const char* backend : {"reference", "portable"}) {
      SCOPED_TRACE(backend);
      try {
        make_backend(backend)->prepare_extern(call)->run(ins, &out);
        ADD_FAILURE() << "no error";
      } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()).rfind(start, 0), 0u) << e.what();
      }
    }
  };
  const ExternCall ok = make_call(g, {&x, &w, &b}, y);
  ExternCall bad_y = ok;
  bad_y.outputs[0].shape[3] = 4;  // the attributes give 5
  expect_error(bad_y, in, "Conv: Y[1,6,5,4] has 4 elements in spatial dim 1");
  ExternCall bad_group = ok;
  bad_group.ints["group"] = 3;  // 4 channels
  expect_error(bad_group, in, "Conv: X[1,4,5,5] and W[6,2,3,3] do not agree");
  ExternCall bad_rank = ok;
  bad_rank.inputs[1].shape.pop_back();
  bad_rank.inputs[1].strides.pop_back();
  expect_error(bad_rank, in, "Conv: W has rank 3");
  ExternCall bad_bias = ok;
  bad_bias.inputs[2].shape[0] = 5;
  expect_error(bad_bias, in, "Conv: B[5] needs 6 elements");
  ExternCall bad_stride = ok;
  bad_stride.ints["stride0"] = 0;
  expect_error(bad_stride, in, "Conv: stride0 = 0 is out of range");
  ExternCall transpose = ok;
  transpose.op = ExternOp::ConvTranspose;  // W is [M, C/group, ...], not [C, M/group, ...]
  expect_error(transpose, in, "ConvTranspose: X[1,4,5,5] and W[6,2,3,3] do not agree");
  ExternBuffer f64[3] = {x.buffer(), w.buffer(), b.buffer()};
  f64[0].dtype = DType::F64;
  expect_error(ok, f64, "Conv: dtype float64 unsupported");
  ExternBuffer small[3] = {x.buffer(), w.buffer(), b.buffer()};
  small[1].elements -= 1;
  expect_error(ok, small, "Conv: W reaches elements [0, 107] outside its buffer");
  // The portable backend checks the shapes when it prepares (it sizes its scratch then).
  EXPECT_THROW(make_backend("portable")->prepare_extern(bad_group), Error);
}

}  // namespace
}  // namespace ferrite
