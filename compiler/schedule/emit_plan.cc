#include "compiler/schedule/emit_plan.h"

#include <map>
#include <set>

#include "compiler/memory/live_ranges.h"
#include "compiler/plan/error.h"
#include "compiler/schedule/loop_normalize.h"

namespace ferrite {
namespace {

Buffer* owner_of(Buffer* b) {
  int64_t offset;
  return b->storage_owner(&offset);
}

struct Scheduled {
  Buffer* computed = nullptr;
  int extern_index = -1;
  Kernel kernel;
  std::vector<Buffer*> args;  // kernel args, or extern inputs then outputs
  std::vector<LoweredGuard> guards;
};

// Keeps only the items some graph output depends on.
std::vector<Scheduled> schedule_items(LoweredProgram& prog) {
  std::vector<Scheduled> items;
  for (LoweredItem& it : prog.order) {
    Scheduled s;
    if (it.computed) {
      if (it.computed->origin != BufferOrigin::Computed) continue;  // folded to a constant
      s.computed = it.computed;
      s.kernel = std::move(it.kernel);
      s.args = it.args;
    } else {
      s.extern_index = it.extern_index;
      const ExternNode& e = prog.externs[it.extern_index];
      for (const auto& op : e.inputs) s.args.push_back(op.buffer);
      for (Buffer* b : e.outputs) s.args.push_back(owner_of(b));
    }
    s.guards = it.guards;
    items.push_back(std::move(s));
  }
  std::set<Buffer*> needed(prog.outputs.begin(), prog.outputs.end());
  std::vector<bool> keep(items.size(), false);
  for (int i = static_cast<int>(items.size()) - 1; i >= 0; --i) {
    Scheduled& s = items[i];
    // An item writing part of an Assembled buffer is needed when that buffer is.
    std::vector<Buffer*> outs;
    if (s.computed) {
      outs.push_back(owner_of(s.computed));
    } else {
      for (Buffer* b : prog.externs[s.extern_index].outputs) outs.push_back(owner_of(b));
    }
    for (Buffer* b : outs) keep[i] = keep[i] || needed.count(b);
    if (!keep[i]) continue;
    needed.insert(s.args.begin(), s.args.end());
    for (const LoweredGuard& g : s.guards) needed.insert(g.cond);
  }
  std::vector<Scheduled> out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (keep[i]) out.push_back(std::move(items[i]));
  }
  return out;
}

BufferKind kind_of(const Buffer* b) {
  if (b->origin == BufferOrigin::Input) return BufferKind::Input;
  if (b->origin == BufferOrigin::Constant) return BufferKind::Constant;
  if (b->output_index >= 0) return BufferKind::Output;
  return BufferKind::Temp;
}

}  // namespace

Plan emit_plan(LoweredProgram& prog) {
  std::vector<Scheduled> items = schedule_items(prog);
  Plan plan;
  std::map<Buffer*, int> ids;
  auto id_of = [&](Buffer* b) {
    auto it = ids.find(b);
    if (it != ids.end()) return it->second;
    PlanBuffer pb;
    pb.name = b->name;
    pb.dtype = b->dtype;
    pb.shape = b->size;
    pb.kind = kind_of(b);
    if (pb.kind == BufferKind::Constant) {
      pb.constant = static_cast<int>(plan.constants.size());
      plan.constants.push_back(b->data->bytes);
    }
    plan.buffers.push_back(std::move(pb));
    int id = static_cast<int>(plan.buffers.size()) - 1;
    ids[b] = id;
    return id;
  };
  for (Buffer* b : prog.inputs) plan.inputs.push_back(id_of(b));
  for (Buffer* b : prog.outputs) plan.outputs.push_back(id_of(b));
  for (auto& s : items) {
    Step step;
    for (Buffer* b : s.args) id_of(b);
    for (const LoweredGuard& g : s.guards) step.guards.push_back(Guard{id_of(g.cond), g.value});
    if (s.computed) {
      step.kind = StepKind::Kernel;
      step.index = static_cast<int>(plan.kernels.size());
      for (Buffer* b : s.args) step.buffers.push_back(ids[b]);
      plan.kernels.push_back(normalize_loops(s.kernel));
    } else {
      const ExternNode& e = prog.externs[s.extern_index];
      ExternCall call;
      call.op = e.op;
      call.origin = e.origin;
      call.ints = e.ints;
      call.floats = e.floats;
      for (const auto& op : e.inputs) {
        call.inputs.push_back(TensorRef{ids[op.buffer], op.shape, op.strides, op.offset});
      }
      for (Buffer* b : e.outputs) {
        int64_t offset;
        Buffer* owner = b->storage_owner(&offset);
        call.outputs.push_back(TensorRef{ids[owner], b->size, contiguous_strides(b->size), offset});
      }
      step.kind = StepKind::Extern;
      step.index = static_cast<int>(plan.externs.size());
      plan.externs.push_back(std::move(call));
    }
    plan.steps.push_back(std::move(step));
  }
  assign_pool_offsets(&plan);
  return plan;
}

}  // namespace ferrite
