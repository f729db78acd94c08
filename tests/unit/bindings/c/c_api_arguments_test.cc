// The C API (bindings/c/ferrite.h) given what a careless or hostile caller passes: repeated,
// unknown and NULL names, malformed input tensors, missing or small output buffers, and
// models whose names hold control bytes (quoted escaped in ferrite_last_error()). Values
// are checked against formulas computed here (the two_outputs fixture: r = relu(x), n = -x).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bindings/c/ferrite.h"
#include "tests/unit/compiler/frontend/onnx/proto_writer.h"
#include "tests/unit/support/source_dir.h"

namespace ferrite {
namespace {

const std::string kTwoOutputs = test::source_dir() + "/tests/cli/fixtures/two_outputs.onnx";

struct SessionPtr {
  FerriteSession* s = nullptr;
  ~SessionPtr() { ferrite_session_destroy(s); }
};

FerriteTensor f32_view(const std::vector<int64_t>& shape, const std::vector<float>& v) {
  return FerriteTensor{FERRITE_FLOAT32, shape.size(), shape.data(), v.data(),
                       v.size() * sizeof(float)};
}

FerriteOutput output_into(std::vector<float>* buffer) {
  FerriteOutput o{};
  o.data = buffer->data();
  o.capacity = buffer->size() * sizeof(float);
  return o;
}

class TwoOutputs : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(ferrite_session_create(kTwoOutputs.c_str(), nullptr, &p_.s), FERRITE_OK)
        << ferrite_last_error();
  }
  FerriteStatus run(size_t n_in, const char* const* in_names, const FerriteTensor* ins,
                    size_t n_out, const char* const* out_names, FerriteOutput* outs) {
    return ferrite_session_run(p_.s, n_in, in_names, ins, n_out, out_names, outs);
  }

  SessionPtr p_;
  const std::vector<float> x_ = {-1.5f, 0.0f, 2.0f, 0.25f, -3.0f, 4.0f};
  const std::vector<int64_t> shape_ = {2, 3};
  const std::vector<float> relu_ = {0, 0, 2, 0.25f, 0, 4};
  const std::vector<float> neg_ = {1.5f, -0.0f, -2, -0.25f, 3, -4};
};

TEST_F(TwoOutputs, RepeatedOutputNamesEachGetTheValue) {
  const FerriteTensor in = f32_view(shape_, x_);
  const char* in_name = "x";
  const char* names[4] = {"n", "r", "n", "n"};
  std::vector<std::vector<float>> bufs(4, std::vector<float>(6, 99.0f));
  FerriteOutput outs[4];
  for (int i = 0; i < 4; ++i) outs[i] = output_into(&bufs[i]);
  ASSERT_EQ(run(1, &in_name, &in, 4, names, outs), FERRITE_OK) << ferrite_last_error();
  EXPECT_EQ(bufs[0], neg_);
  EXPECT_EQ(bufs[1], relu_);
  EXPECT_EQ(bufs[2], neg_);
  EXPECT_EQ(bufs[3], neg_);
  for (const FerriteOutput& o : outs) {
    EXPECT_EQ(o.rank, 2u);
    EXPECT_EQ(o.shape[0], 2);
    EXPECT_EQ(o.nbytes, 24u);
  }
}

TEST_F(TwoOutputs, UnknownDuplicateAndNullNamesAreErrors) {
  const FerriteTensor ins[2] = {f32_view(shape_, x_), f32_view(shape_, x_)};
  const char* in_names[2] = {"x", "x"};
  std::vector<float> y(6, 7.0f);
  FerriteOutput out = output_into(&y);
  const char* unknown = "q";
  EXPECT_EQ(run(1, in_names, ins, 1, &unknown, &out), FERRITE_RUN_ERROR);
  EXPECT_STREQ(ferrite_last_error(), "unknown output 'q' (model outputs: r, n)");
  EXPECT_EQ(run(2, in_names, ins, 0, &unknown, nullptr), FERRITE_RUN_ERROR);
  EXPECT_STREQ(ferrite_last_error(), "input 'x' given twice");
  const char* null_name = nullptr;
  EXPECT_EQ(run(1, &null_name, ins, 0, &unknown, nullptr), FERRITE_INVALID_ARGUMENT);
  EXPECT_STREQ(ferrite_last_error(), "an input name is NULL");
  EXPECT_EQ(run(1, in_names, ins, 1, &null_name, &out), FERRITE_INVALID_ARGUMENT);
  EXPECT_STREQ(ferrite_last_error(), "an output name is NULL");
  EXPECT_EQ(run(1, in_names, ins, 1, &unknown, nullptr), FERRITE_INVALID_ARGUMENT);
  EXPECT_STREQ(ferrite_last_error(), "outputs is NULL");
  EXPECT_EQ(run(0, nullptr, nullptr, 0, nullptr, nullptr), FERRITE_INVALID_ARGUMENT);
  EXPECT_STREQ(ferrite_last_error(), "output_names is NULL, so output_count must be 2, got 0");
  const char* r = "r";
  EXPECT_EQ(run(0, nullptr, nullptr, 1, &r, &out), FERRITE_RUN_ERROR);
  EXPECT_STREQ(ferrite_last_error(), "missing input 'x' (expected float32[N,3])");
  EXPECT_EQ(y, std::vector<float>(6, 7.0f));  // nothing written by a failed run
}

TEST_F(TwoOutputs, MalformedInputTensorsAreInvalidArguments) {
  const char* name = "x";
  const int64_t negative[2] = {2, -3};
  const int64_t huge[2] = {int64_t{1} << 40, int64_t{1} << 40};
  const std::vector<int64_t> deep(5000, 1);
  const int64_t wraps[1] = {(int64_t{1} << 32) + 6};  // 6 elements, were size_t 32 bits
  struct Case {
    FerriteTensor t;
    const char* message;
  } cases[] = {
      {{FERRITE_FLOAT32, 2, nullptr, x_.data(), 24}, "input 'x': shape is NULL"},
      {{FERRITE_FLOAT32, 2, negative, x_.data(), 24}, "input 'x': negative dimension -3"},
      {{FERRITE_FLOAT32, 2, huge, x_.data(), 24}, "input 'x': shape too large"},
      {{FERRITE_FLOAT32, 1, wraps, x_.data(), 24},
       sizeof(size_t) == 4 ? "input 'x': shape too large"
                           : "input 'x': nbytes is 24, but its shape and dtype make 4294967302 "
                             "elements of 4 bytes"},
      {{FERRITE_FLOAT32, deep.size(), deep.data(), x_.data(), 4},
       "input 'x': rank 5000 is more than 1024"},
      {{FERRITE_FLOAT32, 2, shape_.data(), x_.data(), 25},
       "input 'x': nbytes is 25, but its shape and dtype make 6 elements of 4 bytes"},
      {{FERRITE_FLOAT32, 2, shape_.data(), nullptr, 24}, "input 'x': data is NULL"},
      {{static_cast<FerriteDType>(99), 2, shape_.data(), x_.data(), 24},
       "input 'x': unknown or unsupported dtype code 99"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(run(1, &name, &c.t, 0, &name, nullptr), FERRITE_INVALID_ARGUMENT) << c.message;
    EXPECT_STREQ(ferrite_last_error(), c.message);
  }
}

TEST_F(TwoOutputs, MissingOrSmallOutputBuffersReportTheSizes) {
  const FerriteTensor in = f32_view(shape_, x_);
  const char* in_name = "x";
  FerriteOutput outs[2] = {};  // no buffers at all: ask for the sizes
  ASSERT_EQ(run(1, &in_name, &in, 2, nullptr, outs), FERRITE_BUFFER_TOO_SMALL);
  EXPECT_STREQ(ferrite_last_error(),
               "output buffers too small or NULL: 'r' 24 bytes (capacity 0), 'n' 24 bytes "
               "(capacity 0)");
  std::vector<float> r(outs[0].nbytes / sizeof(float)), n(7, 5.0f);  // n: larger than needed
  outs[0] = output_into(&r);
  outs[1] = output_into(&n);
  ASSERT_EQ(run(1, &in_name, &in, 2, nullptr, outs), FERRITE_OK) << ferrite_last_error();
  EXPECT_EQ(r, relu_);
  EXPECT_EQ(std::vector<float>(n.begin(), n.begin() + 6), neg_);
  EXPECT_EQ(n[6], 5.0f);
  EXPECT_EQ(outs[1].nbytes, 24u);
}

// A Relu model whose input and output names are `in` and `out`, [3] floats.
std::string relu_model(const std::string& in, const std::string& out) {
  using testing::Pb;
  auto value = [](const std::string& name) {
    Pb dim, shape, tensor, type;
    dim.varint(1, 3);
    shape.msg(1, dim);
    tensor.varint(1, 1).msg(2, shape);
    type.msg(1, tensor);
    return Pb().str(1, name).msg(2, type);
  };
  Pb node;
  node.str(1, in).str(2, out).str(3, "relu").str(4, "Relu");
  Pb graph;
  graph.msg(1, node).str(2, "g").msg(11, value(in)).msg(12, value(out));
  Pb opset;
  opset.str(1, "").varint(2, 13);
  return Pb().varint(1, 8).msg(7, graph).msg(8, opset).bytes();
}

TEST(CApiMessages, NamesWithControlBytesAreQuotedEscaped) {
  const std::string evil = "x\x1b[2J\nerror: forged\xff";
  const std::string model = relu_model(evil, "y\x07");
  SessionPtr p;
  ASSERT_EQ(ferrite_session_create_from_bytes(model.data(), model.size(), nullptr, &p.s),
            FERRITE_OK)
      << ferrite_last_error();
  FerriteTensorInfo info{};
  ASSERT_EQ(ferrite_session_input_info(p.s, 0, &info), FERRITE_OK);
  EXPECT_EQ(info.name, evil);  // the name itself, as data, is unchanged
  const std::vector<float> x = {1, -2};
  const std::vector<int64_t> shape = {2};
  const FerriteTensor in = f32_view(shape, x);
  const char* name = evil.c_str();
  EXPECT_EQ(ferrite_session_run(p.s, 1, &name, &in, 0, &name, nullptr), FERRITE_RUN_ERROR);
  EXPECT_STREQ(ferrite_last_error(),
               "input 'x\\x1b[2J\\nerror: forged\\xff': expected shape [3], got [2]");
  const char* out_name = "y";
  EXPECT_EQ(ferrite_session_run(p.s, 1, &name, &in, 1, &out_name, nullptr),
            FERRITE_INVALID_ARGUMENT);
  std::vector<float> y(3);
  FerriteOutput out = output_into(&y);
  EXPECT_EQ(ferrite_session_run(p.s, 1, &name, &in, 1, &out_name, &out), FERRITE_RUN_ERROR);
  EXPECT_STREQ(ferrite_last_error(), "unknown output 'y' (model outputs: y\\x07)");
}

}  // namespace
}  // namespace ferrite
