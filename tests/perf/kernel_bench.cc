// ferrite_kernel_bench: kernel-level benchmarks for the code generators (native only).
//   stream   STREAM triad bandwidth, the ceiling for memory-bound kernels
//   chain    a fused chain of 8 pointwise ops over 64M floats on a backend, as a fraction
//            of the triad bandwidth measured in the same run
//   compile  backend->prepare(kernel) time for every kernel of some models
//   models   whole-model latency per backend through the engine
//   ops      MatMul and Conv externs (oneDNN, portable) as a fraction of the FMA peak
//   portable-ops  GFLOP/s of the portable MatMul and Conv externs against the FMA peak
// This file holds main and the shared helpers; see tests/perf/README.md.
#include "tests/perf/kernel_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <thread>

#include "compiler/plan/error.h"
#ifdef FERRITE_HAS_JIT
#include "jit/jit_backend.h"
#endif

namespace ferrite {
namespace bench {

Summary summarize(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  s.n = n;
  s.min = v.front();
  s.max = v.back();
  s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  s.p90 = v[static_cast<size_t>(std::ceil(0.9 * static_cast<double>(n))) - 1];
  return s;
}

std::string fmt(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

void Table::print() const {
  std::vector<size_t> width(header_.size(), 0);
  auto widen = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  };
  widen(header_);
  for (const auto& row : rows_) widen(row);
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      const std::string pad(width[i] - row[i].size(), ' ');
      line += i == 0 ? row[i] + pad : "  " + pad + row[i];
    }
    std::printf("%s\n", line.c_str());
  };
  print_row(header_);
  for (const auto& row : rows_) print_row(row);
  std::fflush(stdout);
}

std::string json_num(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string json_str(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_array(const std::vector<double>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + json_num(values[i]);
  return out + "]";
}

namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  }
  return "unknown";
}

std::string json_object(const JsonRecord& r) {
  std::string out = "{";
  for (size_t i = 0; i < r.size(); ++i) {
    out += (i ? ", " : "") + json_str(r[i].first) + ": " + r[i].second;
  }
  return out + "}";
}

}  // namespace

void Report::write(const std::string& path) const {
  if (path.empty()) return;
  std::ofstream out(path);
  if (!out) fail("cannot write --json file '", path, "'");
  std::string args = "[";
  for (size_t i = 0; i < args_.size(); ++i) args += (i ? ", " : "") + json_str(args_[i]);
  args += "]";
  const char* omp_env = std::getenv("OMP_NUM_THREADS");
  const JsonRecord machine = {{"cpu", json_str(cpu_model())},
                              {"logical_cpus", json_num(std::thread::hardware_concurrency())},
                              {"omp_num_threads_env", omp_env ? json_str(omp_env) : "null"}};
  out << "{\"command\": " << json_str(command_) << ",\n \"args\": " << args
      << ",\n \"machine\": " << json_object(machine) << ",\n \"records\": [";
  for (size_t i = 0; i < records_.size(); ++i) {
    out << (i ? ",\n  " : "\n  ") << json_object(records_[i]);
  }
  out << "\n]}\n";
  if (!out.flush()) fail("cannot write --json file '", path, "'");
  std::printf("wrote %s\n", path.c_str());
}

int64_t count_option(const CliArgs& args, const char* name, int64_t fallback, int64_t min) {
  if (!args.has(name)) return fallback;
  const int64_t v = parse_count(name, args.get(name));
  if (v < min) {
    throw UsageError(str_cat("option '--", name, "' needs at least ", min, ", got ", v));
  }
  return v;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = std::min(s.find(',', start), s.size());
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

namespace {

constexpr char kUsage[] = R"(usage: ferrite_kernel_bench <command> [options]

commands (every one takes --json FILE: also write the results as JSON):
  stream [--n N] [--reps R] [--threads T]
      STREAM triad a[i] = b[i] + s*c[i] over N floats (default 2^26 = 64M; three 64-byte
      aligned arrays first touched by the same T threads, default 1), R timed runs
      (default 10) of each code variant the CPU runs (x86-64 baseline = SSE2, AVX2+FMA,
      AVX-512F). GB/s counts 12 bytes per element (read b and c, write a); the cache
      line a write allocates is not counted.
  chain --backend NAME [--isa avx2|avx512] [--threads T] [--n N] [--reps R]
      the triad first, then a hand-built kernel y[i] = f(x[i]) fusing 8 f32 ops (mul, add,
      max, min, mul, add, sub, abs) over N floats on backend NAME (prepared once, run R
      times); GB/s counts 8 bytes per element (read x, write y); the fraction is of the
      best triad variant's bandwidth (medians). Checks sampled outputs against C++:
      exit status 1 if one is wrong.
  compile --backend NAME [--isa ...] [--threads T] [--reps R] MODEL.onnx...
      compiles each model for its inputs (symbolic dims 1) and times backend->prepare
      for each distinct kernel of its plan: the first prepare in the process, and the
      median of R (default 5) prepares, each in a fresh backend object; and one backend
      preparing every kernel in plan order, as a session does. Milliseconds.
  models [--backends B1,B2,...] [--rounds R] [--max-seconds S] [--target-ms T]
         [--threads T] [--isa ...] MODEL.onnx...
      median latency per model and backend through the engine (default backends: every
      one this build has, jit first), backends alternating round-robin over R rounds
      (default 5) of about T ms each (default 200); a backend stops after S seconds of
      runs on a model (default 60). Ratios: how many times faster B1 is than each other
      backend. Outputs are compared with B1's (normwise, 1e-4).
  ops [--threads T] [--reps R] [--small]
      the FMA peak first (12 independent FMA chains per thread in an AVX-512 and an AVX2
      build; the best of 5 runs), then a 512x512x512 MatMul and a 64-channel 56x56 3x3
      Conv (pad 1, bias, batch 1) through the oneDNN externs (weights prepacked as plan
      constants, and not) and the portable ones, one run of each per round over R rounds
      (default 20): median and best ms, GFLOP/s of the median, % of the best peak. oneDNN
      runs on T threads (default 1), the portable externs on one. --small: a 64^3 MatMul
      and an 8-channel 14x14 Conv (smoke test). Exit status 1 when a oneDNN result differs
      from the portable one by more than 1e-3 or oneDNN refuses a call.

  portable-ops [--reps R] [--min-ms T] [--threads T] [--only NAME1,NAME2,...] [--target T]
      the FMA peak of the portable backend's Highway target, then GFLOP/s of its MatMul and
      Conv externs (prepared as a session does: weights constant) on square, MLP/transformer
      (M = 1 to 128), batched attention and CNN shapes, with and without fused epilogues:
      median of R (default 7) samples of about T ms (default 50) each; --only keeps the cases
      whose name contains one of the words; --target pins the Highway target (AVX2, SSE4,
      ...: the 4-lane SSE4 is the closest to wasm). Each result is checked against the reference
      backend (normwise 1e-4): exit status 1 if one is wrong.

Exit status: 0 success, 1 failure (a wrong result, an error), 2 usage error.
)";

int dispatch(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "stream") return stream_command(rest);
  if (args[0] == "chain") return chain_command(rest);
  if (args[0] == "compile") return compile_command(rest);
  if (args[0] == "models") return models_command(rest);
  if (args[0] == "ops") return ops_command(rest);
  if (args[0] == "portable-ops") return portable_ops_command(rest);
  throw UsageError("unknown command '" + args[0] + "' (try: ferrite_kernel_bench help)");
}

}  // namespace
}  // namespace bench
}  // namespace ferrite

int main(int argc, char** argv) {
#ifdef FERRITE_HAS_JIT
  ferrite::jit::register_jit_backend();
#endif
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return ferrite::bench::dispatch(args);
  } catch (const ferrite::UsageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
