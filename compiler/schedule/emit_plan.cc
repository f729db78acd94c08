#include "compiler/schedule/emit_plan.h"

#include <map>
#include <set>

#include "compiler/loopir/shape_env.h"
#include "compiler/plan/error.h"

namespace ferrite {
namespace {

BufferKind kind_of(const Buffer* b) {
  if (b->origin == BufferOrigin::Input) return BufferKind::Input;
  if (b->origin == BufferOrigin::Constant) return BufferKind::Constant;
  if (b->output_index >= 0) return BufferKind::Output;
  return BufferKind::Temp;
}

// The template of a kernel over the symbols: its ranges', and its args' sizes' formulas.
KernelTemplate kernel_template(const BoundKernel& bk, int32_t index) {
  KernelTemplate t;
  t.kernel = index;
  t.body = bk.kernel;
  t.ranges = *bk.sym_ranges;
  for (Buffer* b : bk.args) {
    int64_t offset;
    const Buffer* owner = b->storage_owner(&offset);
    if (!owner->sym) not_symbolic("kernel ", bk.kernel.name, ": an arg of no symbolic shape");
    Index n = ix_const(1);
    for (const Index& d : *owner->sym) n = sym_mul(n, d);
    t.elements.push_back(n);
  }
  return t;
}

// An extern's view of its output as dims `perm` of the dense buffer (shape and strides, in
// hints and, with sym_shape, over the symbols).
void permute_ref(const std::vector<int>& perm, TensorRef* r, std::vector<Index>* sym_shape,
                 std::vector<Index>* sym_strides) {
  const TensorRef dense = *r;
  const std::vector<Index> dense_shape = sym_shape ? *sym_shape : std::vector<Index>{};
  const std::vector<Index> dense_strides = *sym_strides;
  for (size_t d = 0; d < perm.size(); ++d) {
    r->shape[d] = dense.shape[static_cast<size_t>(perm[d])];
    r->strides[d] = dense.strides[static_cast<size_t>(perm[d])];
    if (sym_shape) {
      sym_shape->at(d) = dense_shape.at(static_cast<size_t>(perm[d]));
      sym_strides->at(d) = dense_strides.at(static_cast<size_t>(perm[d]));
    }
  }
}

}  // namespace

Plan emit_plan(const LoweredProgram& prog, const std::vector<const SchedulerNode*>& order,
               std::vector<FieldFormula>* formulas, std::vector<KernelTemplate>* templates) {
  if (formulas && !templates) fail("internal: a symbolic plan emitted without its kernels");
  std::vector<int64_t> hints;
  for (const ShapeSymbol& s : prog.symbols) hints.push_back(s.hint);
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
    if (b == prog.symbol_values) {  // a constant each instance writes (plan_formulas.h)
      if (!formulas) fail("internal: symbol values in a plan compiled per shape");
      pb.kind = BufferKind::Constant;
      pb.constant = static_cast<int>(plan.constants.size());
      const auto* bytes = reinterpret_cast<const uint8_t*>(hints.data());
      plan.constants.push_back(ConstantBytes(bytes, bytes + hints.size() * sizeof(int64_t)));
      formulas->push_back(FieldFormula{FormulaField::SymbolValues,
                                       static_cast<int32_t>(plan.buffers.size()), 0, 0, nullptr});
    } else if (pb.kind == BufferKind::Constant) {
      pb.constant = static_cast<int>(plan.constants.size());
      plan.constants.push_back(b->data->bytes);  // shared with the graph, not copied
    }
    plan.buffers.push_back(std::move(pb));
    int id = static_cast<int>(plan.buffers.size()) - 1;
    if (formulas) {
      if (!b->sym) not_symbolic("buffer '", b->name, "': no symbolic shape");
      for (size_t d = 0; d < b->sym->size(); ++d)
        add_formula(formulas, FormulaField::BufferShape, id, 0, static_cast<int32_t>(d),
                    (*b->sym)[d]);
    }
    ids[b] = id;
    return id;
  };
  for (Buffer* b : prog.inputs) plan.inputs.push_back(id_of(b));
  for (Buffer* b : prog.outputs) plan.outputs.push_back(id_of(b));
  for (const SchedulerNode* node : order) {
    Step step;
    for (const LoweredGuard& g : node->guards) step.guards.push_back(Guard{id_of(g.cond), g.value});
    if (!node->is_extern()) {
      step.kind = StepKind::Kernel;
      step.index = static_cast<int>(plan.kernels.size());
      for (Buffer* b : node->kernel.args) step.buffers.push_back(id_of(b));
      if (formulas) {
        if (!node->kernel.sym_ranges)
          not_symbolic("kernel ", node->kernel.kernel.name, ": not over the symbols");
        templates->push_back(kernel_template(node->kernel, step.index));
        plan.kernels.push_back(instantiate_kernel(templates->back(), hints));
      } else {
        plan.kernels.push_back(node->kernel.kernel);
      }
    } else {
      const ExternNode& e = prog.externs[node->extern_index];
      ExternCall call;
      call.op = e.op;
      call.origin = e.origin;
      call.ints = e.ints;
      call.floats = e.floats;
      set_epilogue(&call, e.epilogue);
      const int32_t index = static_cast<int32_t>(plan.externs.size());
      for (const auto& op : e.inputs) {
        if (formulas) {
          if (!e.symbolic || !op.sym_offset) not_symbolic(e.origin, ": not symbolic");
          add_ref_formulas(formulas, true, index, static_cast<int32_t>(call.inputs.size()),
                           op.sym_shape, op.sym_strides, op.sym_offset);
        }
        call.inputs.push_back(TensorRef{id_of(op.buffer), op.shape, op.strides, op.offset});
      }
      for (size_t i = 0; i < e.outputs.size(); ++i) {
        Buffer* b = e.outputs[i];
        int64_t offset;
        Buffer* owner = b->storage_owner(&offset);
        TensorRef r{id_of(owner), b->size, contiguous_strides(b->size), offset};
        std::vector<Index> sym_shape, sym_strides;
        if (formulas) {
          if (!b->sym || b->alias_of) not_symbolic(e.origin, ": a result not symbolic");
          sym_shape = *b->sym;
          sym_strides = sym_contiguous_strides(sym_shape);
        }
        if (i < e.output_perms.size() && !e.output_perms[i].empty())
          permute_ref(e.output_perms[i], &r, formulas ? &sym_shape : nullptr, &sym_strides);
        if (formulas)
          add_ref_formulas(formulas, false, index, static_cast<int32_t>(i), sym_shape, sym_strides,
                           ix_const(offset));
        call.outputs.push_back(std::move(r));
      }
      step.kind = StepKind::Extern;
      step.index = static_cast<int>(plan.externs.size());
      plan.externs.push_back(std::move(call));
    }
    plan.steps.push_back(std::move(step));
  }
  return plan;
}

}  // namespace ferrite
