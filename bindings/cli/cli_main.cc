// cli_main: the usage text, command dispatch, option parsing, and the one place where
// exceptions become `error: ...` lines and exit codes.
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "bindings/cli/cli.h"
#include "bindings/engine/engine.h"
#include "runtime/session.h"

namespace ferrite {
namespace {

#ifdef FERRITE_RUNTIME_ONLY
constexpr char kUsage[] = R"(usage: ferrite-rt run PLAN [options]

The runtime-only build of Ferrite: it runs compiled plans (.fplan files, written by
'ferrite compile MODEL -o MODEL.fplan'), and has no ONNX frontend and no compiler.

commands:
  run PLAN [options]         load PLAN, run it, and print each output (name, type, first
                             values) and the times; the options are those of 'ferrite run'
                             (--input, --output-dir, --backend, --isa, --threads,
                             --fast-math, --bench, --warmup, --bench-json, --profile,
                             --memory-limit); inputs
                             must have the shapes the plan was compiled for
  help                       print this text (also: --help, -h)

Errors print one line 'error: <message>' to stderr.
Exit status: 0 success, 1 failure, 2 usage error.
)";
#else
constexpr char kUsage[] = R"(usage: ferrite <command> [options]

commands:
  run MODEL [options]        load MODEL (.onnx, or a plan from 'compile'), compile it for
                             its input shapes (while loading, when they are all static),
                             run it, and print each output (name, type, first values), the
                             times and 'compiles: N' (plans the compiler made); with
                             symbolic dims, 'symbolic: ...' (compiled once, or why not)
    --input NAME=FILE.npy    feed input NAME from an .npy file (repeatable). Inputs not
                             given are generated: floats uniform in [-1,1), integers in
                             [0,4), bools false, strings of up to 7 of "ab c", symbolic
                             dims 1 (fixed seed)
    --output-dir DIR         write each output to DIR/NAME.npy
    --backend B              reference | portable | jit (default: jit on x86, else portable)
    --bench N                after a warm-up, time N more runs; ends with 'median_ms: X'
    --warmup N               warm-up runs before the timed ones (default 1; needs --bench)
    --bench-json FILE        also write the times as JSON to FILE (needs --bench): load_ms,
                             compile_ms, ready_ms (load + compile), first_run_ms, warmup,
                             samples_ms (every timed run, in order)
    --isa I                  the JIT's instruction set: avx2 | avx512 (default: the best
                             this CPU has; the environment variable FERRITE_ISA does the same)
    --threads N              threads a kernel may use (default 1)
    --fast-math              float32 MatMul and Conv multiply in bfloat16 (float32 sums)
                             where the CPU has AVX-512 BF16 (the jit backend's oneDNN
                             calls): about twice as fast, relative error near 2^-8
    --dump DIR               write the compiler's intermediate forms (and the JIT's
                             kernels, 80_jit_*.txt) to DIR; FERRITE_DUMP does the same
    --no-fusion              skip the scheduler's fusion (one kernel per realized buffer)
    --profile                time every step (kernel or extern call) of the timed runs
                             (with --bench; else of the one run) and list them, slowest
                             first, with their share; ends with 'profile_total_ms: X'
    --memory-limit SIZE      the most memory the model may hold: intermediates, weights,
                             outputs (bytes, or 512M, 8G, ...; 'none'). Default: the
                             environment variable FERRITE_MEMORY_LIMIT, else 3/4 of the
                             memory this process may use (physical, or ulimit -v)
    --max-unrolled-nodes N   the most nodes unrolling Loop, Scan, LSTM, GRU and RNN may
                             make (default: FERRITE_MAX_UNROLLED_NODES, else 50000)
  compile MODEL -o FILE      compile MODEL for its input shapes (those of --input files;
                             symbolic dims not given are 1) and write the plan to FILE
                             (.fplan). 'run', the C API, Python and JavaScript load it like
                             a model; runtime-only builds (ferrite-rt) run only plans
    --input NAME=FILE.npy    an input whose shape to compile for (repeatable)
    --backend B, --isa I     the backend it is meant for (the jit's convolutions get
                             channels-last activations); any backend runs it
    --dump DIR, --no-fusion  as for run
    --memory-limit SIZE, --max-unrolled-nodes N
                             as for run
  inspect MODEL [options]    compile MODEL (as run does, without running it) and summarize
                             the plan: inputs and outputs with their shapes, buffers,
                             steps (kernels by origin op, externs by op), in-place pairs,
                             the memory with and without in-place reuse and the peak step.
                             The last two lines are always
                               kernels: N externs: M
                               memory: planned P bytes, lower bound L bytes
                             (P: the pool of temporary buffers; L: the most bytes live at
                             one step, each in-place pair counted once)
    --input NAME=FILE.npy    as for run: inputs not given are generated
    --dump DIR               as for run (FERRITE_DUMP too); includes 70_plan_memory.txt
                             and 70_plan_memory.svg, the memory plan as a table and a
                             timeline
    --no-fusion, --memory-limit SIZE, --max-unrolled-nodes N
                             as for run
  conformance DIR [options]  run each ONNX backend test case in DIR (a directory with
                             model.onnx and test_data_set_*/) and compare its outputs
                             (floats |a-e| <= atol + rtol*|e|; integers and bools exact)
    --backend B              reference | portable | jit (default: jit on x86, else portable)
    --isa I, --threads N     as for run
    --fast-math              as for run
    --rtol R, --atol A       the tolerances of that rule (default: 1e-3 and 1e-7)
    --max-rel-err E          compare floats per output tensor instead, for whole models:
                             max|a-e| <= E * max|e| (NaN and infinities must match)
    --filter SUBSTR          only the cases whose name contains SUBSTR
    --expect FILE            cases expected to pass (one per line, '#' comments): prints
                             REGRESSION and NEW PASS lines, fails if any regressed
    --write-expect FILE      write the names of the passing cases to FILE
    --verbose                print a line for each failed or skipped case
    --via-plan               run each case through its compiled plan, written to bytes
                             and loaded again (as 'compile' and ferrite-rt do); cases whose
                             plans depend on input values run directly and are counted
    --max-unrolled-nodes N   as for run; 1 makes every Loop and Scan run at run time
  help                       print this text (also: --help, -h)

Errors print one line 'error: <message>' to stderr.
Exit status: 0 success, 1 failure (or a conformance regression), 2 usage error.
)";
#endif

bool is_help(const std::string& arg) {
  return arg == "--help" || arg == "-h" || arg == "help";
}

const OptionSpec* find_spec(const std::vector<OptionSpec>& specs, const std::string& name) {
  for (const OptionSpec& s : specs) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

int dispatch(const std::vector<std::string>& args) {
  if (args.empty() || is_help(args[0])) {
    std::cout << kUsage;
    return 0;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  for (const std::string& a : rest) {
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    }
  }
  if (args[0] == "run") return run_command(rest);
#ifdef FERRITE_RUNTIME_ONLY
  throw UsageError("unknown command '" + args[0] +
                   "' (this runtime-only build has: run, help; it runs compiled plans)");
#else
  if (args[0] == "compile") return compile_command(rest);
  if (args[0] == "inspect") return inspect_command(rest);
  if (args[0] == "conformance") return conformance_command(rest);
  throw UsageError("unknown command '" + args[0] +
                   "' (commands: run, compile, inspect, conformance, help)");
#endif
}

}  // namespace

const char* usage_text() {
  return kUsage;
}

std::string CliArgs::get(const std::string& name) const {
  if (options.count(name) > 1) throw UsageError("option '--" + name + "' given more than once");
  auto it = options.find(name);
  return it == options.end() ? "" : it->second;
}

std::vector<std::string> CliArgs::all(const std::string& name) const {
  std::vector<std::string> values;
  auto range = options.equal_range(name);
  for (auto it = range.first; it != range.second; ++it) values.push_back(it->second);
  return values;
}

CliArgs parse_cli_args(const std::string& command, const std::vector<std::string>& args,
                       const std::vector<OptionSpec>& specs) {
  CliArgs out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() < 2 || a[0] != '-') {
      out.positional.push_back(a);
      continue;
    }
    const size_t eq = a.find('=');
    const size_t start = a[1] == '-' ? 2 : 1;
    const std::string name = a.substr(start, eq == std::string::npos ? eq : eq - start);
    const OptionSpec* spec = a[1] == '-' ? find_spec(specs, name) : nullptr;
    if (!spec) throw UsageError("unknown option '" + a + "' for '" + command + "'");
    std::string value;
    if (eq != std::string::npos) {
      if (!spec->takes_value) throw UsageError("option '--" + name + "' takes no value");
      value = a.substr(eq + 1);
    } else if (spec->takes_value) {
      if (i + 1 >= args.size()) throw UsageError("option '--" + name + "' needs a value");
      value = args[++i];
    }
    out.options.emplace(name, value);
  }
  return out;
}

int64_t parse_count(const std::string& option, const std::string& value) {
  int64_t v = 0;
  bool ok = !value.empty() && value.size() <= 9;
  for (char c : value) {
    ok = ok && c >= '0' && c <= '9';
    if (ok) v = v * 10 + (c - '0');
  }
  if (!ok)
    throw UsageError("option '--" + option + "' needs a non-negative integer, got '" + value + "'");
  return v;
}

double parse_number(const std::string& option, const std::string& value) {
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !std::isfinite(v) || v < 0) {
    throw UsageError("option '--" + option + "' needs a non-negative number, got '" + value + "'");
  }
  return v;
}

std::string checked_backend(const std::string& backend) {
  if (backend.empty()) return default_backend();
  const std::string unknown = unknown_backend_message(backend);
  if (!unknown.empty()) throw UsageError(unknown);
  return backend;
}

int cli_main(const std::vector<std::string>& args) {
  try {
    return dispatch(args);
  } catch (const UsageError& e) {
    std::cerr << "error: " << printable(e.what()) << "\n";
    return 2;
  } catch (const std::exception& e) {
    // ferrite::Error messages are printable already; others (std::bad_alloc, ...) too, now.
    std::cerr << "error: " << printable(e.what()) << "\n";
    return 1;
  } catch (...) {
    std::cerr << "error: unknown exception\n";
    return 1;
  }
}

}  // namespace ferrite
