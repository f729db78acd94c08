// Live ranges from step uses, and the glue that plans a Plan's Temp buffers.
#include "compiler/memory/live_ranges.h"

#include <algorithm>

#include "compiler/plan/error.h"

namespace ferrite {
namespace {

void touch(std::vector<LiveBuffer>* out, std::vector<bool>* seen, int32_t id, int step) {
  if (id < 0 || static_cast<size_t>(id) >= out->size())
    fail("live ranges: step ", step, " uses buffer ", id, " of ", out->size());
  LiveBuffer& b = (*out)[id];
  if (!(*seen)[id]) {
    b.first = b.last = step;
    (*seen)[id] = true;
  }
  b.last = std::max(b.last, step);
}

}  // namespace

std::vector<LiveBuffer> live_ranges(const std::vector<int64_t>& bytes,
                                    const std::vector<StepUses>& steps) {
  std::vector<LiveBuffer> out(bytes.size());
  std::vector<bool> seen(bytes.size(), false);
  for (size_t i = 0; i < bytes.size(); ++i) out[i].bytes = bytes[i];
  for (size_t s = 0; s < steps.size(); ++s) {
    for (int32_t id : steps[s].reads) touch(&out, &seen, id, static_cast<int>(s));
    for (int32_t id : steps[s].writes) touch(&out, &seen, id, static_cast<int>(s));
  }
  return out;
}

std::vector<StepUses> plan_step_uses(const Plan& plan) {
  std::vector<StepUses> uses(plan.steps.size());
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const Step& st = plan.steps[s];
    StepUses& u = uses[s];
    for (const Guard& g : st.guards) u.reads.push_back(g.buffer);
    if (st.kind == StepKind::Kernel) {
      if (st.index < 0 || static_cast<size_t>(st.index) >= plan.kernels.size())
        fail("live ranges: step ", s, " calls kernel ", st.index, " of ", plan.kernels.size());
      const Kernel& k = plan.kernels[st.index];
      for (size_t i = 0; i < st.buffers.size(); ++i) {
        bool out = i < k.args.size() && k.args[i].output;
        (out ? u.writes : u.reads).push_back(st.buffers[i]);
      }
      continue;
    }
    if (st.index < 0 || static_cast<size_t>(st.index) >= plan.externs.size())
      fail("live ranges: step ", s, " calls extern ", st.index, " of ", plan.externs.size());
    const ExternCall& x = plan.externs[st.index];
    for (const TensorRef& r : x.inputs) u.reads.push_back(r.buffer);
    for (const TensorRef& r : x.outputs) u.writes.push_back(r.buffer);
    u.reads.insert(u.reads.end(), st.buffers.begin(), st.buffers.end());
  }
  return uses;
}

PoolPlan assign_pool_offsets(Plan* plan) {
  std::vector<int64_t> bytes(plan->buffers.size(), 0);
  for (size_t i = 0; i < bytes.size(); ++i)
    if (plan->buffers[i].kind == BufferKind::Temp) bytes[i] = plan->buffers[i].nbytes();
  std::vector<LiveBuffer> all = live_ranges(bytes, plan_step_uses(*plan));
  std::vector<LiveBuffer> temps;
  std::vector<size_t> ids;
  for (size_t i = 0; i < all.size(); ++i) {
    if (plan->buffers[i].kind != BufferKind::Temp) continue;
    temps.push_back(all[i]);
    ids.push_back(i);
  }
  PoolPlan pool = plan_pool(temps);
  for (size_t t = 0; t < ids.size(); ++t) plan->buffers[ids[t]].offset = pool.offsets[t];
  plan->pool_bytes = pool.pool_bytes;
  return pool;
}

}  // namespace ferrite
