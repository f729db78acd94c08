// Live ranges from step uses, and the glue that plans a Plan's Temp buffers.
#include "compiler/memory/live_ranges.h"

#include <algorithm>

#include "compiler/plan/error.h"
#include "compiler/plan/stage_times.h"

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

TempMemory plan_temp_memory(const Plan& plan, bool in_place) {
  TempMemory m;
  std::vector<int64_t> bytes(plan.buffers.size(), 0);
  for (size_t i = 0; i < bytes.size(); ++i)
    if (plan.buffers[i].kind == BufferKind::Temp) bytes[i] = plan.buffers[i].nbytes();
  std::vector<LiveBuffer> all;
  {
    StageTimer timer("memory/live_ranges");
    all = live_ranges(bytes, plan_step_uses(plan));
  }
  std::vector<int> temp_of(all.size(), -1);
  for (size_t i = 0; i < all.size(); ++i) {
    if (plan.buffers[i].kind != BufferKind::Temp) continue;
    temp_of[i] = static_cast<int>(m.temps.size());
    m.temps.push_back(static_cast<int32_t>(i));
    m.ranges.push_back(all[i]);
  }
  // Groups: a pair's output joins its input's group (pairs come in step order, so a
  // chain's groups grow from its first buffer).
  std::vector<int> group(m.temps.size());
  for (size_t t = 0; t < group.size(); ++t) group[t] = static_cast<int>(t);
  if (in_place) {
    StageTimer timer("memory/in_place");
    m.in_place = find_in_place_pairs(plan, all);
  }
  for (const InPlacePair& p : m.in_place) group[temp_of[p.output]] = group[temp_of[p.input]];
  std::vector<LiveBuffer> merged;
  std::vector<int> slot(m.temps.size(), -1);  // group leader -> index in merged
  for (size_t t = 0; t < group.size(); ++t) {
    const LiveBuffer& r = m.ranges[t];
    int& g = slot[group[t]];
    if (g < 0) {
      g = static_cast<int>(merged.size());
      merged.push_back(r);
      continue;
    }
    merged[g].bytes = std::max(merged[g].bytes, r.bytes);
    merged[g].first = std::min(merged[g].first, r.first);
    merged[g].last = std::max(merged[g].last, r.last);
  }
  const PoolPlan pool = [&] {
    StageTimer timer("memory/pool_planner");
    return plan_pool(merged);
  }();
  m.pool.pool_bytes = pool.pool_bytes;
  m.pool.lower_bound = pool.lower_bound;
  for (size_t t = 0; t < group.size(); ++t) m.pool.offsets.push_back(pool.offsets[slot[group[t]]]);
  int steps = static_cast<int>(plan.steps.size());
  for (const LiveBuffer& r : merged) steps = std::max(steps, r.last + 1);
  std::vector<int64_t> delta(steps + 1, 0);  // live bytes: starts minus ends, summed up
  for (const LiveBuffer& r : merged) {
    delta[r.first] += pool_aligned(r.bytes);
    delta[r.last + 1] -= pool_aligned(r.bytes);
  }
  m.live_bytes.assign(steps, 0);
  for (int s = 0; s < steps; ++s) {
    m.live_bytes[s] = (s ? m.live_bytes[s - 1] : 0) + delta[s];
    if (m.peak_step < 0 && pool.lower_bound > 0 && m.live_bytes[s] == pool.lower_bound)
      m.peak_step = s;
  }
  return m;
}

TempMemory assign_pool_offsets(Plan* plan) {
  TempMemory m = plan_temp_memory(*plan);
  for (size_t t = 0; t < m.temps.size(); ++t) plan->buffers[m.temps[t]].offset = m.pool.offsets[t];
  plan->pool_bytes = m.pool.pool_bytes;
  return m;
}

}  // namespace ferrite
