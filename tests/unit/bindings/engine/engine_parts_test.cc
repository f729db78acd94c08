// Models cut at a node whose output sizes depend on input values (engine_parts.cc): the
// head, the node (value_sized_ops.cc) and the tail, against outputs computed here by
// their definitions. The ONNX node suites test the ops one by one (conformance).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "bindings/engine/engine.h"
#include "bindings/engine/value_sized_ops.h"
#include "compiler/plan/error.h"
#include "tests/unit/support/error_of.h"
#include "tests/unit/support/node_of.h"
#include "tests/unit/support/source_dir.h"

namespace ferrite {
namespace {

const std::string kFixtures = test::source_dir() + "/tests/cli/fixtures/";

using test::error_of;

TEST(EnginePartsTest, NonZeroCutsTheModelAndValuesCrossIt) {
  // nonzero_gather: y = 2 * x[x > 0] (row-major), count = #(x > 0), nz = the indices. The
  // mask is computed before the cut and read after it; nz is an output of the node itself.
  default_backend();
  for (const std::string& backend : available_backends()) {
    EngineOptions options;
    options.session.backend = backend;
    std::unique_ptr<Engine> e = Engine::from_file(kFixtures + "nonzero_gather.onnx", options);
    ASSERT_TRUE(e->runs_in_parts());
    for (int64_t n : {3, 1, 7, 3}) {
      std::vector<float> v(static_cast<size_t>(n * 4));
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 37 + n) % 11) - 5.5f;
      if (n == 1) v.assign(4, -1.f);  // nothing selected: K = 0
      const Tensor x(DType::F32, {n, 4}, v.data());
      const std::vector<Tensor> out = e->run({{"x", &x}});
      std::vector<float> want_y;
      std::vector<int64_t> rows, cols;
      for (int64_t i = 0; i < n * 4; ++i) {
        if (v[static_cast<size_t>(i)] <= 0) continue;
        want_y.push_back(2 * v[static_cast<size_t>(i)]);
        rows.push_back(i / 4);
        cols.push_back(i % 4);
      }
      const int64_t k = static_cast<int64_t>(want_y.size());
      ASSERT_EQ(out.size(), 3u);
      ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{k})) << backend << " N=" << n;
      for (int64_t i = 0; i < k; ++i)
        EXPECT_EQ(out[0].as<float>()[i], want_y[static_cast<size_t>(i)]);
      ASSERT_EQ(out[1].shape(), (std::vector<int64_t>{}));
      EXPECT_EQ(out[1].as<float>()[0], static_cast<float>(k));
      ASSERT_EQ(out[2].shape(), (std::vector<int64_t>{2, k}));
      for (int64_t i = 0; i < k; ++i) {
        EXPECT_EQ(out[2].as<int64_t>()[i], rows[static_cast<size_t>(i)]);
        EXPECT_EQ(out[2].as<int64_t>()[k + i], cols[static_cast<size_t>(i)]);
      }
    }
    // The head once for every N, the tail per (N, K) shape set: N=3 again compiles nothing.
    EXPECT_EQ(e->compiles(), 4) << backend;
    const Tensor x(DType::F32, {2, 4});
    EXPECT_NE(error_of([&] {
                e->compile_plan({{"x", &x}});
              }).find("runs in parts, cut at NonZero 'nz'"),
              std::string::npos);
  }
}

TEST(EnginePartsTest, NonMaxSuppressionWithConstantArguments) {
  // nms_select: max 3 boxes, IoU 0.5, scores above 0.1; the tail gathers the boxes picked.
  // Box 1 overlaps box 0 (IoU 0.82) and scores lower: suppressed; box 3 scores under the
  // floor; the rest are kept by score, at most 3.
  const std::vector<float> boxes = {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 2, 1, 3,
                                    0, 4, 1, 5, 0, 6,    1, 7,    0, 8, 1, 9};
  const std::vector<float> scores = {0.9f, 0.8f, 0.6f, 0.05f, 0.7f, 0.2f};
  const Tensor b(DType::F32, {1, 6, 4}, boxes.data()), s(DType::F32, {1, 1, 6}, scores.data());
  EngineOptions options;
  std::unique_ptr<Engine> e = Engine::from_file(kFixtures + "nms_select.onnx", options);
  const std::vector<Tensor> out = e->run({{"boxes", &b}, {"scores", &s}});
  const std::vector<int64_t> kept = {0, 4, 2};  // by score: 0.9, 0.7, 0.6
  ASSERT_EQ(out[1].shape(), (std::vector<int64_t>{3, 3}));
  ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{3, 4}));
  for (size_t r = 0; r < kept.size(); ++r) {
    EXPECT_EQ(out[1].as<int64_t>()[3 * r], 0);
    EXPECT_EQ(out[1].as<int64_t>()[3 * r + 1], 0);
    EXPECT_EQ(out[1].as<int64_t>()[3 * r + 2], kept[r]);
    for (size_t c = 0; c < 4; ++c)
      EXPECT_EQ(out[0].as<float>()[4 * r + c], boxes[static_cast<size_t>(kept[r]) * 4 + c]);
  }
}

Node node(const std::string& op, std::map<std::string, Attribute> attrs = {}) {
  return test::node_of(op, std::move(attrs));
}

TEST(EnginePartsTest, ValueSizedOpsOnEdgeValues) {
  // Unique collapses NaNs into one, after every number (numpy.unique's order).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> u = {nan, 2, -0.f, nan, 0, 2};
  const Tensor ut(DType::F32, {6}, u.data());
  const std::vector<Tensor> r = run_value_sized_op(node("Unique"), "Unique 'u'", 4, {&ut});
  ASSERT_EQ(r.size(), 4u);
  ASSERT_EQ(r[0].shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(r[0].as<float>()[0], 0.f);
  EXPECT_EQ(r[0].as<float>()[1], 2.f);
  EXPECT_TRUE(std::isnan(r[0].as<float>()[2]));
  EXPECT_EQ(r[1].as<int64_t>()[0], 2);  // the first 0 (-0) is element 2
  const std::vector<int64_t> inverse = {2, 1, 0, 2, 0, 1}, counts = {2, 2, 2};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(r[2].as<int64_t>()[i], inverse[i]) << i;
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(r[3].as<int64_t>()[i], counts[i]) << i;
  // NonZero of a scalar reads it as one element; NaN is not zero.
  const Tensor scalar(DType::F32, {}, &nan);
  const std::vector<Tensor> z = run_value_sized_op(node("NonZero"), "NonZero", 1, {&scalar});
  EXPECT_EQ(z[0].shape(), (std::vector<int64_t>{1, 1}));
  // NonMaxSuppression's "no limit" as exporters write it: INT64_MAX boxes per class.
  const std::vector<float> two_boxes = {0, 0, 1, 1, 0, 5, 1, 6}, two_scores = {0.5f, 0.7f};
  const int64_t no_limit = std::numeric_limits<int64_t>::max();
  const Tensor bx(DType::F32, {1, 2, 4}, two_boxes.data()),
      sx(DType::F32, {1, 1, 2}, two_scores.data()), mx(DType::I64, {1}, &no_limit);
  const std::vector<Tensor> kept =
      run_value_sized_op(node("NonMaxSuppression"), "NMS", 1, {&bx, &sx, &mx});
  ASSERT_EQ(kept[0].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(kept[0].as<int64_t>()[2], 1);  // the higher score first
  EXPECT_EQ(kept[0].as<int64_t>()[5], 0);
  // Bad input: errors that name the node.
  const bool cond[4] = {false, false, false, true};
  const Tensor c(DType::Bool, {4}, cond), x(DType::F32, {3});
  Attribute axis;
  axis.i = 0;
  EXPECT_EQ(error_of([&] {
              run_value_sized_op(node("Compress", {{"axis", axis}}), "Compress 'c'", 1, {&x, &c});
            }),
            "Compress 'c': condition selects index 3 past the 3 the axis has");
  const Tensor flat_boxes(DType::F32, {4, 4}), sc(DType::F32, {1, 1, 4});
  EXPECT_EQ(error_of([&] {
              run_value_sized_op(node("NonMaxSuppression"), "NonMaxSuppression 'n'", 1,
                                 {&flat_boxes, &sc});
            }),
            "NonMaxSuppression 'n': input 0 must have rank 3, got 2");
}

TEST(EnginePartsTest, BatchedScansRunPerEntryAndTheirOutputsFitTheMemoryLimit) {
  // scan8_sum, a Scan-8 (batch axis 0): per entry b, s = s0[b]; for t from T-1 down to 0,
  // s += xs[b, t], ys[b, k] = 2 s at step k. Past the unrolling budget (1 node) it runs at
  // run time, per batch entry and step.
  EngineOptions options;
  options.compile.max_unrolled_nodes = 1;
  options.session.backend = "reference";
  std::unique_ptr<Engine> e = Engine::from_file(kFixtures + "scan8_sum.onnx", options);
  for (const auto& [batch, steps] : std::vector<std::pair<int64_t, int64_t>>{{3, 4}, {1, 2}}) {
    std::vector<float> s0(static_cast<size_t>(batch * 2)),
        xv(static_cast<size_t>(batch * steps * 2));
    for (size_t i = 0; i < s0.size(); ++i) s0[i] = 0.25f * static_cast<float>(i);
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i % 7) - 2.5f;
    const Tensor s0t(DType::F32, {batch, 2}, s0.data()),
        xs(DType::F32, {batch, steps, 2}, xv.data());
    const std::vector<Tensor> out = e->run({{"s0", &s0t}, {"xs", &xs}});
    EXPECT_TRUE(e->runs_in_parts());
    ASSERT_EQ(out[1].shape(), (std::vector<int64_t>{batch, steps, 2}));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t c = 0; c < 2; ++c) {
        float s = s0[static_cast<size_t>(b * 2 + c)];
        for (int64_t k = 0; k < steps; ++k) {
          s += xv[static_cast<size_t>((b * steps + steps - 1 - k) * 2 + c)];
          EXPECT_EQ(out[1].as<float>()[(b * steps + k) * 2 + c], 2 * s) << b << " " << k;
        }
        EXPECT_EQ(out[0].as<float>()[b * 2 + c], s);
      }
    }
  }
  // What a run keeps to stack (twice: the parts and the stacked output) counts against the
  // memory limit, before the stacking: 8 bytes a step; past 1500 bytes kept, the 188th step
  // fails. The body's own plan needs far less.
  options.session.memory_limit = 3000;
  e = Engine::from_file(kFixtures + "scan8_sum.onnx", options);
  const Tensor s0(DType::F32, {2, 2}), xs(DType::F32, {2, 256, 2});
  EXPECT_EQ(error_of([&] {
              e->run({{"s0", &s0}, {"xs", &xs}});
            }),
            "Scan 'scan': its scan outputs needs 3008 bytes (2.9 KiB), more than the memory "
            "limit of 3000 bytes (2.9 KiB); set it with --memory-limit or FERRITE_MEMORY_LIMIT");
  // So does the number of body runs (EngineOptions::max_iterations), batch entries times
  // steps, before the first.
  options.session.memory_limit = 0;
  options.max_iterations = 500;
  e = Engine::from_file(kFixtures + "scan8_sum.onnx", options);
  EXPECT_EQ(error_of([&] {
              e->run({{"s0", &s0}, {"xs", &xs}});
            }),
            "Scan 'scan': 2 batch entries of 256 steps: more than 500 body runs");
}

}  // namespace
}  // namespace ferrite
