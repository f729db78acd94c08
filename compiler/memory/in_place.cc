// In-place pairs: the legality rules of in_place.h, checked on one kernel step at a time.
#include "compiler/memory/in_place.h"

#include <algorithm>
#include <cstdlib>

#include "compiler/plan/aliasing.h"
#include "compiler/plan/error.h"

namespace ferrite {
namespace {

// The rules on the kernel itself (compiler/plan/aliasing.h, which validate_plan applies
// too), given which args the two buffers are bound to.
std::string kernel_refusal(const Kernel& k, const std::vector<int>& in_args,
                           const std::vector<int>& out_args) {
  if (k.num_reduce != 0) return "the kernel has reduction dims";
  for (int a : in_args)
    if (k.args[a].output) return str_cat("the input is bound to output arg ", a);
  if (out_args.size() != 1) return str_cat("the output is bound to ", out_args.size(), " args");
  return in_place_kernel_refusal(k, in_args, out_args[0]);
}

std::vector<int> args_bound_to(const Step& step, int32_t buffer) {
  std::vector<int> args;
  for (size_t i = 0; i < step.buffers.size(); ++i)
    if (step.buffers[i] == buffer) args.push_back(static_cast<int>(i));
  return args;
}

}  // namespace

std::string in_place_refusal(const Plan& plan, const std::vector<LiveBuffer>& ranges, int step,
                             int32_t input, int32_t output) {
  const int32_t nbuf = static_cast<int32_t>(plan.buffers.size());
  if (step < 0 || static_cast<size_t>(step) >= plan.steps.size() || input < 0 || input >= nbuf ||
      output < 0 || output >= nbuf || ranges.size() != plan.buffers.size())
    fail("in place: step ", step, " or buffers ", input, ", ", output, " out of range");
  if (input == output) return "input and output are one buffer";
  const PlanBuffer& in = plan.buffers[input];
  const PlanBuffer& out = plan.buffers[output];
  if (in.kind != BufferKind::Temp || out.kind != BufferKind::Temp)
    return "only Temp buffers are in the pool";
  if (in.nbytes() != out.nbytes())
    return str_cat("sizes differ: ", in.nbytes(), " and ", out.nbytes());
  if (dtype_size(in.dtype) != dtype_size(out.dtype)) return "element sizes differ";
  if (ranges[input].last != step)
    return str_cat("the input is used until step ", ranges[input].last);
  if (ranges[output].first != step)
    return str_cat("the output is used from step ", ranges[output].first);
  const Step& st = plan.steps[step];
  if (st.kind != StepKind::Kernel) return "not a kernel step";
  if (!st.guards.empty()) return "the step has guards";
  if (st.index < 0 || static_cast<size_t>(st.index) >= plan.kernels.size())
    fail("in place: step ", step, " calls kernel ", st.index, " of ", plan.kernels.size());
  const Kernel& k = plan.kernels[st.index];
  if (st.buffers.size() != k.args.size())
    fail("in place: step ", step, " binds ", st.buffers.size(), " buffers to ", k.args.size(),
         " kernel args");
  const std::vector<int> in_args = args_bound_to(st, input);
  const std::vector<int> out_args = args_bound_to(st, output);
  if (in_args.empty() || out_args.empty()) return "the step does not bind both buffers";
  return kernel_refusal(k, in_args, out_args);
}

std::vector<InPlacePair> find_in_place_pairs(const Plan& plan,
                                             const std::vector<LiveBuffer>& ranges) {
  std::vector<InPlacePair> pairs;
  std::vector<bool> given(plan.buffers.size(), false), taken(plan.buffers.size(), false);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const Step& st = plan.steps[s];
    if (st.kind != StepKind::Kernel || !st.guards.empty()) continue;
    const Kernel& k = plan.kernels.at(st.index);
    for (size_t o = 0; o < st.buffers.size() && o < k.args.size(); ++o) {
      const int32_t out = st.buffers[o];
      if (!k.args[o].output || taken[out]) continue;
      for (size_t i = 0; i < st.buffers.size() && i < k.args.size(); ++i) {
        const int32_t in = st.buffers[i];
        if (k.args[i].output || given[in]) continue;
        if (!in_place_refusal(plan, ranges, static_cast<int>(s), in, out).empty()) continue;
        pairs.push_back(InPlacePair{static_cast<int32_t>(s), in, out});
        given[in] = taken[out] = true;
        break;
      }
    }
  }
  return pairs;
}

}  // namespace ferrite
