// Plans that carry their weights prepacked (Plan::packed, `ferrite compile --prepack`): each
// backend's externs hand out the weights they packed (Session::packed_constants); a plan
// carrying them, with the raw weights dropped and through the serializer, loads on the same
// backend without packing (Session::packed_constants_used) and gives the same bits; packed
// forms in a layout the backend would not make are ignored while the raw weights are there,
// and a backend that cannot use them refuses the plan, naming the layouts.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/plan/error.h"
#include "compiler/plan/plan_io.h"
#include "runtime/backend.h"
#include "tests/unit/compiler/lower/run_graph.h"

namespace ferrite {
namespace {

using lower_test::random_floats;

// A 3x3 conv (Winograd on the portable backend, 16 channels each way), relu, a 1x1 conv, a
// global pool and a MatMul with a bias (a GEMV wide enough for the portable GEMM's row-grouped
// weights, which the JIT backend takes too); and a ConvTranspose beside them.
std::unique_ptr<Graph> model() {
  GraphBuilder b;
  Value* x = b.input("x", DType::F32, {1, 16, 12, 12});
  Value* w1 = b.constant_f32({16, 16, 3, 3}, random_floats(16 * 16 * 9, 1));
  Value* y = b.op("Conv", {x, w1, b.constant_f32({16}, random_floats(16, 2))},
                  {{"pads", attr_is({1, 1, 1, 1})}});
  y = b.op("Relu", {y});
  Value* w2 = b.constant_f32({24, 16, 1, 1}, random_floats(24 * 16, 3));
  Value* z = b.op("Conv", {y, w2});
  z = b.op("GlobalAveragePool", {z});
  z = b.op("Flatten", {z});
  z = b.op("MatMul", {z, b.constant_f32({24, 300}, random_floats(24 * 300, 4))});
  b.output(b.op("Add", {z, b.constant_f32({300}, random_floats(300, 5))}));
  Value* wt = b.constant_f32({16, 8, 2, 2}, random_floats(16 * 8 * 4, 6));
  b.output(b.op("ConvTranspose", {y, wt}, {{"strides", attr_is({2, 2})}}));
  std::unique_ptr<Graph> g = b.finish();
  CompileOptions o;
  o.channels_last = true;
  prepare_graph(*g, o);
  return g;
}

Plan compile_model(const Graph& g) {
  CompileOptions o;
  o.channels_last = true;
  return compile_graph(g, {g.inputs[0]->type}, o);
}

std::vector<Tensor> run(Session& s, const Tensor& x) {
  return s.run({&x});
}

std::string error_of(const Plan& plan, const std::string& backend) {
  SessionOptions o;
  o.backend = backend;
  try {
    Session s(plan, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

void expect_same_bits(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].nbytes(), want[i].nbytes());
    EXPECT_EQ(std::memcmp(got[i].data(), want[i].data(), want[i].nbytes()), 0) << "output " << i;
  }
}

TEST(PrepackedPlan, EveryBackendLoadsItsOwnPackedWeights) {
  const std::unique_ptr<Graph> g = model();
  const Plan plan = compile_model(*g);
  const std::vector<float> xv = random_floats(16 * 144, 7);
  const Tensor x(DType::F32, {1, 16, 12, 12}, xv.data());
  for (const std::string& backend : backend_names()) {
    SCOPED_TRACE(backend);
    SessionOptions o;
    o.backend = backend;
    Session fresh(plan, o);
    const std::vector<Tensor> want = run(fresh, x);
    EXPECT_EQ(fresh.packed_constants_used(), 0u);
    std::vector<PackedConstant> packed = fresh.packed_constants();
    if (backend == "reference") {  // the oracle packs nothing
      EXPECT_TRUE(packed.empty());
      continue;
    }
    // The weights of both convs, the MatMul and ConvTranspose; on the portable backend not
    // the 3x3 conv's, whose Winograd form is made at load (PortableConv::packed_inputs).
    const bool winograd = backend == "portable";
    const size_t count = winograd ? 3 : 4;
    ASSERT_EQ(packed.size(), count);
    Plan prepacked = plan;
    prepacked.packed = packed;
    EXPECT_EQ(strip_packed_constants(&prepacked),
              ((winograd ? 0 : 16 * 16 * 9) + 24 * 16 + 24 * 300 + 16 * 8 * 4) * 4u);
    const std::vector<uint8_t> bytes = serialize_plan(prepacked);
    Session loaded(deserialize_plan(bytes.data(), bytes.size()), o);
    EXPECT_EQ(loaded.packed_constants_used(), count);
    expect_same_bits(run(loaded, x), want);
    // It hands out the same packed weights again.
    const std::vector<PackedConstant> again = loaded.packed_constants();
    ASSERT_EQ(again.size(), packed.size());
    for (size_t i = 0; i < packed.size(); ++i) {
      EXPECT_EQ(again[i].layout, packed[i].layout);
      EXPECT_EQ(again[i].bytes, packed[i].bytes);
    }

    // The oracle cannot use them: the plan is refused, naming the node and the layout.
    const std::string refused = error_of(prepacked, "reference");
    EXPECT_NE(refused.find("is in the plan only prepacked ('" + packed[0].layout + "')"),
              std::string::npos)
        << refused;
    EXPECT_NE(refused.find("backend 'reference' does not use on this machine"), std::string::npos)
        << refused;

    // Packed forms in another layout are ignored while the raw weights are there.
    Plan other = plan;
    other.packed = packed;
    for (PackedConstant& c : other.packed) c.layout += " (another machine)";
    Session ignoring(other, o);
    EXPECT_EQ(ignoring.packed_constants_used(), 0u);
    expect_same_bits(run(ignoring, x), want);
  }
}

}  // namespace
}  // namespace ferrite
