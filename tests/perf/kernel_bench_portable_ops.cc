// `portable-ops`: GFLOP/s of the portable backend's MatMul and Conv externs on the shapes
// models give them (a square GEMM, MLP / transformer layers from GEMV-like M = 1 to
// M = 128, batched attention, ResNet and MobileNet convolutions, fused epilogues), as a
// fraction of the FMA peak measured in the same run. Each extern is prepared the way a
// session prepares it (weights marked constant) and checked once against the reference.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>

#include "compiler/plan/error.h"
#include "runtime/backend.h"
#include "runtime/kernels/portable/portable_backend.h"
#include "runtime/kernels/portable/simd_f32.h"
#include "runtime/kernels/reference/reference_backend.h"
#include "tests/perf/kernel_bench.h"

namespace ferrite {
namespace bench {
namespace {

using Dims = std::vector<int64_t>;

Dims row_major(const Dims& shape) {
  Dims s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

int64_t product(const Dims& d) {
  int64_t p = 1;
  for (int64_t x : d) p *= x;
  return p;
}

// One extern call with its data: inputs[i] backs call.inputs[i] (buffer i), the output is
// buffer inputs.size().
struct OpCase {
  std::string name, shape;
  ExternCall call;
  std::vector<std::vector<float>> inputs;
  std::vector<bool> constant;  // per input: a weight (the session passes it to prepare)
  std::vector<float> output;
  double flops = 0;

  // Adds a dense input of `shape` filled with values in [-1, 1); returns its index.
  int32_t add_input(const Dims& shape, bool is_constant, std::mt19937& rng) {
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<float> v(static_cast<size_t>(product(shape)));
    for (float& x : v) x = dist(rng);
    const int32_t id = static_cast<int32_t>(inputs.size());
    inputs.push_back(std::move(v));
    constant.push_back(is_constant);
    call.inputs.push_back(TensorRef{id, shape, row_major(shape), 0});
    return id;
  }
  void set_output(const Dims& shape) {
    output.assign(static_cast<size_t>(product(shape)), 0.0f);
    call.outputs = {TensorRef{static_cast<int32_t>(inputs.size()), shape, row_major(shape), 0}};
  }
  std::vector<ExternBuffer> input_buffers() {
    std::vector<ExternBuffer> b;
    for (auto& v : inputs) b.push_back({v.data(), DType::F32, static_cast<int64_t>(v.size())});
    return b;
  }
  ExternBuffer output_buffer() {
    return {output.data(), DType::F32, static_cast<int64_t>(output.size())};
  }
};

// Epilogues appended to a case: a per-output-column bias (MatMul) or per-channel operand
// (Conv), a full-shape residual, and unary activations.
enum class Epi { None, BiasGelu, BiasResidual, Relu, ResidualRelu };

void add_epilogue(OpCase* c, Epi epi, bool conv, std::mt19937& rng) {
  const Dims& y = c->call.outputs[0].shape;
  auto broadcast = [&](size_t keep_dim) {  // a weight along one dim of the output
    const int32_t id = c->add_input({y[keep_dim]}, true, rng);
    TensorRef& r = c->call.inputs[static_cast<size_t>(id)];
    r.shape = y;
    r.strides.assign(y.size(), 0);
    r.strides[keep_dim] = 1;
    return id;
  };
  auto full = [&] { return c->add_input(y, false, rng); };
  // append_post_op keeps the call's epilogue body and its chain of post-ops together (the
  // extern reads its operands' count from the body).
  auto post = [&](PostOp p) { append_post_op(&c->call, p); };
  switch (epi) {
    case Epi::None:
      return;
    case Epi::BiasGelu:
      post({PostOpKind::Add, 0, 0, broadcast(conv ? 1 : y.size() - 1)});
      post({PostOpKind::GeluErf});
      c->name += "+bias+gelu";
      break;
    case Epi::BiasResidual:
      post({PostOpKind::Add, 0, 0, broadcast(conv ? 1 : y.size() - 1)});
      post({PostOpKind::Add, 0, 0, full()});
      c->name += "+bias+res";
      break;
    case Epi::Relu:
      post({PostOpKind::Relu});
      c->name += "+relu";
      break;
    case Epi::ResidualRelu:
      post({PostOpKind::Add, 0, 0, full()});
      post({PostOpKind::Relu});
      c->name += "+res+relu";
      break;
  }
  // Post-op operands may not alias the output; give the output its own buffer id again.
  c->call.outputs[0].buffer = static_cast<int32_t>(c->inputs.size());
}

// C[batch, M, N] = A[batch, M, K] @ B[(batch), K, N]; B is a weight (constant, shared by the
// batch) unless `b_activation`; `bt` stores B transposed (a [N, K] weight, as Gemm transB).
OpCase matmul_case(const std::string& name, int64_t batch, int64_t m, int64_t k, int64_t n,
                   bool b_activation, bool bt, Epi epi, std::mt19937& rng) {
  OpCase c;
  c.name = name;
  c.call.op = ExternOp::MatMul;
  c.call.origin = name;
  const Dims bd = batch > 1 ? Dims{batch} : Dims{};
  auto with_batch = [&](Dims d) {
    d.insert(d.begin(), bd.begin(), bd.end());
    return d;
  };
  c.add_input(with_batch({m, k}), false, rng);
  if (b_activation) {
    c.add_input(with_batch({k, n}), false, rng);
  } else {
    c.add_input(bt ? Dims{n, k} : Dims{k, n}, true, rng);
    TensorRef& b = c.call.inputs[1];
    b.shape = with_batch({k, n});
    b.strides = with_batch(bt ? Dims{1, k} : Dims{n, 1});
    if (batch > 1) b.strides[0] = 0;
  }
  c.set_output(with_batch({m, n}));
  c.flops = 2.0 * static_cast<double>(std::max<int64_t>(batch, 1) * m * k * n);
  c.shape = (batch > 1 ? std::to_string(batch) + "x" : "") + std::to_string(m) + "x" +
            std::to_string(k) + "x" + std::to_string(n) + (bt ? " Bt" : "") +
            (b_activation ? "" : " constB");
  add_epilogue(&c, epi, false, rng);
  return c;
}

// Conv NCHW: X [1, c, h, w], W [m, c / group, k, k] and B [m] constant, pads `pad` all round.
OpCase conv_case(const std::string& name, int64_t c_in, int64_t m, int64_t group, int64_t hw,
                 int64_t k, int64_t stride, int64_t pad, Epi epi, std::mt19937& rng) {
  OpCase c;
  c.name = name;
  c.call.op = ExternOp::Conv;
  c.call.origin = name;
  if (group != 1) c.call.ints["group"] = group;
  for (const char* d : {"0", "1"}) {
    c.call.ints[std::string("stride") + d] = stride;
    c.call.ints[std::string("pad_begin") + d] = pad;
    c.call.ints[std::string("pad_end") + d] = pad;
  }
  c.add_input({1, c_in, hw, hw}, false, rng);
  c.add_input({m, c_in / group, k, k}, true, rng);
  c.add_input({m}, true, rng);
  const int64_t out = (hw + 2 * pad - k) / stride + 1;
  c.set_output({1, m, out, out});
  c.flops = 2.0 * static_cast<double>(m * out * out * (c_in / group) * k * k);
  c.shape = std::to_string(c_in) + "->" + std::to_string(m) + " " + std::to_string(hw) + "^2 " +
            std::to_string(k) + "x" + std::to_string(k) + " s" + std::to_string(stride) +
            (group != 1 ? " g" + std::to_string(group) : "");
  add_epilogue(&c, epi, true, rng);
  return c;
}

std::vector<OpCase> all_cases() {
  std::mt19937 rng(2024);
  std::vector<OpCase> v;
  auto mm = [&](const char* name, int64_t b, int64_t m, int64_t k, int64_t n, bool act, bool bt,
                Epi e = Epi::None) { v.push_back(matmul_case(name, b, m, k, n, act, bt, e, rng)); };
  auto conv = [&](const char* name, int64_t c, int64_t m, int64_t g, int64_t hw, int64_t k,
                  int64_t s, int64_t p, Epi e = Epi::None) {
    v.push_back(conv_case(name, c, m, g, hw, k, s, p, e, rng));
  };
  mm("mm512", 1, 512, 512, 512, true, false);
  mm("mm512_w", 1, 512, 512, 512, false, false);
  mm("bert_qkv", 1, 128, 768, 768, false, false);
  mm("bert_ffn1", 1, 128, 768, 3072, false, false);
  mm("bert_ffn2", 1, 128, 3072, 768, false, false);
  mm("bert_qkv_bt", 1, 128, 768, 768, false, true);
  mm("mlp_m32", 1, 32, 1024, 1024, false, false);
  mm("mlp_m8", 1, 8, 1024, 1024, false, false);
  mm("mlp_m4", 1, 4, 768, 768, false, false);
  mm("gemv_256", 1, 1, 256, 256, false, false);
  mm("gemv_768", 1, 1, 768, 768, false, false);
  mm("gemv_768_bt", 1, 1, 768, 768, false, true);
  mm("gemv_768x3072", 1, 1, 768, 3072, false, false);
  mm("gemv_3072x768", 1, 1, 3072, 768, false, false);
  mm("batch_w", 4, 128, 768, 768, false, false);
  mm("attn_qk", 12, 128, 64, 128, true, false);
  mm("attn_pv", 12, 128, 128, 64, true, false);
  mm("bert_ffn1", 1, 128, 768, 3072, false, false, Epi::BiasGelu);
  mm("bert_qkv", 1, 128, 768, 768, false, false, Epi::BiasResidual);
  conv("conv3x3_64", 64, 64, 1, 56, 3, 1, 1);
  conv("conv3x3_64", 64, 64, 1, 56, 3, 1, 1, Epi::Relu);
  conv("conv1x1_256_64", 256, 64, 1, 56, 1, 1, 0);
  conv("conv1x1_64_256", 64, 256, 1, 56, 1, 1, 0, Epi::ResidualRelu);
  conv("dw3x3_s1", 144, 144, 144, 56, 3, 1, 1);
  conv("dw3x3_s2", 144, 144, 144, 56, 3, 2, 1);
  conv("dw3x3_s1", 144, 144, 144, 56, 3, 1, 1, Epi::Relu);
  conv("stem7x7", 3, 64, 1, 224, 7, 2, 3);
  return v;
}

// Normwise relative error of `got` against the reference backend's result.
double error_vs_reference(OpCase& c) {
  const std::vector<float> got = c.output;
  std::vector<ExternBuffer> in = c.input_buffers();
  ExternBuffer out = c.output_buffer();
  make_backend("reference")->prepare_extern(c.call)->run(in.data(), &out);
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = static_cast<double>(got[i]) - c.output[i];
    num += d * d;
    den += static_cast<double>(c.output[i]) * c.output[i];
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

struct Timing {
  int64_t iters = 1;       // runs per sample
  std::vector<double> ms;  // per run, one entry per sample
};

// Calibrates runs per sample to last about `min_ms`, then takes `reps` samples.
Timing time_runs(const std::function<void()>& run, int64_t reps, double min_ms) {
  Timing t;
  Clock::time_point start = Clock::now();
  run();  // warm-up: caches, page faults, prepacked weights touched
  const double first = ms_since(start);
  t.iters = std::max<int64_t>(1, static_cast<int64_t>(min_ms / std::max(first, 1e-3)));
  for (int64_t r = 0; r < reps; ++r) {
    start = Clock::now();
    for (int64_t i = 0; i < t.iters; ++i) run();
    t.ms.push_back(ms_since(start) / static_cast<double>(t.iters));
  }
  return t;
}

const std::vector<OptionSpec> kOptions = {{"reps", true}, {"min-ms", true}, {"threads", true},
                                          {"only", true}, {"target", true}, {"json", true}};

bool selected(const std::vector<std::string>& only, const std::string& name) {
  if (only.empty()) return true;
  for (const std::string& o : only)
    if (name.find(o) != std::string::npos) return true;
  return false;
}

}  // namespace

int portable_ops_command(const std::vector<std::string>& arg_list) {
  const CliArgs args = parse_cli_args("portable-ops", arg_list, kOptions);
  if (!args.positional.empty()) throw UsageError("portable-ops takes no positional arguments");
  const int64_t reps = count_option(args, "reps", 7);
  const double min_ms = args.has("min-ms") ? parse_number("min-ms", args.get("min-ms")) : 50.0;
  BackendOptions options;
  options.threads = static_cast<int>(count_option(args, "threads", 1));
  const std::vector<std::string> only = split_commas(args.get("only"));
  if (args.has("target")) {  // a narrower SIMD target than the best, e.g. 4-lane SSE4 like wasm
    const std::vector<std::string> targets = simd::available_targets();
    if (std::find(targets.begin(), targets.end(), args.get("target")) == targets.end())
      throw UsageError("unknown --target '" + args.get("target") + "'");
    simd::pin_target(args.get("target"));
  }
  const std::unique_ptr<KernelBackend> backend = make_backend("portable", options);

  // Other processes on a shared machine only ever slow a run down: the fastest run is the
  // best estimate of the peak.
  const Summary peak_runs = fma_peak_gflops(options.threads, std::max<int64_t>(reps, 5));
  const double peak = peak_runs.max;
  std::printf(
      "portable target %s, %d thread(s): FMA peak %.1f GFLOP/s (best; median %.1f) from 12 "
      "independent multiply-add chains\n",
      portable_target_name(), options.threads, peak, peak_runs.median);
  Report report("portable-ops", arg_list);
  report.add({{"kind", json_str("fma_peak")},
              {"target", json_str(portable_target_name())},
              {"threads", json_num(options.threads)},
              {"best_gflops", json_num(peak)},
              {"median_gflops", json_num(peak_runs.median)}});
  Table table({"case", "shape", "median ms", "GFLOP/s", "best GFLOP/s", "% peak", "rel err"});
  int wrong = 0;
  for (OpCase& c : all_cases()) {
    if (!selected(only, c.name)) continue;
    std::vector<ExternBuffer> in = c.input_buffers(), known(in.size());
    for (size_t i = 0; i < in.size(); ++i)
      if (c.constant[i]) known[i] = in[i];
    ExternBuffer out = c.output_buffer();
    const std::unique_ptr<PreparedExtern> prepared = backend->prepare_extern(c.call, known);
    const Timing t = time_runs([&] { prepared->run(in.data(), &out); }, reps, min_ms);
    const double err = error_vs_reference(c);
    if (!(err <= 1e-4)) ++wrong;
    const Summary s = summarize(t.ms);
    const double gflops = c.flops / s.median / 1e6, best = c.flops / s.min / 1e6;
    table.add({c.name, c.shape, fmt(s.median, 3), fmt(gflops, 1), fmt(best, 1),
               fmt(100 * gflops / peak, 1), err <= 1e-4 ? fmt(err, 8) : "WRONG " + fmt(err, 6)});
    report.add({{"kind", json_str(extern_op_name(c.call.op))},
                {"case", json_str(c.name)},
                {"shape", json_str(c.shape)},
                {"threads", json_num(options.threads)},
                {"flops", json_num(c.flops)},
                {"median_gflops", json_num(gflops)},
                {"best_gflops", json_num(best)},
                {"fraction_of_peak", json_num(gflops / peak)},
                {"rel_err", json_num(err)},
                {"runs_per_sample", json_num(static_cast<double>(t.iters))},
                {"samples_ms", json_array(t.ms)}});
  }
  table.print();
  std::printf(
      "GFLOP/s: 2*M*N*K (conv: 2*out*M*C/group*kernel) per median run; rel err: "
      "normwise vs the reference backend (limit 1e-4)\n");
  report.write(args.get("json"));
  return wrong == 0 ? 0 : 1;
}

}  // namespace bench
}  // namespace ferrite
