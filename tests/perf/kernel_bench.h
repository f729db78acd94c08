// ferrite_kernel_bench: what its subcommands share — timing statistics, a text table,
// the --json report, and the subcommands themselves (kernel_bench_stream.cc: stream, chain;
// kernel_bench_models.cc: compile, models; kernel_bench_gemm.cc: ops;
// kernel_bench_portable_ops.cc: portable-ops). See
// tests/perf/README.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bindings/cli/cli.h"

namespace ferrite {
namespace bench {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Order statistics of a sample (nearest rank for p90); all zero for an empty sample.
struct Summary {
  size_t n = 0;
  double min = 0, median = 0, p90 = 0, max = 0;
};
Summary summarize(std::vector<double> values);

// "%.<decimals>f"
std::string fmt(double v, int decimals);

// A table printed with aligned columns (numbers right-aligned, the first column left).
class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// The --json report: {"command", "args", "machine", "records": [{...}, ...]}; each record
// a flat object whose values are already JSON (json_num, json_str, json_array).
using JsonRecord = std::vector<std::pair<std::string, std::string>>;
std::string json_num(double v);
std::string json_str(const std::string& s);
std::string json_array(const std::vector<double>& values);

class Report {
 public:
  Report(std::string command, std::vector<std::string> args)
      : command_(std::move(command)), args_(std::move(args)) {}
  void add(JsonRecord record) { records_.push_back(std::move(record)); }
  // Writes the report to `path` (nothing when it is empty); throws ferrite::Error.
  void write(const std::string& path) const;

 private:
  std::string command_;
  std::vector<std::string> args_;
  std::vector<JsonRecord> records_;
};

// Options every subcommand parses the same way.
int64_t count_option(const CliArgs& args, const char* name, int64_t fallback, int64_t min = 1);
std::vector<std::string> split_commas(const std::string& s);

// STREAM triad a[i] = b[i] + s*c[i] over n floats with `threads` OpenMP threads, in each
// code variant this CPU runs (plain x86-64 = SSE2, AVX2+FMA, AVX-512F), `reps` timed runs
// after one warm-up. GB/s counts 12 bytes per element (read b and c, write a).
struct TriadResult {
  std::string variant;
  int threads = 1;
  int64_t n = 0;
  std::vector<double> ms;  // every timed run
  double gbs(double ms_value) const { return 12.0 * static_cast<double>(n) / ms_value / 1e6; }
};
std::vector<TriadResult> run_triad(int64_t n, int threads, int64_t reps);
// The variant with the highest median bandwidth.
const TriadResult& best_triad(const std::vector<TriadResult>& results);
void add_triad_rows(const std::vector<TriadResult>& results, Table* table, Report* report);

// The subcommands: the arguments after the subcommand's name; they return the exit status
// and throw ferrite::Error (UsageError for a bad command line).
int stream_command(const std::vector<std::string>& args);
int chain_command(const std::vector<std::string>& args);
int compile_command(const std::vector<std::string>& args);
int models_command(const std::vector<std::string>& args);
int ops_command(const std::vector<std::string>& args);  // kernel_bench_gemm.cc
int portable_ops_command(const std::vector<std::string>& args);

// GFLOP/s of independent fused multiply-adds on `threads` threads with the Highway target the
// portable backend uses, over `reps` runs (kernel_bench_fma_peak.cc).
Summary fma_peak_gflops(int threads, int64_t reps);

}  // namespace bench
}  // namespace ferrite
