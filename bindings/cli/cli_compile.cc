// `ferrite compile`: compile a model for its input shapes and write the Plan (plan_io.h),
// which `ferrite run`, the C API, Python and JavaScript load like a model, and which a
// runtime-only build (no frontend, no compiler) runs.
#include <cstdio>
#include <fstream>

#include "bindings/cli/cli.h"
#include "bindings/cli/cli_model.h"
#include "compiler/plan/plan_io.h"
#include "compiler/plan/stage_times.h"
#include "runtime/session.h"

namespace ferrite {
namespace {

const std::vector<OptionSpec> kCompileOptions = {
    {"output", true},       {"input", true},
    {"backend", true},      {"isa", true},
    {"threads", true},      {"dump", true},
    {"no-fusion", false},   {"prepack", false},
    {"memory-limit", true}, {"max-unrolled-nodes", true}};

}  // namespace

int compile_command(const std::vector<std::string>& arg_list) {
  std::vector<std::string> expanded;  // -o is --output
  for (const std::string& a : arg_list) expanded.push_back(a == "-o" ? "--output" : a);
  const CliArgs args = parse_cli_args("compile", expanded, kCompileOptions);
  if (args.positional.size() != 1) throw UsageError("compile needs exactly one MODEL argument");
  const std::string output = args.get("output");
  if (output.empty()) throw UsageError("compile needs -o FILE (the plan to write)");
  EngineOptions options;
  apply_session_options(args, &options.session);
  apply_compile_options(args, &options);
  options.compile_at_load = false;  // compile_plan compiles the one plan written
  std::vector<std::pair<std::string, Tensor>> inputs = read_inputs(args);

  const std::string& model = args.positional[0];
  std::unique_ptr<Engine> engine = load_model(model, options);
  if (engine->from_compiled_plan()) fail("'", model, "' is already a compiled plan");
  add_generated_inputs(*engine, options, &inputs);
  std::vector<std::pair<std::string, const Tensor*>> feeds;
  for (const auto& in : inputs) feeds.emplace_back(in.first, &in.second);
  Plan plan;
  try {
    plan = engine->compile_plan(feeds);
  } catch (const NeedsInputValueError& e) {
    fail("'", model, "' cannot be compiled ahead of time: its plan depends on the values ",
         "of its inputs, not only on their shapes (", e.what(), ")");
  }
  // --prepack: the weights as the backend packs them on this machine replace the raw ones
  // (those read only through packed inputs): a session of that backend on a like machine
  // copies them instead of packing; any other refuses the plan, naming the layouts.
  size_t raw_dropped = 0;
  if (args.has("prepack")) {
    plan.packed = Session(plan, options.session).packed_constants();
    raw_dropped = strip_packed_constants(&plan);
  }
  const std::vector<uint8_t> bytes = [&] {
    StageTimer timer("serialize_plan");
    return serialize_plan(plan);
  }();
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) fail("cannot write plan file '", output, "'");
  size_t packed_bytes = 0;
  for (const PackedConstant& c : plan.packed) packed_bytes += c.bytes.size();
  std::printf("wrote %s: %zu bytes (%zu steps, %zu constants, pool %lld bytes, for %s)\n",
              output.c_str(), bytes.size(), plan.steps.size(), plan.constants.size(),
              static_cast<long long>(plan.pool_bytes), options.session.backend.c_str());
  if (args.has("prepack"))
    std::printf("prepacked: %zu weights of %zu bytes, in place of %zu raw bytes\n",
                plan.packed.size(), packed_bytes, raw_dropped);
  for (const int32_t id : plan.inputs) {
    const PlanBuffer& b = plan.buffers[static_cast<size_t>(id)];
    std::string shape;
    for (int64_t d : b.shape) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    std::printf("input %s: %s[%s]\n", printable(b.name).c_str(), dtype_name(b.dtype),
                shape.c_str());
  }
  return 0;
}

}  // namespace ferrite
