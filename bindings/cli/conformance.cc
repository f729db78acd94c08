// `ferrite conformance`: runs ONNX backend test cases through the Engine and compares the
// outputs. Every case is isolated — whatever one throws is caught and recorded — so one
// broken case never stops the run.
#include "bindings/cli/conformance.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>

#include "bindings/cli/cli.h"
#include "bindings/cli/cli_model.h"
#include "bindings/cli/tensor_values.h"
#include "compiler/frontend/onnx/onnx_import.h"
#include "compiler/plan/plan_io.h"

namespace ferrite {
namespace {

namespace fs = std::filesystem;

const std::vector<OptionSpec> kConformanceOptions = {
    {"backend", true},      {"isa", true},      {"threads", true},   {"expect", true},
    {"write-expect", true}, {"filter", true},   {"rtol", true},      {"atol", true},
    {"max-rel-err", true},  {"verbose", false}, {"via-plan", false}, {"max-unrolled-nodes", true},
    {"fast-math", false}};

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

std::vector<uint8_t> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open '", path.string(), "'");
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

Tensor tensor_of(const TensorData& d, const std::string& file);

Tensor load_tensor_pb(const fs::path& path) {
  const std::vector<uint8_t> bytes = read_file(path);
  return tensor_of(parse_tensor_proto(bytes.data(), bytes.size()), path.filename().string());
}

Tensor tensor_of(const TensorData& d, const std::string& file) {
  if (d.dtype == DType::String && d.strings) return Tensor(d.shape, *d.strings);
  if (dtype_size(d.dtype) == 0)
    throw UnsupportedError(str_cat(file, ": ", dtype_name(d.dtype), " tensors are not supported"));
  const int64_t elements = d.elements();
  if (elements < 0 || d.bytes.size() != static_cast<uint64_t>(elements) * dtype_size(d.dtype))
    fail(file, ": ", d.bytes.size(), " bytes of data for ", format_type(d.dtype, d.shape));
  return Tensor(d.dtype, d.shape, d.bytes.data());
}

// A sequence or optional value of the test data (SequenceProto, OptionalProto).
EngineValue load_container_pb(const fs::path& path, Container container) {
  const std::vector<uint8_t> bytes = read_file(path);
  const std::string file = path.filename().string();
  const ContainerData c = container == Container::Sequence
                              ? parse_sequence_proto(bytes.data(), bytes.size())
                              : parse_optional_proto(bytes.data(), bytes.size());
  if (c.kind == ContainerData::Kind::Optional) return EngineValue();
  if (c.kind == ContainerData::Kind::Tensor) return EngineValue::of(tensor_of(c.tensors[0], file));
  std::vector<EngineValue::TensorRef> items;
  for (const TensorData& d : c.tensors)
    items.push_back(std::make_shared<Tensor>(tensor_of(d, file)));
  return EngineValue::sequence(c.elem, std::move(items));
}

// prefix_0.pb, prefix_1.pb, ... up to the first missing number, each read as `kind(i)`
// says (a tensor, or a sequence or optional value).
std::vector<EngineValue> load_values(const fs::path& set_dir, const std::string& prefix,
                                     const std::function<Container(size_t)>& kind) {
  std::vector<EngineValue> values;
  for (size_t i = 0;; ++i) {
    const fs::path path = set_dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(path)) break;
    const Container c = kind(i);
    values.push_back(c == Container::Tensor ? EngineValue::of(load_tensor_pb(path))
                                            : load_container_pb(path, c));
  }
  return values;
}

// "" when `got` is `want` (kinds alike; tensors, and a sequence's items in order, within
// the tolerance), else the first difference.
std::string compare_values(const EngineValue& got, const EngineValue& want,
                           const Tolerance& tolerance) {
  auto compare = [&](const Tensor& a, const Tensor& b) {
    return tolerance.max_rel_err ? compare_tensors_normwise(a, b, *tolerance.max_rel_err)
                                 : compare_tensors(a, b, tolerance.rtol, tolerance.atol);
  };
  if (got.kind() != want.kind() ||
      (got.is_sequence() && got.items("").size() != want.items("").size()))
    return str_cat("got ", got.type_text(), ", expected ", want.type_text());
  if (got.is_tensor()) return compare(got.tensor(""), want.tensor(""));
  if (!got.is_sequence()) return "";
  for (size_t k = 0; k < got.items("").size(); ++k) {
    const std::string d = compare(*got.items("")[k], *want.items("")[k]);
    if (!d.empty()) return str_cat("item ", k, ": ", d);
  }
  return "";
}

// Runs a data set of a model with sequence or optional inputs or outputs, through values.
void run_values_set(Engine& engine, const fs::path& set_dir, const Tolerance& tolerance) {
  const std::string set = set_dir.filename().string();
  const std::vector<EngineValue> inputs = load_values(set_dir, "input_", [&](size_t i) {
    return i < engine.inputs().size() ? engine.input_container(i) : Container::Tensor;
  });
  const std::vector<EngineValue> expected =
      load_values(set_dir, "output_", [&](size_t i) { return engine.output_container(i); });
  if (inputs.size() != engine.inputs().size())
    fail(set, ": ", inputs.size(), " input files for ", engine.inputs().size(), " model inputs");
  std::vector<std::pair<std::string, const EngineValue*>> feeds;
  for (size_t i = 0; i < inputs.size(); ++i)
    feeds.emplace_back(engine.inputs()[i].name, &inputs[i]);
  const std::vector<EngineValue> outputs = engine.run_values(feeds);
  if (outputs.size() != expected.size())
    fail(set, ": ", outputs.size(), " outputs, expected ", expected.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string diff = compare_values(outputs[i], expected[i], tolerance);
    if (!diff.empty()) fail(set, ": output ", i, " '", engine.outputs()[i].name, "': ", diff);
  }
}

// Sequences, optionals or strings among the inputs or outputs: no plan holds them.
bool has_containers(const Engine& engine) {
  for (size_t i = 0; i < engine.inputs().size(); ++i)
    if (engine.input_container(i) != Container::Tensor || engine.inputs()[i].dtype == DType::String)
      return true;
  for (size_t i = 0; i < engine.outputs().size(); ++i)
    if (engine.output_container(i) != Container::Tensor ||
        engine.outputs()[i].dtype == DType::String)
      return true;
  return false;
}

// prefix_0.pb, prefix_1.pb, ... up to the first missing number.
std::vector<Tensor> load_numbered(const fs::path& set_dir, const std::string& prefix) {
  std::vector<Tensor> tensors;
  for (int i = 0;; ++i) {
    const fs::path path = set_dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(path)) break;
    tensors.push_back(load_tensor_pb(path));
  }
  return tensors;
}

// The ONNX test data (1.12) store bfloat16 tensors as their uint16 bit patterns; read them
// as the bfloat16 the model declares.
void as_declared_dtype(std::vector<Tensor>* tensors, const std::vector<IoInfo>& declared) {
  for (size_t i = 0; i < tensors->size() && i < declared.size(); ++i) {
    Tensor& t = (*tensors)[i];
    if (t.dtype() == DType::U16 && declared[i].dtype == DType::BF16) {
      t = Tensor(DType::BF16, t.shape(), t.data());
    }
  }
}

// Runs one data set; with `via_plan`, through a compiled plan written to bytes and loaded
// again (what `ferrite compile` and a runtime-only build do). Returns false when it ran
// without a plan because the model's plan depends on input values or it runs in parts.
bool run_data_set(Engine& engine, const fs::path& set_dir, const Tolerance& tolerance,
                  const EngineOptions& options, bool via_plan) {
  if (has_containers(engine)) {  // sequences and optionals: no plan holds them
    run_values_set(engine, set_dir, tolerance);
    return !via_plan;
  }
  const std::string set = set_dir.filename().string();
  std::vector<Tensor> inputs = load_numbered(set_dir, "input_");
  std::vector<Tensor> expected = load_numbered(set_dir, "output_");
  if (inputs.size() != engine.inputs().size()) {
    fail(set, ": ", inputs.size(), " input files for ", engine.inputs().size(), " model inputs");
  }
  as_declared_dtype(&inputs, engine.inputs());
  as_declared_dtype(&expected, engine.outputs());
  std::vector<std::pair<std::string, const Tensor*>> feeds;
  for (size_t i = 0; i < inputs.size(); ++i)
    feeds.emplace_back(engine.inputs()[i].name, &inputs[i]);
  std::vector<Tensor> outputs;
  // A model in parts (cut at a value-sized node) has no one plan: it runs as it is.
  bool planned = via_plan && !engine.runs_in_parts();
  if (planned) {
    try {
      const std::vector<uint8_t> bytes = serialize_plan(engine.compile_plan(feeds));
      outputs = Engine::from_bytes(bytes.data(), bytes.size(), options)->run(feeds);
    } catch (const NeedsInputValueError&) {
      planned = false;
    } catch (const NeedsCutError&) {
      planned = false;  // a node that runs on its own: the model runs in parts
    }
  }
  if (!planned) outputs = engine.run(feeds);
  if (outputs.size() != expected.size()) {
    fail(set, ": ", outputs.size(), " outputs, expected ", expected.size());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string diff =
        tolerance.max_rel_err
            ? compare_tensors_normwise(outputs[i], expected[i], *tolerance.max_rel_err)
            : compare_tensors(outputs[i], expected[i], tolerance.rtol, tolerance.atol);
    if (!diff.empty()) {
      const std::string name = i < engine.outputs().size() ? engine.outputs()[i].name : "?";
      fail(set, ": output ", i, " '", name, "': ", diff);
    }
  }
  return planned || !via_plan;
}

std::vector<fs::path> data_sets(const fs::path& case_dir) {
  std::vector<fs::path> sets;
  for (const fs::directory_entry& e : fs::directory_iterator(case_dir)) {
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) {
      sets.push_back(e.path());
    }
  }
  std::sort(sets.begin(), sets.end());
  return sets;
}

void print_results(const std::map<std::string, CaseResult>& results, bool verbose) {
  if (!verbose) return;
  for (const auto& r : results) {
    if (r.second.status == CaseStatus::Pass) continue;
    std::printf("%s %s: %s\n", r.second.status == CaseStatus::Skip ? "SKIP" : "FAIL",
                r.first.c_str(), r.second.reason.c_str());
  }
}

// Prints REGRESSION / NEW PASS lines; returns the number of regressions.
int compare_with_expected(const std::map<std::string, CaseResult>& results,
                          const std::set<std::string>& expected, const std::string& filter) {
  int regressions = 0;
  for (const std::string& name : expected) {
    if (name.find(filter) == std::string::npos) continue;
    auto it = results.find(name);
    if (it != results.end() && it->second.status == CaseStatus::Pass) continue;
    ++regressions;
    const std::string why = it == results.end() ? "case not found"
                            : it->second.status == CaseStatus::Skip
                                ? "skipped: " + it->second.reason
                                : it->second.reason;
    std::printf("REGRESSION: %s: %s\n", name.c_str(), why.c_str());
  }
  for (const auto& r : results) {
    if (r.second.status == CaseStatus::Pass && !expected.count(r.first)) {
      std::printf("NEW PASS: %s\n", r.first.c_str());
    }
  }
  return regressions;
}

void write_expect_file(const std::string& path, const std::map<std::string, CaseResult>& results,
                       const std::string& backend) {
  std::ofstream out(path);
  out << "# ONNX node test cases that pass (ferrite conformance --write-expect, backend " << backend
      << ")\n";
  for (const auto& r : results) {
    if (r.second.status == CaseStatus::Pass) out << r.first << "\n";
  }
  if (!out) fail("cannot write '", path, "'");
}

Tolerance parse_tolerance(const CliArgs& args) {
  Tolerance t;
  if (args.has("rtol")) t.rtol = parse_number("rtol", args.get("rtol"));
  if (args.has("atol")) t.atol = parse_number("atol", args.get("atol"));
  if (args.has("max-rel-err")) {
    if (args.has("rtol") || args.has("atol"))
      throw UsageError("--max-rel-err replaces --rtol and --atol: give one or the other");
    t.max_rel_err = parse_number("max-rel-err", args.get("max-rel-err"));
  }
  return t;
}

}  // namespace

CaseResult run_conformance_case(const std::string& case_dir, const EngineOptions& options,
                                const Tolerance& tolerance, bool via_plan) {
  CaseResult result;
  try {
    EngineOptions engine_options = options;
    engine_options.compile_at_load = !via_plan;  // else compile_plan makes the plan run
    std::unique_ptr<Engine> engine =
        Engine::from_file((fs::path(case_dir) / "model.onnx").string(), engine_options);
    for (const fs::path& set : data_sets(case_dir)) {
      if (!run_data_set(*engine, set, tolerance, options, via_plan)) result.without_plan = true;
    }
    result.status = CaseStatus::Pass;
  } catch (const UnsupportedError& e) {
    result.status = CaseStatus::Skip;
    result.reason = first_line(e.what());
  } catch (const std::exception& e) {
    result.reason = first_line(e.what());
  } catch (...) {
    result.reason = "unknown exception";
  }
  return result;
}

std::vector<std::string> list_conformance_cases(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail("'", dir, "' is not a directory");
  std::vector<std::string> cases;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (!e.is_directory() || !fs::exists(e.path() / "model.onnx")) continue;
    if (!data_sets(e.path()).empty()) cases.push_back(e.path().filename().string());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

std::set<std::string> read_expect_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("cannot open expectation file '", path, "'");
  std::set<std::string> names;
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    const size_t begin = line.find_first_not_of(" \t\r");
    if (begin == std::string::npos) continue;
    names.insert(line.substr(begin, line.find_last_not_of(" \t\r") + 1 - begin));
  }
  return names;
}

int conformance_command(const std::vector<std::string>& arg_list) {
  const CliArgs args = parse_cli_args("conformance", arg_list, kConformanceOptions);
  if (args.positional.size() != 1) throw UsageError("conformance needs exactly one DIR argument");
  EngineOptions options;
  apply_session_options(args, &options.session);
  if (args.has("max-unrolled-nodes")) {  // 1: every Loop and Scan runs at run time
    const int64_t n = parse_count("max-unrolled-nodes", args.get("max-unrolled-nodes"));
    if (n < 1) throw UsageError("option '--max-unrolled-nodes' needs at least 1");
    options.compile.max_unrolled_nodes = n;
  }
  const Tolerance tolerance = parse_tolerance(args);
  const std::string filter = args.get("filter");
  const bool has_expect = args.has("expect");
  const std::set<std::string> expected =
      has_expect ? read_expect_file(args.get("expect")) : std::set<std::string>();
  const std::string dir = args.positional[0];
  std::map<std::string, CaseResult> results;
  const bool via_plan = args.has("via-plan");
  int counts[3] = {0, 0, 0};
  int without_plan = 0;
  for (const std::string& name : list_conformance_cases(dir)) {
    if (name.find(filter) == std::string::npos) continue;
    const CaseResult r =
        run_conformance_case((fs::path(dir) / name).string(), options, tolerance, via_plan);
    ++counts[static_cast<int>(r.status)];
    without_plan += r.without_plan ? 1 : 0;
    results.emplace(name, r);
  }
  print_results(results, args.has("verbose"));
  const int regressions = has_expect ? compare_with_expected(results, expected, filter) : 0;
  if (args.has("write-expect"))
    write_expect_file(args.get("write-expect"), results, options.session.backend);
  if (via_plan) {
    std::printf("via plan: %d cases ran without one (their plans depend on input values)\n",
                without_plan);
  }
  std::printf("%d passed, %d failed, %d skipped\n", counts[0], counts[1], counts[2]);
  std::fflush(stdout);
  return regressions > 0 ? 1 : 0;
}

}  // namespace ferrite
