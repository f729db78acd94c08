// Lowerings against the inputs fuzzing found (issue 25): ranks the op's spec forbids,
// attributes and constant inputs whose sizes overflow int64, and invalid models that ran.
// Each is an Error naming the node; where a result exists (extreme but valid steps, k,
// Range bounds) it is checked against numpy's.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/plan/error.h"
#include "tests/unit/compiler/lower/run_graph.h"

namespace ferrite {
namespace {

using namespace lower_test;
using Attrs = std::map<std::string, Attribute>;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// Compiles `g` for its declared input types; expects an Error that names the node 'n' and
// holds `what`.
void expect_error(const Graph& g, const std::string& what) {
  std::vector<TensorType> types;
  for (const Value* v : g.inputs) types.push_back(v->type);
  try {
    compile_graph(g, types, {});
    ADD_FAILURE() << "no error; expected: " << what;
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'n'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

// A graph of one node named 'n' over `ins`, with one output.
std::unique_ptr<Graph> one_node(GraphBuilder& b, const std::string& op, std::vector<Value*> ins,
                                Attrs attrs = {}, int64_t opset = 17) {
  b.output(b.op(op, std::move(ins), std::move(attrs)));
  b.last_node()->name = "n";
  auto g = b.finish();
  g->opsets[""] = opset;
  return g;
}

std::unique_ptr<Graph> loss_graph(const std::string& op, std::vector<int64_t> target,
                                  std::vector<int64_t> weight) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {3, 5});
  Value* t = b.input("t", DType::I64, std::move(target));
  Value* w = b.input("w", DType::F32, std::move(weight));
  return one_node(b, op, {x, t, w}, {{"reduction", attr_s("mean")}}, 13);
}

TEST(ShapeChecks, LossWeightAndTargetShapesFollowTheSpec) {
  for (const char* op : {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"}) {
    SCOPED_TRACE(op);
    expect_error(*loss_graph(op, {3}, {}), "weight float32[] must have shape [5]");
    expect_error(*loss_graph(op, {3}, {6}), "weight float32[6] must have shape [5]");
    expect_error(*loss_graph(op, {3}, {1, 5}), "weight float32[1,5] must have shape [5]");
    expect_error(*loss_graph(op, {4}, {5}), "target int64[4] must have shape [3]");
  }
}

TEST(ShapeChecks, WeightedLossMatchesTheFormula) {
  // mean reduction: -sum(w[t[i]] * x[i, t[i]]) / sum(w[t[i]]) over the rows whose target
  // is not ignore_index (any int64, INT64_MAX included).
  const std::vector<float> xs = random_floats(12, 7), ws = {0.5f, 2.f, 1.5f, 3.f};
  const int64_t ts[3] = {3, 1, 2};
  for (int64_t ignore : {int64_t{1}, kMax}) {
    GraphBuilder b;
    Value* x = b.input("x", DType::F32, {3, 4});
    Value* t = b.input("t", DType::I64, {3});
    Value* w = b.input("w", DType::F32, {4});
    auto g =
        one_node(b, "NegativeLogLikelihoodLoss", {x, t, w}, {{"ignore_index", attr_i(ignore)}}, 13);
    Compiled r = run_graph(*g,
                           tensors(Tensor(DType::F32, {3, 4}, xs.data()),
                                   Tensor(DType::I64, {3}, ts), Tensor(DType::F32, {4}, ws.data())),
                           "reference");
    float num = -(ws[3] * xs[0 * 4 + 3] + ws[2] * xs[2 * 4 + 2]), den = ws[3] + ws[2];
    if (ignore != 1) num -= ws[1] * xs[1 * 4 + 1], den += ws[1];
    expect_near(r.outputs[0], {num / den});
  }
}

TEST(ShapeChecks, BlocksizeProductsAreChecked) {
  for (const char* op : {"DepthToSpace", "SpaceToDepth"}) {
    for (int64_t bs : {int64_t{1} << 32, int64_t{1} << 62, kMax}) {
      GraphBuilder b;
      Value* x = b.input("x", DType::F32, {1, 8, 2, 2});
      expect_error(*one_node(b, op, {x}, {{"blocksize", attr_i(bs)}}), "blocksize^2 overflows");
    }
  }
}

TEST(ShapeChecks, TileAndExpandSizes) {
  {
    GraphBuilder b;
    Value* x = b.input("x", DType::F32, {2, 3});
    expect_error(*one_node(b, "Tile", {x, b.constant_i64({2}, {kMax, 1})}),
                 "the tiled dim overflows int64 (2 * 9223372036854775807)");
  }
  {
    GraphBuilder b;
    Value* x = b.input("x", DType::F32, {1, 3});
    expect_error(*one_node(b, "Tile", {x, b.constant_i64({2}, {int64_t{1} << 60, 1})}),
                 "has more than 2^58 elements");
  }
  {
    GraphBuilder b;
    Value* x = b.input("x", DType::F32, {1, 3});
    expect_error(*one_node(b, "Expand", {x, b.constant_i64({2}, {-1, 3})}), "negative dim -1");
  }
}

TEST(ShapeChecks, ReshapeAndConstantOfShape) {
  {
    GraphBuilder b;
    Value* x = b.input("x", DType::F32, {2, 2});
    expect_error(*one_node(b, "Reshape", {x, b.constant_i64({3}, {int64_t{1} << 40, 1 << 30, -1})}),
                 "the product of shape's dims overflows int64");
  }
  {
    GraphBuilder b;
    Value* x = b.input("x", DType::F32, {0, 2});
    expect_error(
        *one_node(b, "Reshape", {x, b.constant_i64({2}, {0, -1})}, {{"allowzero", attr_i(1)}}),
        "both 0 and -1");
  }
  {
    GraphBuilder b;
    expect_error(
        *one_node(b, "ConstantOfShape", {b.constant_i64({2}, {int64_t{1} << 40, 1 << 30})}),
        "overflows int64");
  }
  // Shape inputs are 1-D: const_ints would flatten any other rank.
  {
    GraphBuilder b;
    expect_error(*one_node(b, "ConstantOfShape", {b.constant_i64({}, {3})}),
                 "must be 1-D, got rank 0");
  }
  {
    GraphBuilder b;
    Value* x = b.input("x", DType::F32, {2, 2});
    expect_error(*one_node(b, "Reshape", {x, b.constant_i64({1, 2}, {4, 1})}),
                 "must be 1-D, got rank 2");
  }
}

// Range's inputs as constants of one type (int64 or float32).
std::unique_ptr<Graph> range_graph(GraphBuilder& b, Value* start, Value* limit, Value* delta) {
  return one_node(b, "Range", {start, limit, delta});
}

TEST(ShapeChecks, RangeCountsAndTypes) {
  {
    GraphBuilder b;
    const int32_t one = 1;
    Value* s = b.constant("s", DType::I32, {}, &one);
    expect_error(*range_graph(b, s, b.constant_i64({}, {10}), b.constant_i64({}, {1})),
                 "must have one type, got int32, int64 and int64");
  }
  {
    GraphBuilder b;
    expect_error(*range_graph(b, b.constant_f32({}, {0}), b.constant_f32({}, {1}),
                              b.constant_f32({}, {1e-30f})),
                 "elements is too large");
  }
  // Exact past 2^53; np.arange(-2**63, 2**63 - 1, 2**62) = [-2^63, -2^62, 0, 2^62].
  const std::vector<std::vector<int64_t>> cases = {
      {(int64_t{1} << 60) + 1, (int64_t{1} << 60) + 10, 3},
      {kMin, kMax, int64_t{1} << 62},
      {kMax, kMin, kMin}};
  const std::vector<std::vector<int64_t>> want = {
      {(int64_t{1} << 60) + 1, (int64_t{1} << 60) + 4, (int64_t{1} << 60) + 7},
      {kMin, -(int64_t{1} << 62), 0, int64_t{1} << 62},
      {kMax, -1}};
  for (size_t i = 0; i < cases.size(); ++i) {
    GraphBuilder b;
    auto g = range_graph(b, b.constant_i64({}, {cases[i][0]}), b.constant_i64({}, {cases[i][1]}),
                         b.constant_i64({}, {cases[i][2]}));
    for (const char* backend : {"reference", "portable"}) {
      Compiled r = run_graph(*g, {}, backend);
      EXPECT_EQ(values_of<int64_t>(r.outputs[0]), want[i]) << "case " << i << " " << backend;
    }
  }
}

TEST(ShapeChecks, SliceAxesAndExtremeSteps) {
  {
    GraphBuilder b;
    Value* x = b.input("x", DType::F32, {4, 4});
    expect_error(*one_node(b, "Slice",
                           {x, b.constant_i64({2}, {0, 1}), b.constant_i64({2}, {2, 3}),
                            b.constant_i64({2}, {1, -1})}),
                 "axes repeat axis -1");
  }
  // numpy: x[0:2**63-1:2**63-1] = [x0]; x[2**63-1:-2**63:-2**63] = [x4]; x[1:-2**63:-3] = [x1].
  const std::vector<float> xs = {10, 11, 12, 13, 14};
  const std::vector<std::vector<int64_t>> cases = {
      {0, kMax, kMax}, {kMax, kMin, kMin}, {1, kMin, -3}};
  const std::vector<float> want = {10, 14, 11};
  for (size_t i = 0; i < cases.size(); ++i) {
    GraphBuilder b;
    Value* x = b.input("x", DType::F32, {5});
    auto g = one_node(b, "Slice",
                      {x, b.constant_i64({1}, {cases[i][0]}), b.constant_i64({1}, {cases[i][1]}),
                       b.constant_i64({1}, {0}), b.constant_i64({1}, {cases[i][2]})});
    Compiled r = run_graph(*g, tensors(Tensor(DType::F32, {5}, xs.data())), "reference");
    expect_near(r.outputs[0], {want[i]});
  }
}

TEST(ShapeChecks, SplitSizes) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {4});
  b.op("Split", {x, b.constant_i64({2}, {kMax, 2})}, {}, 2);
  b.last_node()->name = "n";
  for (Value* v : b.last_node()->outputs) b.output(v);
  auto g = b.finish();
  g->opsets[""] = 17;
  expect_error(*g, "split sizes sum to more than the axis' 4");
}

TEST(ShapeChecks, PadBoundsAndConstantValue) {
  for (int64_t p : {kMin, kMax, int64_t{1} << 62}) {
    GraphBuilder b;
    Value* x = b.input("x", DType::F32, {3});
    expect_error(*one_node(b, "Pad", {x, b.constant_i64({2}, {p, 0})}), "is out of range");
  }
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {3});
  expect_error(*one_node(b, "Pad", {x, b.constant_i64({2}, {1, 1}), b.constant_f32({0}, {})}),
               "constant_value must hold one value, got 0");
}

TEST(ShapeChecks, OneHotDepthAndValues) {
  {
    GraphBuilder b;
    Value* i = b.input("i", DType::I64, {3});
    expect_error(
        *one_node(b, "OneHot", {i, b.constant_f32({}, {1e30f}), b.constant_f32({2}, {0, 1})}),
        "depth (1e+30) is not a finite int64");
  }
  GraphBuilder b;
  Value* i = b.input("i", DType::I64, {3});
  expect_error(*one_node(b, "OneHot", {i, b.constant_i64({}, {4}), b.constant_f32({1, 2}, {0, 1})}),
               "values must have shape [2]");
}

TEST(ShapeChecks, TriluAndEyeLikeWithExtremeK) {
  // numpy: np.triu(x, 2**63-1) = 0, np.triu(x, -2**63) = x, np.tril(x, -2**63) = 0.
  const std::vector<float> xs = {1, 2, 3, 4, 5, 6};
  const std::vector<std::tuple<int64_t, int64_t, std::vector<float>>> cases = {
      {kMax, 1, {0, 0, 0, 0, 0, 0}}, {kMin, 1, xs}, {kMin, 0, {0, 0, 0, 0, 0, 0}}, {kMax, 0, xs}};
  for (const auto& [k, upper, want] : cases) {
    GraphBuilder b;
    Value* x = b.input("x", DType::F32, {2, 3});
    auto g = one_node(b, "Trilu", {x, b.constant_i64({}, {k})}, {{"upper", attr_i(upper)}});
    expect_near(
        run_graph(*g, tensors(Tensor(DType::F32, {2, 3}, xs.data())), "reference").outputs[0],
        want);
  }
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {2, 3});
  auto g = one_node(b, "EyeLike", {x}, {{"k", attr_i(kMin)}});
  expect_near(run_graph(*g, tensors(Tensor(DType::F32, {2, 3}, xs.data())), "reference").outputs[0],
              {0, 0, 0, 0, 0, 0});
}

TEST(ShapeChecks, ResizeOutputSizes) {
  {
    GraphBuilder b;
    Value* x = b.input("x", DType::F32, {1, 1, 2, 2});
    Value* none = b.constant_f32({0}, {});
    expect_error(*one_node(b, "Resize", {x, none, b.constant_f32({4}, {1, 1, 1e30f, 1})}),
                 "an output dim (2e+30) is not a finite int64");
  }
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {1, 0});
  Value* none = b.constant_f32({0}, {});
  expect_error(*one_node(b, "Resize", {x, none, none, b.constant_i64({2}, {1, 3})}),
               "dim 1 is empty and cannot be resized to 3");
}

TEST(ShapeChecks, ResizeTapTablesWithinTheMemoryLimit) {
  // The taps of each output coordinate are tables of the plan: an output dim of 2^40 is
  // refused before they are built, naming them.
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {1, 4});
  Value* none = b.constant_f32({0}, {});
  expect_error(*one_node(b, "Resize", {x, none, none, b.constant_i64({2}, {1, int64_t{1} << 40})},
                         {{"mode", attr_s("linear")}}),
               "the tap tables of dim 1 (1099511627776 by 2)");
}

TEST(ShapeChecks, ResizeRefusesWhatItDoesNotKnow) {
  // Resize-18's antialias, axes and keep_aspect_ratio_policy are built (the 1.23 suite checks
  // their values); values it does not know are errors naming the attribute, never ignored.
  for (const auto& [attr, value] : std::vector<std::pair<std::string, Attribute>>{
           {"axes", attr_is({2, 2})},
           {"axes", attr_is({2, 3})},  // scales has 4 entries for 2 axes
           {"keep_aspect_ratio_policy", attr_s("not_larger_please")},
           {"coordinate_transformation_mode", attr_s("half_pixel_sym")},
           {"nearest_mode", attr_s("round")}}) {
    SCOPED_TRACE(attr);
    GraphBuilder b;
    Value* x = b.input("x", DType::F32, {1, 1, 2, 2});
    Value* none = b.constant_f32({0}, {});
    Value* sizes = b.constant_i64({4}, {1, 1, 3, 3});
    Value* scales = b.constant_f32({4}, {1, 1, 2, 2});
    std::vector<Value*> ins{x, none, scales};
    if (attr == "keep_aspect_ratio_policy") ins = {x, none, none, sizes};
    expect_error(*one_node(b, "Resize", ins, {{attr, value}}, 18), attr);
  }
}

TEST(ShapeChecks, ConvKernelExtentOverflow) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {1, 1, 8});
  Value* w = b.input("w", DType::F32, {1, 1, int64_t{1} << 40});
  expect_error(*one_node(b, "Conv", {x, w}, {{"dilations", attr_is({1 << 29})}}),
               "the dilated kernel's extent overflows int64");
}

TEST(ShapeChecks, InvalidModelsThatRanAreErrors) {
  {
    GraphBuilder b;
    Value* x = b.input("x", DType::F32, {2, 0});
    expect_error(*one_node(b, "ArgMax", {x}, {{"axis", attr_i(1)}}), "axis 1 is empty");
  }
  {
    GraphBuilder b;
    Value* x = b.input("x", DType::F32, {2, 2});
    Value* i = b.input("i", DType::I64, {2, 3});
    expect_error(*one_node(b, "GatherElements", {x, i}), "indices dim 1 (3) exceeds data's (2)");
  }
  {
    GraphBuilder b;
    Value* a = b.input("a", DType::F32, {2, 3});
    Value* c = b.input("c", DType::F32, {2, 2, 4});
    expect_error(*one_node(b, "Gemm", {a, b.input("b", DType::F32, {3, 4}), c}),
                 "C float32[2,2,4] does not broadcast to the result [2, 4]");
  }
  {
    GraphBuilder b;
    Value* x = b.input("x", DType::F32, {3});
    expect_error(*one_node(b, "Clip", {x, b.constant_f32({2}, {0, 1})}),
                 "min must be one value of the input's type");
  }
  {
    GraphBuilder b;
    Value* x = b.input("x", DType::F32, {3});
    expect_error(*one_node(b, "PRelu", {x, b.input("s", DType::F32, {2, 3})}),
                 "slope must broadcast to X's shape");
  }
}

TEST(ShapeChecks, EinsumEquations) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"ij->ii", "output letter 'i' repeats"},
      {"ijk->k", "has rank 2, fewer than the letters of 'ijk'"},
      {"i1->i", "holds '1', not a letter"},
      {"...i...->i", "more than one ellipsis"}};
  for (const auto& [eq, what] : cases) {
    GraphBuilder b;
    Value* x = b.input("x", DType::F32, {2, 2});
    expect_error(*one_node(b, "Einsum", {x}, {{"equation", attr_s(eq)}}), what);
  }
}

// MaxUnpool's indices are run-time data: a position outside [0, 2*2) fails the kernel's
// index check on every backend.
class MaxUnpoolIndices : public ::testing::TestWithParam<std::string> {};

TEST_P(MaxUnpoolIndices, OutOfRangeIndexIsAnError) {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {1, 1, 1, 1});
  Value* i = b.input("i", DType::I64, {1, 1, 1, 1});
  auto g = one_node(b, "MaxUnpool", {x, i}, {{"kernel_shape", attr_is({2, 2})}}, 11);
  const float xv = 5;
  for (int64_t ok : {int64_t{0}, int64_t{3}}) {
    Compiled r = run_graph(
        *g, tensors(Tensor(DType::F32, {1, 1, 1, 1}, &xv), Tensor(DType::I64, {1, 1, 1, 1}, &ok)),
        GetParam());
    std::vector<float> want(4, 0.f);
    want[static_cast<size_t>(ok)] = 5;
    expect_near(r.outputs[0], want);
  }
  for (int64_t bad : {int64_t{-1}, int64_t{4}, kMin}) {
    try {
      run_graph(
          *g,
          tensors(Tensor(DType::F32, {1, 1, 1, 1}, &xv), Tensor(DType::I64, {1, 1, 1, 1}, &bad)),
          GetParam());
      ADD_FAILURE() << "no error for index " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("MaxUnpool 'n': Indices must be in [0, 4)"),
                std::string::npos)
          << e.what();
    }
  }
}

#ifdef FERRITE_HAS_JIT
INSTANTIATE_TEST_SUITE_P(Backends, MaxUnpoolIndices,
                         ::testing::Values("reference", "portable", "jit"));
#else
INSTANTIATE_TEST_SUITE_P(Backends, MaxUnpoolIndices, ::testing::Values("reference", "portable"));
#endif

}  // namespace
}  // namespace ferrite
