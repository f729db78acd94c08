// `compile` and `models`: what a backend costs at session load (prepare per kernel) and
// what it gains per run (whole-model latency through the engine).
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include "bindings/cli/cli_model.h"
#include "bindings/cli/tensor_values.h"
#include "compiler/plan/error.h"
#include "runtime/backend.h"
#include "tests/perf/kernel_bench.h"

namespace ferrite {
namespace bench {
namespace {

using Inputs = std::vector<std::pair<std::string, Tensor>>;
using Feeds = std::vector<std::pair<std::string, const Tensor*>>;

// The inputs `ferrite run` generates when none are given (same seeds; symbolic dims 1),
// without its notes.
Inputs generated_inputs(const Engine& engine) {
  Inputs inputs;
  for (size_t i = 0; i < engine.inputs().size(); ++i) {
    const IoInfo& info = engine.inputs()[i];
    std::vector<int64_t> shape = info.shape;
    for (int64_t& d : shape) d = std::max<int64_t>(d, 1);
    inputs.emplace_back(info.name, generated_input(info.dtype, shape, 0x5EEDF00D + i));
  }
  return inputs;
}

Feeds feeds_of(const Inputs& inputs) {
  Feeds feeds;
  for (const auto& in : inputs) feeds.emplace_back(in.first, &in.second);
  return feeds;
}

std::string summary_cells(const Summary& s) {
  return fmt(s.median, 3) + " / " + fmt(s.p90, 3) + " / " + fmt(s.max, 3);
}

// ---- compile ----------------------------------------------------------------------------

const std::vector<OptionSpec> kCompileOptions = {
    {"backend", true}, {"isa", true}, {"threads", true}, {"reps", true}, {"json", true}};

// The plan's kernels for the model's generated inputs. The plan is compiled with the
// reference backend so that the backend under test has prepared nothing yet (a JIT may
// keep a cache of generated code).
std::vector<Kernel> plan_kernels(const std::string& model) {
  EngineOptions options;
  options.session.backend = "reference";
  std::unique_ptr<Engine> engine = load_model(model, options);
  const Inputs inputs = generated_inputs(*engine);
  return engine->session_for_feeds(feeds_of(inputs)).plan().kernels;
}

double time_prepare(const KernelBackend& backend, const Kernel& k) {
  const Clock::time_point start = Clock::now();
  std::unique_ptr<PreparedKernel> prepared = backend.prepare(k);
  return ms_since(start);
}

struct CompileTimes {
  size_t kernels = 0;
  std::vector<double> first_ms;    // per distinct kernel: its first prepare in this process
  std::vector<double> fresh_ms;    // per distinct kernel: median of reps, fresh backends
  std::vector<double> session_ms;  // per kernel in plan order, one backend for all
};

CompileTimes time_model(const std::string& model, const std::string& backend_name,
                        const BackendOptions& options, int64_t reps) {
  const std::vector<Kernel> kernels = plan_kernels(model);
  CompileTimes t;
  t.kernels = kernels.size();
  std::map<std::string, size_t> distinct;  // kernel listing without its name -> index
  for (size_t i = 0; i < kernels.size(); ++i) {
    Kernel unnamed = kernels[i];
    unnamed.name.clear();
    if (!distinct.emplace(kernel_to_string(unnamed), i).second) continue;
    std::vector<double> ms;
    for (int64_t r = 0; r < reps; ++r) {
      std::unique_ptr<KernelBackend> backend = make_backend(backend_name, options);
      ms.push_back(time_prepare(*backend, kernels[i]));
    }
    t.first_ms.push_back(ms.front());
    t.fresh_ms.push_back(summarize(ms).median);
  }
  std::unique_ptr<KernelBackend> backend = make_backend(backend_name, options);
  for (const Kernel& k : kernels) t.session_ms.push_back(time_prepare(*backend, k));
  return t;
}

}  // namespace

int compile_command(const std::vector<std::string>& arg_list) {
  const CliArgs args = parse_cli_args("compile", arg_list, kCompileOptions);
  if (args.positional.empty()) throw UsageError("compile needs at least one MODEL.onnx");
  if (!args.has("backend")) throw UsageError("compile needs --backend NAME");
  const std::string backend_name = args.get("backend");
  BackendOptions options;
  options.isa = args.get("isa");
  options.threads = static_cast<int>(count_option(args, "threads", 1));
  const int64_t reps = count_option(args, "reps", 5);
  make_backend(backend_name, options);  // an unknown name fails before any model loads

  Report report("compile", arg_list);
  Table table({"model", "kernels", "distinct", "first ms: median / p90 / max",
               "fresh ms: median / p90 / max", "session ms: total"});
  std::vector<double> all_first, all_fresh;
  int status = 0;
  for (const std::string& model : args.positional) {
    CompileTimes t;
    try {
      t = time_model(model, backend_name, options, reps);
    } catch (const Error& e) {
      table.add({model, "error: " + std::string(e.what())});
      report.add({{"model", json_str(model)}, {"error", json_str(e.what())}});
      status = 1;
      continue;
    }
    double session_total = 0;
    for (double v : t.session_ms) session_total += v;
    table.add({model, std::to_string(t.kernels), std::to_string(t.fresh_ms.size()),
               summary_cells(summarize(t.first_ms)), summary_cells(summarize(t.fresh_ms)),
               fmt(session_total, 3)});
    all_first.insert(all_first.end(), t.first_ms.begin(), t.first_ms.end());
    all_fresh.insert(all_fresh.end(), t.fresh_ms.begin(), t.fresh_ms.end());
    report.add({{"model", json_str(model)},
                {"backend", json_str(backend_name)},
                {"isa", json_str(options.isa)},
                {"kernels", json_num(static_cast<double>(t.kernels))},
                {"distinct_kernels", json_num(static_cast<double>(t.fresh_ms.size()))},
                {"first_ms", json_array(t.first_ms)},
                {"fresh_median_ms", json_array(t.fresh_ms)},
                {"session_ms", json_array(t.session_ms)}});
  }
  table.print();
  const Summary first = summarize(all_first), fresh = summarize(all_fresh);
  std::printf(
      "backend %s: %zu distinct kernels; prepare median %.3f ms (first in process), "
      "%.3f ms (fresh backend, median of %lld); target for the JIT: median < 0.5 ms\n",
      backend_name.c_str(), fresh.n, first.median, fresh.median, static_cast<long long>(reps));
  report.add({{"overall", json_str(backend_name)},
              {"distinct_kernels", json_num(static_cast<double>(fresh.n))},
              {"first_median_ms", json_num(first.median)},
              {"first_p90_ms", json_num(first.p90)},
              {"fresh_median_ms", json_num(fresh.median)},
              {"fresh_p90_ms", json_num(fresh.p90)}});
  report.write(args.get("json"));
  return status;
}

// ---- models -----------------------------------------------------------------------------
namespace {

const std::vector<OptionSpec> kModelsOptions = {
    {"backends", true}, {"rounds", true}, {"max-seconds", true}, {"target-ms", true},
    {"threads", true},  {"isa", true},    {"json", true}};

// One backend on one model: its engine, inputs and samples.
struct Contender {
  std::string backend;
  std::unique_ptr<Engine> engine;
  Inputs inputs;
  std::vector<Tensor> outputs;  // from the warm-up run
  double ready_ms = 0, spent_ms = 0;
  int64_t iters = 1;  // runs per round
  std::vector<double> ms;
  std::string error, check = "-";
};

std::vector<std::string> default_backends() {
  std::vector<std::string> names = backend_names();
  auto jit = std::find(names.begin(), names.end(), "jit");
  if (jit != names.end()) std::rotate(names.begin(), jit, jit + 1);
  return names;
}

void start(Contender* c, const std::string& model, const EngineOptions& options, double target_ms) {
  try {
    const Clock::time_point t0 = Clock::now();
    c->engine = load_model(model, options);
    c->inputs = generated_inputs(*c->engine);
    c->engine->session_for_feeds(feeds_of(c->inputs));
    c->ready_ms = ms_since(t0);
    c->outputs = c->engine->run(feeds_of(c->inputs));  // first run: lazy work, page faults
    Clock::time_point t1 = Clock::now();
    c->engine->run(feeds_of(c->inputs));
    const double once = ms_since(t1);
    c->spent_ms = once;
    c->iters = std::clamp<int64_t>(static_cast<int64_t>(target_ms / std::max(once, 1e-3)), 1, 1000);
  } catch (const Error& e) {
    c->error = e.what();
  }
}

void run_round(Contender* c, double max_ms) {
  if (!c->error.empty() || (c->spent_ms >= max_ms && !c->ms.empty())) return;
  const Feeds feeds = feeds_of(c->inputs);
  for (int64_t i = 0; i < c->iters && (c->spent_ms < max_ms || c->ms.empty()); ++i) {
    const Clock::time_point t0 = Clock::now();
    c->engine->run(feeds);
    c->ms.push_back(ms_since(t0));
    c->spent_ms += c->ms.back();
  }
}

// Outputs against the first backend's, normwise (1e-4 of the largest magnitude).
void check_against(Contender* c, const Contender& first) {
  if (!c->error.empty() || !first.error.empty() || c == &first) return;
  c->check = "ok";
  for (size_t i = 0; i < c->outputs.size() && i < first.outputs.size(); ++i) {
    const std::string diff = compare_tensors_normwise(c->outputs[i], first.outputs[i], 1e-4);
    if (!diff.empty()) c->check = "MISMATCH: " + diff;
  }
}

}  // namespace

int models_command(const std::vector<std::string>& arg_list) {
  const CliArgs args = parse_cli_args("models", arg_list, kModelsOptions);
  if (args.positional.empty()) throw UsageError("models needs at least one MODEL.onnx");
  const std::vector<std::string> backends =
      args.has("backends") ? split_commas(args.get("backends")) : default_backends();
  if (backends.empty()) throw UsageError("--backends needs at least one name");
  for (const std::string& b : backends) checked_backend(b);
  const int64_t rounds = count_option(args, "rounds", 5);
  const double max_ms =
      1000 * (args.has("max-seconds") ? parse_number("max-seconds", args.get("max-seconds")) : 60);
  const double target_ms =
      args.has("target-ms") ? parse_number("target-ms", args.get("target-ms")) : 200;
  EngineOptions options;
  options.session.threads = static_cast<int>(count_option(args, "threads", 1));
  options.session.isa = args.get("isa");

  Report report("models", arg_list);
  Table table({"model", "backend", "median ms", "min ms", "runs", "ready ms",
               backends[0] + " speedup", "check"});
  for (const std::string& model : args.positional) {
    std::vector<Contender> cs(backends.size());
    for (size_t b = 0; b < backends.size(); ++b) {
      cs[b].backend = backends[b];
      options.session.backend = backends[b];
      start(&cs[b], model, options, target_ms);
    }
    for (int64_t r = 0; r < rounds; ++r) {  // round-robin, starting one later each round
      for (size_t j = 0; j < cs.size(); ++j) run_round(&cs[(r + j) % cs.size()], max_ms);
    }
    const double first_median = summarize(cs[0].ms).median;
    for (Contender& c : cs) {
      check_against(&c, cs[0]);
      if (!c.error.empty()) {
        table.add({model, c.backend, "error: " + c.error});
        report.add({{"model", json_str(model)},
                    {"backend", json_str(c.backend)},
                    {"error", json_str(c.error)}});
        continue;
      }
      const Summary s = summarize(c.ms);
      const bool ratio = &c != &cs[0] && first_median > 0;
      table.add({model, c.backend, fmt(s.median, 3), fmt(s.min, 3), std::to_string(s.n),
                 fmt(c.ready_ms, 1), ratio ? fmt(s.median / first_median, 2) + "x" : "-", c.check});
      report.add({{"model", json_str(model)},
                  {"backend", json_str(c.backend)},
                  {"median_ms", json_num(s.median)},
                  {"min_ms", json_num(s.min)},
                  {"ready_ms", json_num(c.ready_ms)},
                  {"speedup_of_first", ratio ? json_num(s.median / first_median) : "null"},
                  {"check", json_str(c.check)},
                  {"samples_ms", json_array(c.ms)}});
    }
  }
  table.print();
  std::printf("speedup: this backend's median / %s's (above 1: %s is faster)\n",
              backends[0].c_str(), backends[0].c_str());
  report.write(args.get("json"));
  return 0;
}

}  // namespace bench
}  // namespace ferrite
