// `ferrite run`: load a model, feed it (.npy files or generated inputs), compile, run, print
// the outputs and the times, optionally write the outputs and benchmark.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <unordered_map>

#include "bindings/cli/cli.h"
#include "bindings/cli/cli_model.h"
#include "bindings/cli/npy.h"
#include "bindings/cli/tensor_values.h"
#include "bindings/engine/engine.h"

namespace ferrite {
namespace {

using Clock = std::chrono::steady_clock;
using Feeds = std::vector<std::pair<std::string, const Tensor*>>;

const std::vector<OptionSpec> kRunOptions = {
    {"input", true},        {"output-dir", true},        {"backend", true},    {"bench", true},
    {"warmup", true},       {"bench-json", true},        {"dump", true},       {"no-fusion", false},
    {"isa", true},          {"threads", true},           {"fast-math", false}, {"profile", false},
    {"memory-limit", true}, {"max-unrolled-nodes", true}};

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

void print_ms(const char* what, double ms) {
  std::printf("%s: %.3f\n", what, ms);
}

// Compiles for the fed shapes and reports the time. If compiling fails, running once
// first reports a bad feed (unknown name, wrong shape, ...) in the model's terms, since
// Engine::run checks the feeds before it compiles.
double compile_for(Engine& engine, const Feeds& feeds) {
  std::vector<std::vector<int64_t>> shapes(engine.inputs().size());
  std::unordered_map<std::string, std::vector<size_t>> inputs_named;
  for (size_t i = 0; i < engine.inputs().size(); ++i)
    inputs_named[engine.inputs()[i].name].push_back(i);
  for (const auto& feed : feeds) {
    auto it = inputs_named.find(feed.first);
    if (it == inputs_named.end()) continue;
    for (size_t i : it->second) shapes[i] = feed.second->shape();
  }
  const Clock::time_point start = Clock::now();
  if (engine.runs_in_parts()) {
    // Each part compiles for the sizes the part before it produced: inside run.
    run_once(engine, feeds);
    std::printf("note: the model runs in parts; compile_ms includes a run\n");
    return ms_since(start);
  }
  try {
    engine.session_for(shapes);
  } catch (const NeedsInputValueError&) {
    // The plan depends on input values (a shape fed as an input, ...): the engine compiles
    // it inside run, for these values.
    run_once(engine, feeds);
    std::printf("note: the plan is specialized on input values; compile_ms includes a run\n");
  } catch (const NeedsCutError&) {
    run_once(engine, feeds);  // cuts the model where the compile asked to
    std::printf("note: the model runs in parts; compile_ms includes a run\n");
  } catch (const Error&) {
    run_once(engine, feeds);
    throw;
  }
  return ms_since(start);
}

std::string file_name_for(const std::string& output_name) {
  std::string s = output_name.empty() ? "output" : output_name;
  for (char& c : s) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    if (!ok) c = '_';
  }
  return s + ".npy";
}

std::string tensor_text(const Tensor& t) {
  return format_type(t.dtype(), t.shape()) + " " + format_values(t, 8);
}

// A tensor on its line; a sequence's tensors on the lines after ("  [k] ..."); "no value".
void print_outputs(const Engine& engine, const std::vector<EngineValue>& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string name = i < engine.outputs().size() ? engine.outputs()[i].name : "?";
    const EngineValue& v = outputs[i];
    if (v.is_tensor()) {
      std::printf("output '%s': %s\n", printable(name).c_str(), tensor_text(v.tensor("")).c_str());
    } else if (v.is_none()) {
      std::printf("output '%s': no value\n", printable(name).c_str());
    } else {
      std::printf("output '%s': %s\n", printable(name).c_str(), v.type_text().c_str());
      for (size_t k = 0; k < v.items("").size(); ++k)
        std::printf("  [%zu] %s\n", k, tensor_text(*v.items("")[k]).c_str());
    }
  }
}

// NAME.npy per tensor output; a sequence's tensors as NAME_0.npy, NAME_1.npy, ...
void write_outputs(const std::string& dir, const Engine& engine,
                   const std::vector<EngineValue>& outputs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail("cannot create output directory '", dir, "': ", ec.message());
  std::set<std::string> used;  // "a/b" and "a_b" map to one name: the second gets its index
  auto write = [&](const std::string& name, size_t i, const Tensor& t) {
    std::string file = file_name_for(name);
    for (int k = 0; !used.insert(file).second; ++k) {
      file = str_cat(file.substr(0, file.size() - 4), '_', i, k ? str_cat('_', k) : "", ".npy");
    }
    const std::string path = (std::filesystem::path(dir) / file).string();
    write_npy(path, t);
    std::printf("wrote %s\n", path.c_str());
  };
  for (size_t i = 0; i < outputs.size() && i < engine.outputs().size(); ++i) {
    const std::string& name = engine.outputs()[i].name;
    if (outputs[i].is_tensor()) write(name, i, outputs[i].tensor(""));
    if (!outputs[i].is_sequence()) continue;
    for (size_t k = 0; k < outputs[i].items("").size(); ++k)
      write(str_cat(name, '_', k), i, *outputs[i].items("")[k]);
  }
}

// The times of one `run`, for --bench-json.
struct RunTimes {
  double load_ms = 0, compile_ms = 0, first_run_ms = 0;
  int64_t warmup = 0;
  std::vector<double> samples_ms;  // the timed runs, in order
};

// Warm-up runs (caches, page faults, lazy initialization), then `runs` timed runs.
void bench(Engine& engine, const Feeds& feeds, int64_t warmup, int64_t runs, RunTimes* times) {
  for (int64_t i = 0; i < warmup; ++i) run_once(engine, feeds);
  times->warmup = warmup;
  if (!engine.runs_in_parts())
    engine.session_for_feeds(feeds).reset_profile();  // profile the timed runs only
  for (int64_t i = 0; i < runs; ++i) {
    const Clock::time_point start = Clock::now();
    run_once(engine, feeds);
    times->samples_ms.push_back(ms_since(start));
  }
  std::vector<double> sorted = times->samples_ms;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  std::printf("bench_runs: %lld\n", static_cast<long long>(n));
  print_ms("min_ms", sorted.front());
  print_ms("median_ms", median);
}

// --profile: each step's time per run, slowest first, and the sum.
void print_profile(const Session& session) {
  std::vector<StepTime> steps = session.profile();
  std::stable_sort(steps.begin(), steps.end(),
                   [](const StepTime& a, const StepTime& b) { return a.total_ms > b.total_ms; });
  double total = 0;
  int64_t runs = 0;
  for (const StepTime& s : steps) {
    total += s.total_ms;
    runs = std::max(runs, s.runs);
  }
  if (runs == 0) return;
  std::printf("profile: %zu steps, ms per run over %lld runs\n", steps.size(),
              static_cast<long long>(runs));
  for (const StepTime& s : steps)
    std::printf("  %9.4f %5.1f%%  %s\n", s.total_ms / static_cast<double>(runs),
                total > 0 ? 100 * s.total_ms / total : 0.0, printable(s.label).c_str());
  std::printf("profile_total_ms: %.4f\n", total / static_cast<double>(runs));
}

// One JSON object: load_ms, compile_ms, ready_ms (load + compile: until the first run can
// start), first_run_ms, warmup (count) and samples_ms (every timed run, in order).
void write_bench_json(const std::string& path, const RunTimes& t) {
  std::ofstream out(path);
  if (!out) fail("cannot write --bench-json file '", path, "'");
  char buf[64];
  auto num = [&](double v) {
    std::snprintf(buf, sizeof buf, "%.6f", v);
    return std::string(buf);
  };
  out << "{\"load_ms\": " << num(t.load_ms) << ", \"compile_ms\": " << num(t.compile_ms)
      << ", \"ready_ms\": " << num(t.load_ms + t.compile_ms)
      << ", \"first_run_ms\": " << num(t.first_run_ms) << ", \"warmup\": " << t.warmup
      << ", \"samples_ms\": [";
  for (size_t i = 0; i < t.samples_ms.size(); ++i) {
    out << (i ? ", " : "") << num(t.samples_ms[i]);
  }
  out << "]}\n";
  if (!out.flush()) fail("cannot write --bench-json file '", path, "'");
}

}  // namespace

int run_command(const std::vector<std::string>& arg_list) {
  const CliArgs args = parse_cli_args("run", arg_list, kRunOptions);
  if (args.positional.size() != 1) throw UsageError("run needs exactly one MODEL argument");
  const int64_t bench_runs = args.has("bench") ? parse_count("bench", args.get("bench")) : 0;
  if (args.has("bench") && bench_runs == 0) throw UsageError("--bench needs at least 1 run");
  const int64_t warmup = args.has("warmup") ? parse_count("warmup", args.get("warmup")) : 1;
  const std::string bench_json = args.get("bench-json");
  if ((args.has("warmup") || args.has("bench-json")) && bench_runs == 0) {
    throw UsageError("--warmup and --bench-json need --bench N");
  }
  EngineOptions options;
  apply_session_options(args, &options.session);
  apply_compile_options(args, &options);
  options.session.profile = args.has("profile");
  const std::string output_dir = args.get("output-dir");
  std::vector<std::pair<std::string, Tensor>> inputs = read_inputs(args);

  const std::string& model = args.positional[0];
  Clock::time_point start = Clock::now();
  std::unique_ptr<Engine> engine = load_model(model, options);
  const double load_ms = ms_since(start);
  std::printf("model: %s (inputs: %zu, outputs: %zu, backend: %s)\n", model.c_str(),
              engine->inputs().size(), engine->outputs().size(), options.session.backend.c_str());
  add_generated_inputs(*engine, options, &inputs);
  Feeds feeds;
  for (const auto& in : inputs) feeds.emplace_back(in.first, &in.second);

  const double compile_ms = compile_for(*engine, feeds);
  start = Clock::now();
  const std::vector<EngineValue> outputs = run_once(*engine, feeds);
  const double run_ms = ms_since(start);
  print_outputs(*engine, outputs);
  print_ms("load_ms", load_ms);
  print_ms("compile_ms", compile_ms);
  print_ms("run_ms", run_ms);
  std::printf("compiles: %lld\n", static_cast<long long>(engine->compiles()));
  if (!engine->symbolic_status().empty())
    std::printf("symbolic: %s\n", printable(engine->symbolic_status()).c_str());
  if (!output_dir.empty()) write_outputs(output_dir, *engine, outputs);
  if (bench_runs > 0) {
    RunTimes times;
    times.load_ms = load_ms;
    times.compile_ms = compile_ms;
    times.first_run_ms = run_ms;
    bench(*engine, feeds, warmup, bench_runs, &times);
    if (!bench_json.empty()) write_bench_json(bench_json, times);
  }
  if (options.session.profile && engine->runs_in_parts())
    std::printf("note: no profile: the model runs in parts\n");
  else if (options.session.profile)
    print_profile(engine->session_for_feeds(feeds));
  std::fflush(stdout);
  return 0;
}

}  // namespace ferrite
