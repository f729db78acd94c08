// LSTM, GRU and RNN lowerings: output shapes per direction and layout, values against a
// direct (double precision) implementation of the ONNX equations written here, sequence_lens
// as a constant and at run time, the plan's shape, and errors that name the node.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "compiler/compile.h"
#include "compiler/plan/error.h"
#include "runtime/session.h"

namespace ferrite {
namespace {

std::vector<float> random_floats(size_t n, uint32_t seed, float scale = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

Attribute attr_strings(std::vector<std::string> v) {
  Attribute a;
  a.kind = AttrKind::Strings;
  a.strings = std::move(v);
  return a;
}

struct Act {
  std::string name;
  double alpha = 0, beta = 0;
};

// An Act without alpha and beta takes the defaults (the attribute lists ran out).
double activate(Act a, double x, double clip) {
  if (a.alpha == 0 && a.beta == 0) {
    if (a.name == "LeakyRelu") a.alpha = 0.01;
    if (a.name == "HardSigmoid") a.alpha = 0.2, a.beta = 0.5;
    if (a.name == "Affine" || a.name == "ThresholdedRelu" || a.name == "Elu") a.alpha = 1;
    if (a.name == "ScaledTanh") a.alpha = a.beta = 1;
  }
  if (clip > 0) x = std::min(std::max(x, -clip), clip);
  const std::string& n = a.name;
  if (n == "Sigmoid") return 1 / (1 + std::exp(-x));
  if (n == "Tanh") return std::tanh(x);
  if (n == "Relu") return std::max(x, 0.0);
  if (n == "Affine") return a.alpha * x + a.beta;
  if (n == "LeakyRelu") return x < 0 ? a.alpha * x : x;
  if (n == "ThresholdedRelu") return x > a.alpha ? x : 0;
  if (n == "ScaledTanh") return a.alpha * std::tanh(a.beta * x);
  if (n == "HardSigmoid") return std::min(std::max(a.alpha * x + a.beta, 0.0), 1.0);
  if (n == "Elu") return x < 0 ? a.alpha * (std::exp(x) - 1) : x;
  if (n == "Softsign") return x / (1 + std::fabs(x));
  if (n == "Softplus") return std::log1p(std::exp(x));
  ADD_FAILURE() << "activation " << n;
  return 0;
}

// One recurrent op: its inputs (layout 0: X [seq, batch, input], states [dirs, batch,
// hidden]) and attributes; `reference` computes its outputs the way the spec writes them.
struct RnnCase {
  std::string op;  // LSTM, GRU, RNN
  int64_t seq = 4, batch = 3, input = 5, hidden = 4;
  std::string direction = "forward";
  int layout = 0;
  bool with_b = true, with_h0 = true, with_c0 = true, with_p = true;
  std::vector<int32_t> lens;  // empty: none
  bool lens_at_run_time = false;
  double clip = 0;
  bool input_forget = false, linear_before_reset = false;
  std::vector<Act> acts;  // empty: the defaults

  int dirs() const { return direction == "bidirectional" ? 2 : 1; }
  int gates() const { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }
  std::vector<float> x, w, r, b, h0, c0, p;

  void make_data() {
    int64_t g = gates(), d = dirs();
    x = random_floats(seq * batch * input, 1);
    w = random_floats(d * g * hidden * input, 2, 0.6f);
    r = random_floats(d * g * hidden * hidden, 3, 0.6f);
    b = random_floats(d * 2 * g * hidden, 4, 0.5f);
    h0 = random_floats(d * batch * hidden, 5);
    c0 = random_floats(d * batch * hidden, 6);
    p = random_floats(d * 3 * hidden, 7, 0.5f);
  }
  std::vector<Act> all_acts() const {
    std::vector<Act> one = op == "LSTM"  ? std::vector<Act>{{"Sigmoid"}, {"Tanh"}, {"Tanh"}}
                           : op == "GRU" ? std::vector<Act>{{"Sigmoid"}, {"Tanh"}}
                                         : std::vector<Act>{{"Tanh"}};
    if (acts.size() > one.size()) return acts;
    if (!acts.empty()) one = acts;  // one direction's list serves both
    std::vector<Act> all;
    for (int d = 0; d < dirs(); ++d) all.insert(all.end(), one.begin(), one.end());
    return all;
  }

  // Outputs in layout 0: Y [seq, dirs, batch, hidden], Y_h and Y_c [dirs, batch, hidden].
  std::vector<std::vector<double>> reference() const;
};

std::vector<std::vector<double>> RnnCase::reference() const {
  const int64_t H = hidden, G = gates(), D = dirs();
  const std::vector<Act> A = all_acts();
  const size_t per_dir = A.size() / D;
  std::vector<double> y(seq * D * batch * H, 0), yh(D * batch * H, 0), yc(D * batch * H, 0);
  for (int64_t d = 0; d < D; ++d) {
    auto act = [&](size_t k, double v) { return activate(A[d * per_dir + k], v, clip); };
    bool back = d == 1 || direction == "reverse";
    for (int64_t n = 0; n < batch; ++n) {
      int64_t len = lens.empty() ? seq : lens[n];
      std::vector<double> h(H, 0), c(H, 0);
      for (int64_t j = 0; j < H; ++j) {
        if (with_h0) h[j] = h0[(d * batch + n) * H + j];
        if (with_c0 && op == "LSTM") c[j] = c0[(d * batch + n) * H + j];
      }
      for (int64_t k = 0; k < len; ++k) {
        int64_t t = back ? len - 1 - k : k;
        // Xt·Wᵀ + Wb and Ht-1·Rᵀ + Rb for every gate row.
        std::vector<double> xw(G * H), hr(G * H);
        for (int64_t row = 0; row < G * H; ++row) {
          double sx = with_b ? b[d * 2 * G * H + row] : 0,
                 sh = with_b ? b[(d * 2 + 1) * G * H + row] : 0;
          for (int64_t i = 0; i < input; ++i)
            sx += x[(t * batch + n) * input + i] * w[(d * G * H + row) * input + i];
          for (int64_t i = 0; i < H; ++i) sh += h[i] * r[(d * G * H + row) * H + i];
          xw[row] = sx;
          hr[row] = sh;
        }
        std::vector<double> next(H);
        if (op == "LSTM") {
          auto peep = [&](int k2, int64_t j) { return with_p ? p[d * 3 * H + k2 * H + j] : 0.0; };
          for (int64_t j = 0; j < H; ++j) {
            double ig = act(0, xw[j] + hr[j] + peep(0, j) * c[j]);
            double fg =
                input_forget ? 1 - ig : act(0, xw[2 * H + j] + hr[2 * H + j] + peep(2, j) * c[j]);
            double cg = act(1, xw[3 * H + j] + hr[3 * H + j]);
            c[j] = fg * c[j] + ig * cg;
            double og = act(0, xw[H + j] + hr[H + j] + peep(1, j) * c[j]);
            next[j] = og * act(2, c[j]);
          }
        } else if (op == "GRU") {
          std::vector<double> z(H), rg(H);
          for (int64_t j = 0; j < H; ++j) {
            z[j] = act(0, xw[j] + hr[j]);
            rg[j] = act(0, xw[H + j] + hr[H + j]);
          }
          for (int64_t j = 0; j < H; ++j) {
            double rb = with_b ? b[(d * 2 + 1) * G * H + 2 * H + j] : 0, cand;
            if (linear_before_reset) {
              cand = xw[2 * H + j] + rg[j] * hr[2 * H + j];
            } else {
              double s = rb;
              for (int64_t i = 0; i < H; ++i)
                s += rg[i] * h[i] * r[(d * G * H + 2 * H + j) * H + i];
              cand = xw[2 * H + j] + s;
            }
            next[j] = (1 - z[j]) * act(1, cand) + z[j] * h[j];
          }
        } else {
          for (int64_t j = 0; j < H; ++j) next[j] = act(0, xw[j] + hr[j]);
        }
        h = next;
        for (int64_t j = 0; j < H; ++j) y[((t * D + d) * batch + n) * H + j] = h[j];
      }
      for (int64_t j = 0; j < H && len > 0; ++j) {  // an empty sequence ends in zeros
        yh[(d * batch + n) * H + j] = h[j];
        yc[(d * batch + n) * H + j] = c[j];
      }
    }
  }
  return {y, yh, yc};
}

// Moves dims (a, b) of a row-major tensor: layout conversions for the batch-first case.
std::vector<float> swap01(const std::vector<float>& v, int64_t a, int64_t b, int64_t inner) {
  std::vector<float> out(v.size());
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      for (int64_t k = 0; k < inner; ++k) out[(j * a + i) * inner + k] = v[(i * b + j) * inner + k];
  return out;
}

struct Built {
  std::unique_ptr<Graph> g;
  std::vector<Tensor> inputs;
};

// The case as a one-node graph with outputs Y, Y_h (, Y_c); X (and sequence_lens when it is
// a run-time value) are inputs, the rest constants.
Built build(const RnnCase& k, const std::string& node_name = "rnn") {
  GraphBuilder b;
  Built out;
  int64_t G = k.gates(), D = k.dirs(), H = k.hidden;
  std::vector<int64_t> xs = k.layout ? std::vector<int64_t>{k.batch, k.seq, k.input}
                                     : std::vector<int64_t>{k.seq, k.batch, k.input};
  std::vector<int64_t> ss =
      k.layout ? std::vector<int64_t>{k.batch, D, H} : std::vector<int64_t>{D, k.batch, H};
  auto state = [&](const std::vector<float>& v) {
    return b.constant_f32(ss, k.layout ? swap01(v, D, k.batch, H) : v);
  };
  Value* x = b.input("X", DType::F32, xs);
  out.inputs.emplace_back(DType::F32, xs,
                          (k.layout ? swap01(k.x, k.seq, k.batch, k.input) : k.x).data());
  std::vector<Value*> ins{x,
                          b.constant_f32({D, G * H, k.input}, k.w),
                          b.constant_f32({D, G * H, H}, k.r),
                          k.with_b ? b.constant_f32({D, 2 * G * H}, k.b) : nullptr,
                          nullptr,
                          k.with_h0 ? state(k.h0) : nullptr};
  if (!k.lens.empty()) {
    if (k.lens_at_run_time) {
      ins[4] = b.input("lens", DType::I32, {k.batch});
      out.inputs.emplace_back(DType::I32, std::vector<int64_t>{k.batch}, k.lens.data());
    } else {
      ins[4] = b.constant("lens", DType::I32, {k.batch}, k.lens.data());
    }
  }
  if (k.op == "LSTM") {
    ins.push_back(k.with_c0 ? state(k.c0) : nullptr);
    ins.push_back(k.with_p ? b.constant_f32({D, 3 * H}, k.p) : nullptr);
  }
  std::map<std::string, Attribute> attrs{
      {"hidden_size", attr_i(H)}, {"direction", attr_s(k.direction)}, {"layout", attr_i(k.layout)}};
  if (k.clip > 0) attrs["clip"] = attr_f(k.clip);
  if (k.input_forget) attrs["input_forget"] = attr_i(1);
  if (k.linear_before_reset) attrs["linear_before_reset"] = attr_i(1);
  if (!k.acts.empty()) {
    std::vector<std::string> names;
    std::vector<double> alphas, betas;
    for (const Act& a : k.acts) {
      names.push_back(a.name);
      if (a.alpha != 0) alphas.push_back(a.alpha);
      if (a.beta != 0) betas.push_back(a.beta);
    }
    attrs["activations"] = attr_strings(names);
    if (!alphas.empty()) attrs["activation_alpha"] = attr_fs(alphas);
    if (!betas.empty()) attrs["activation_beta"] = attr_fs(betas);
  }
  b.op(k.op, ins, attrs, k.op == "LSTM" ? 3 : 2);
  Node* n = b.last_node();
  n->name = node_name;
  for (Value* v : n->outputs) b.output(v);
  out.g = b.finish();
  out.g->opsets[""] = 14;
  return out;
}

struct Ran {
  Plan plan;
  std::vector<Tensor> outputs;
};

Ran run(const Built& m, const std::string& backend) {
  std::vector<TensorType> types;
  for (const Value* v : m.g->inputs) types.push_back(v->type);
  Ran r;
  r.plan = compile_graph(*m.g, types, {});
  SessionOptions opts;
  opts.backend = backend;
  Session s(r.plan, opts);
  std::vector<const Tensor*> ptrs;
  for (const auto& t : m.inputs) ptrs.push_back(&t);
  r.outputs = s.run(ptrs);
  return r;
}

// Runs the case and compares every output with the reference (converted to its layout).
void check(RnnCase k, const std::string& backend) {
  k.make_data();
  Ran r = run(build(k), backend);
  auto want = k.reference();
  int64_t D = k.dirs(), H = k.hidden;
  ASSERT_EQ(r.outputs.size(), k.op == "LSTM" ? 3u : 2u);
  std::vector<std::vector<int64_t>> shapes;
  if (k.layout) {
    shapes = {{k.batch, k.seq, D, H}, {k.batch, D, H}, {k.batch, D, H}};
    std::vector<float> y(want[0].begin(), want[0].end());
    y = swap01(y, k.seq * D, k.batch, H);  // [seq*dirs, batch, H] → [batch, seq*dirs, H]
    want[0].assign(y.begin(), y.end());
    for (int o = 1; o < 3; ++o) {
      std::vector<float> s(want[o].begin(), want[o].end());
      s = swap01(s, D, k.batch, H);
      want[o].assign(s.begin(), s.end());
    }
  } else {
    shapes = {{k.seq, D, k.batch, H}, {D, k.batch, H}, {D, k.batch, H}};
  }
  for (size_t o = 0; o < r.outputs.size(); ++o) {
    ASSERT_EQ(r.outputs[o].shape(), shapes[o]) << "output " << o;
    const float* got = r.outputs[o].as<float>();
    for (size_t i = 0; i < want[o].size(); ++i) {
      ASSERT_NEAR(got[i], want[o][i], 2e-5 * (1 + std::fabs(want[o][i])))
          << "output " << o << " element " << i;
    }
  }
}

class RnnLowering : public ::testing::TestWithParam<std::string> {};

TEST_P(RnnLowering, LstmEveryDirectionAndLayout) {
  for (const char* dir : {"forward", "reverse", "bidirectional"}) {
    for (int layout : {0, 1}) {
      SCOPED_TRACE(std::string(dir) + " layout " + std::to_string(layout));
      RnnCase k;
      k.op = "LSTM";
      k.direction = dir;
      k.layout = layout;
      check(k, GetParam());
    }
  }
}

TEST_P(RnnLowering, LstmRunTimeSequenceLensClipCoupledGatesAndActivations) {
  RnnCase k;
  k.op = "LSTM";
  k.seq = 5;
  k.direction = "bidirectional";
  k.lens = {5, 2, 0};
  k.lens_at_run_time = true;
  k.clip = 0.8;
  k.input_forget = true;
  k.acts = {{"HardSigmoid", 0.3, 0.4},
            {"Softsign"},
            {"ScaledTanh", 1.5, 0.7},
            {"Sigmoid"},
            {"Tanh"},
            {"Elu", 0.8}};
  check(k, GetParam());
  k.layout = 1;
  k.with_b = k.with_h0 = k.with_p = false;
  check(k, GetParam());
}

TEST_P(RnnLowering, GruBothResetOrdersWithConstantSequenceLens) {
  for (bool lbr : {false, true}) {
    SCOPED_TRACE(lbr ? "linear_before_reset" : "reset first");
    RnnCase k;
    k.op = "GRU";
    k.direction = "bidirectional";
    k.linear_before_reset = lbr;
    k.lens = {1, 4, 3};
    k.acts = {{"Sigmoid"}, {"LeakyRelu", 0.2}, {"HardSigmoid"}, {"Softplus"}};
    check(k, GetParam());
    k.with_h0 = false;  // the first step has no recurrent term
    k.lens.clear();
    k.direction = "reverse";
    k.acts.clear();
    check(k, GetParam());
  }
}

TEST_P(RnnLowering, RnnActivationsWithAlphaBeta) {
  RnnCase k;
  k.op = "RNN";
  k.direction = "bidirectional";
  k.layout = 1;
  k.acts = {{"Affine", 0.5, 0.1}, {"ThresholdedRelu", 0.3}};
  check(k, GetParam());
  k.acts = {{"Relu"}};  // one direction's list serves both
  k.with_b = false;
  check(k, GetParam());
}

TEST_P(RnnLowering, YIsWrittenInPlaceByTheSteps) {
  // Each step's hidden state is computed straight into its slice of Y: one kernel per
  // LSTM step (the cell and hidden kernels fused), none to assemble Y; one projection and
  // a MatMul per step after the first (no initial state).
  RnnCase k;
  k.op = "LSTM";
  k.seq = 6;
  k.with_h0 = k.with_c0 = false;
  k.make_data();
  Built m = build(k);
  m.g->outputs.resize(1);
  Ran r = run(m, GetParam());
  EXPECT_EQ(r.plan.kernels.size(), static_cast<size_t>(k.seq));
  EXPECT_EQ(r.plan.externs.size(), static_cast<size_t>(k.seq));
  auto want = k.reference();
  for (size_t i = 0; i < want[0].size(); ++i) {
    ASSERT_NEAR(r.outputs[0].as<float>()[i], want[0][i], 2e-5) << i;
  }
}

std::string compile_error(const Built& m) {
  std::vector<TensorType> types;
  for (const Value* v : m.g->inputs) types.push_back(v->type);
  try {
    compile_graph(*m.g, types, {});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_P(RnnLowering, BadInputsAreErrorsNamingTheNode) {
  RnnCase k;
  k.op = "GRU";
  k.make_data();
  RnnCase bad_w = k;
  bad_w.input = 4;  // W is built for 4 inputs, X has 5
  bad_w.make_data();
  Built m = build(bad_w, "my_gru");
  m.g->inputs[0]->type.shape = {k.seq, k.batch, 5};
  m.inputs.clear();
  std::string e = compile_error(m);
  EXPECT_NE(e.find("GRU 'my_gru'"), std::string::npos) << e;
  EXPECT_NE(e.find("W has shape"), std::string::npos) << e;

  RnnCase unknown = k;
  unknown.acts = {{"Swish"}, {"Tanh"}};
  e = compile_error(build(unknown, "my_gru"));
  EXPECT_NE(e.find("GRU 'my_gru'"), std::string::npos) << e;
  EXPECT_NE(e.find("activation 'Swish'"), std::string::npos) << e;

  RnnCase long_lens = k;
  long_lens.lens = {1, 9, 2};
  e = compile_error(build(long_lens, "my_gru"));
  EXPECT_NE(e.find("sequence_lens[1] = 9"), std::string::npos) << e;
}

TEST_P(RnnLowering, IntegerInputIsUnsupported) {
  GraphBuilder b;
  Value* x = b.input("X", DType::I64, {2, 1, 3});
  Value* w = b.input("W", DType::I64, {1, 2, 3});
  Value* r = b.input("R", DType::I64, {1, 2, 2});
  b.output(b.op("RNN", {x, w, r}, {{"hidden_size", attr_i(2)}}));
  b.last_node()->name = "int_rnn";
  auto g = b.finish();
  try {
    compile_graph(*g, {x->type, w->type, r->type}, {});
    FAIL() << "expected an error";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("RNN 'int_rnn'"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, RnnLowering, ::testing::Values("reference", "portable"));

}  // namespace
}  // namespace ferrite
