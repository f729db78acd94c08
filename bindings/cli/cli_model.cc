// Model loading and input feeds shared by `ferrite run` and `ferrite inspect`.
#include "bindings/cli/cli_model.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <unordered_set>

#include "bindings/cli/npy.h"
#include "bindings/cli/tensor_values.h"
#include "compiler/plan/resource_limits.h"

namespace ferrite {
namespace {

constexpr uint64_t kInputSeed = 0x5EEDF00D;

}  // namespace

std::unique_ptr<Engine> load_model(const std::string& path, const EngineOptions& options) {
  // Checked here so that a typo reads as such, not as whatever the importer says about it.
  if (!std::ifstream(path, std::ios::binary)) fail("cannot open model file '", path, "'");
  try {
    return Engine::from_file(path, options);
  } catch (const UnsupportedError& e) {
    throw UnsupportedError(str_cat("model '", path, "': ", e.what()));
  } catch (const Error& e) {
    fail("model '", path, "': ", e.what());
  }
}

std::vector<std::pair<std::string, Tensor>> read_inputs(const CliArgs& args) {
  std::vector<std::pair<std::string, Tensor>> inputs;
  for (const std::string& spec : args.all("input")) {
    const size_t eq = spec.find('=');
    if (eq == 0 || eq == std::string::npos || eq + 1 == spec.size()) {
      throw UsageError("--input needs NAME=FILE.npy, got '" + spec + "'");
    }
    inputs.emplace_back(spec.substr(0, eq), read_npy(spec.substr(eq + 1)));
  }
  return inputs;
}

void add_generated_inputs(const Engine& engine, const EngineOptions& options,
                          std::vector<std::pair<std::string, Tensor>>* inputs) {
  const int64_t limit = memory_limit_or_default(options.session.memory_limit);
  std::unordered_set<std::string> given;
  for (const auto& in : *inputs) given.insert(in.first);
  for (size_t i = 0; i < engine.inputs().size(); ++i) {
    const IoInfo& info = engine.inputs()[i];
    if (given.count(info.name)) continue;
    const Container c = engine.input_container(i);
    if (c == Container::Sequence || c == Container::OptionalSequence)
      throw UnsupportedError(str_cat("input '", info.name,
                                     "' is a sequence, which ferrite run cannot generate or read "
                                     "from .npy (the Python module feeds sequences)"));
    std::vector<int64_t> shape = info.shape;
    int64_t bytes = static_cast<int64_t>(dtype_size(info.dtype));
    for (int64_t& d : shape) {
      if (d < 0) d = 1;  // a symbolic dim; a declared 0 stays 0, as the engine expects it
      if (__builtin_mul_overflow(bytes, d, &bytes)) bytes = INT64_MAX;
    }
    check_memory_limit(
        bytes, limit,
        str_cat("the generated input '", info.name, "' (", format_type(info.dtype, shape), ")"));
    inputs->emplace_back(info.name, generated_input(info.dtype, shape, kInputSeed + i));
    std::printf("note: input '%s' not given; using generated %s\n", printable(info.name).c_str(),
                format_type(info.dtype, shape).c_str());
  }
}

std::vector<EngineValue> run_once(Engine& engine,
                                  const std::vector<std::pair<std::string, const Tensor*>>& feeds) {
  std::vector<EngineValue> held;
  held.reserve(feeds.size());
  std::vector<std::pair<std::string, const EngineValue*>> values;
  for (const auto& [name, t] : feeds) {
    held.push_back(EngineValue::borrowed(*t));
    values.emplace_back(name, &held.back());
  }
  return engine.run_values(values);
}

std::string dump_dir_option(const CliArgs& args) {
  if (args.has("dump")) return args.get("dump");
  const char* env_dump = std::getenv("FERRITE_DUMP");
  return env_dump ? env_dump : "";
}

void apply_compile_options(const CliArgs& args, EngineOptions* options) {
  options->compile.dump_dir = dump_dir_option(args);
  options->compile.fuse = !args.has("no-fusion");
  if (args.has("memory-limit")) {
    try {
      options->session.memory_limit =
          parse_memory_size(args.get("memory-limit"), "option '--memory-limit'");
    } catch (const UsageError&) {
      throw;
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
    options->compile.memory_limit = options->session.memory_limit;
  }
  if (args.has("max-unrolled-nodes")) {
    const int64_t n = parse_count("max-unrolled-nodes", args.get("max-unrolled-nodes"));
    if (n < 1) throw UsageError("option '--max-unrolled-nodes' needs at least 1");
    options->compile.max_unrolled_nodes = n;
  }
}

void apply_session_options(const CliArgs& args, SessionOptions* session) {
  session->backend = checked_backend(args.get("backend"));
  if (args.has("isa")) {
    const std::string isa = args.get("isa");
    if (isa != "avx2" && isa != "avx512") {
      throw UsageError("option '--isa' needs avx2 or avx512, got '" + isa + "'");
    }
    session->isa = isa;
  }
  if (args.has("threads")) {
    const int64_t t = parse_count("threads", args.get("threads"));
    if (t < 1 || t > 1024) throw UsageError("option '--threads' needs 1..1024");
    session->threads = static_cast<int>(t);
  }
  session->fast_math = args.has("fast-math");
  session->dump_dir = dump_dir_option(args);
}

}  // namespace ferrite
