// `ferrite inspect`: compile a model for its input shapes (as `run` would) and summarize
// the plan — inputs and outputs, steps by kind and op, in-place pairs, memory — without
// running it. The last two lines are fixed for scripts:
//   kernels: N externs: M
//   memory: planned P bytes, lower bound L bytes
#include <cctype>
#include <cstdio>
#include <map>

#include "bindings/cli/cli.h"
#include "bindings/cli/cli_model.h"
#include "bindings/cli/tensor_values.h"
#include "compiler/memory/live_ranges.h"
#include "compiler/memory/memory_dump.h"

namespace ferrite {
namespace {

const std::vector<OptionSpec> kInspectOptions = {{"input", true},
                                                 {"dump", true},
                                                 {"no-fusion", false},
                                                 {"memory-limit", true},
                                                 {"max-unrolled-nodes", true}};

// The op a kernel came from, read from its name ("k12_Relu___layer1_relu_Relu_" -> "Relu");
// the whole name when it does not have that form.
std::string kernel_origin_op(const std::string& name) {
  size_t i = 0;
  if (name.size() > 1 && name[0] == 'k') {
    i = 1;
    while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) ++i;
  }
  if (i < 2 || i >= name.size() || name[i] != '_') return name;
  const size_t end = name.find('_', i + 1);
  const std::string op = name.substr(i + 1, end == std::string::npos ? end : end - i - 1);
  return op.empty() ? name : op;
}

void print_counts(const char* title, const std::map<std::string, int>& counts) {
  if (counts.empty()) return;
  std::printf("  %s:\n", title);
  for (const auto& c : counts) std::printf("    %-28s %d\n", printable(c.first).c_str(), c.second);
}

// " (declared [N,784])" when the model names symbolic dims of the value, else "".
std::string declared_note(const IoInfo& declared, const std::vector<std::string>& dim_names) {
  bool symbolic = false;
  std::string s = " (declared [";
  for (size_t d = 0; d < declared.shape.size(); ++d) {
    const bool named = d < dim_names.size() && !dim_names[d].empty();
    symbolic = symbolic || named;
    s += str_cat(d ? "," : "", named                    ? printable(dim_names[d])
                               : declared.shape[d] >= 0 ? std::to_string(declared.shape[d])
                                                        : std::string("?"));
  }
  return symbolic ? s + "])" : "";
}

// The plan's inputs and outputs (this run's shapes), with the model's symbolic dims.
void print_io(const Plan& plan, const Engine& engine) {
  const auto in_names = engine.input_dim_names(), out_names = engine.output_dim_names();
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const PlanBuffer& b = plan.buffers[plan.inputs[i]];
    std::printf(
        "input '%s': %s%s\n", printable(b.name).c_str(), format_type(b.dtype, b.shape).c_str(),
        i < engine.inputs().size() ? declared_note(engine.inputs()[i], in_names[i]).c_str() : "");
  }
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    const PlanBuffer& b = plan.buffers[plan.outputs[i]];
    std::printf(
        "output '%s': %s%s\n", printable(b.name).c_str(), format_type(b.dtype, b.shape).c_str(),
        i < engine.outputs().size() ? declared_note(engine.outputs()[i], out_names[i]).c_str()
                                    : "");
  }
}

void print_buffers(const Plan& plan) {
  int64_t constant_bytes = 0, temp_bytes = 0;
  int constants = 0, temps = 0;
  for (const PlanBuffer& b : plan.buffers) {
    if (b.kind == BufferKind::Constant) {
      ++constants;
      constant_bytes += b.nbytes();
    } else if (b.kind == BufferKind::Temp) {
      ++temps;
      temp_bytes += pool_aligned(b.nbytes());
    }
  }
  std::printf("constants: %d (%lld bytes)\n", constants, static_cast<long long>(constant_bytes));
  std::printf("temps: %d (%lld bytes, aligned, if none shared)\n", temps,
              static_cast<long long>(temp_bytes));
}

// Steps grouped by kind: kernels by the op they came from, externs by op. Returns the
// counts of kernel and extern steps.
std::pair<int, int> print_steps(const Plan& plan) {
  std::map<std::string, int> kernels, externs;
  int guarded = 0;
  for (const Step& s : plan.steps) {
    if (s.kind == StepKind::Kernel) {
      ++kernels[kernel_origin_op(plan.kernels[s.index].name)];
    } else {
      ++externs[extern_op_name(plan.externs[s.index].op)];
    }
    guarded += s.guards.empty() ? 0 : 1;
  }
  int nk = 0, nx = 0;
  for (const auto& c : kernels) nk += c.second;
  for (const auto& c : externs) nx += c.second;
  std::printf("steps: %zu (%d guarded)\n", plan.steps.size(), guarded);
  print_counts("kernel steps by origin op", kernels);
  print_counts("extern steps by op", externs);
  return {nk, nx};
}

void print_memory(const Plan& plan, const TempMemory& m) {
  std::printf("in-place pairs: %zu\n", m.in_place.size());
  for (const InPlacePair& p : m.in_place) {
    std::printf("  step %d: '%s' -> '%s' (%lld bytes) in %s\n", p.step,
                printable(plan.buffers[p.input].name).c_str(),
                printable(plan.buffers[p.output].name).c_str(),
                static_cast<long long>(plan.buffers[p.output].nbytes()),
                printable(step_label(plan, p.step)).c_str());
  }
  const TempMemory plain = plan_temp_memory(plan, false);
  std::printf("without in-place: planned %lld bytes, lower bound %lld bytes\n",
              static_cast<long long>(plain.pool.pool_bytes),
              static_cast<long long>(plain.pool.lower_bound));
  if (m.peak_step >= 0)
    std::printf("peak: step %d (%s)\n", m.peak_step,
                printable(step_label(plan, m.peak_step)).c_str());
}

// What the plans shown add up to.
struct Totals {
  int plans = 0, kernels = 0, externs = 0;
  int64_t planned = 0, lower_bound = 0;
};

void print_plan(const Plan& plan, const Engine& engine, Totals* totals) {
  print_io(plan, engine);
  print_buffers(plan);
  const std::pair<int, int> steps = print_steps(plan);
  const TempMemory memory = plan_temp_memory(plan);
  print_memory(plan, memory);
  ++totals->plans;
  totals->kernels += steps.first;
  totals->externs += steps.second;
  totals->planned += plan.pool_bytes;
  totals->lower_bound += memory.pool.lower_bound;
}

// A model in parts: each part's last plan, in order (a part in parts in turn).
void print_parts(const Engine& engine, const std::string& prefix, Totals* totals) {
  std::printf("%sruns in parts, cut at %s\n", prefix.c_str(), printable(engine.cut_node()).c_str());
  for (const auto& [name, part] : engine.part_engines()) {
    const std::string label = prefix + name;
    if (part->runs_in_parts()) {
      print_parts(*part, label + ": ", totals);
    } else if (const Session* s = part->last_session()) {
      std::printf("== part: %s\n", label.c_str());
      print_plan(s->plan(), *part, totals);
    } else {
      std::printf("== part: %s (not run)\n", label.c_str());
    }
  }
}

}  // namespace

int inspect_command(const std::vector<std::string>& arg_list) {
  const CliArgs args = parse_cli_args("inspect", arg_list, kInspectOptions);
  if (args.positional.size() != 1) throw UsageError("inspect needs exactly one MODEL argument");
  EngineOptions options;
  apply_compile_options(args, &options);
  std::vector<std::pair<std::string, Tensor>> inputs = read_inputs(args);
  const std::string& model = args.positional[0];
  std::unique_ptr<Engine> engine = load_model(model, options);
  std::printf("model: %s\n", model.c_str());
  add_generated_inputs(*engine, options, &inputs);
  std::vector<std::pair<std::string, const Tensor*>> feeds;
  for (const auto& in : inputs) feeds.emplace_back(in.first, &in.second);
  Totals totals;
  const Plan* plan = nullptr;
  if (!engine->runs_in_parts()) {
    try {
      plan = &engine->session_for_feeds(feeds).plan();
    } catch (const NeedsCutError&) {
      run_once(*engine, feeds);  // cuts the model where the compile asked to
    }
  }
  if (engine->runs_in_parts()) {
    // Each part is compiled for what the part before it computed: run once, then show the
    // plans the parts ran.
    run_once(*engine, feeds);
    print_parts(*engine, "", &totals);
    std::printf("parts: %d plans\n", totals.plans);
  } else {
    if (!plan) fail("no plan for these inputs");
    print_plan(*plan, *engine, &totals);
  }
  std::printf("compiles: %lld\n", static_cast<long long>(engine->compiles()));
  std::printf("kernels: %d externs: %d\n", totals.kernels, totals.externs);
  std::printf("memory: planned %lld bytes, lower bound %lld bytes\n",
              static_cast<long long>(totals.planned), static_cast<long long>(totals.lower_bound));
  std::fflush(stdout);
  return 0;
}

}  // namespace ferrite
