#include "compiler/plan/dependence_classes.h"

namespace ferrite {

ClassMask index_classes(const IndexNode& e, const DependenceClasses& c,
                        const std::vector<ClassMask>& masks) {
  switch (e.kind) {
    case IndexKind::Const:
      return 0;
    case IndexKind::Var:
      return c.var[static_cast<size_t>(e.id)];
    case IndexKind::Value:
      return masks[static_cast<size_t>(e.id)];
    default:
      return index_classes(*e.a, c, masks) | index_classes(*e.b, c, masks);
  }
}

std::vector<ClassMask> dependence_classes(const Kernel& k, const DependenceClasses& c) {
  ClassMask outer = c.reduce_result;
  for (int v = 0; v < k.num_outer(); ++v) outer |= c.var[static_cast<size_t>(v)];
  std::vector<ClassMask> masks(k.code.size(), 0);
  for (size_t i = 0; i < k.code.size(); ++i) {
    const Instr& in = k.code[i];
    ClassMask m = c.seed.empty() ? 0 : c.seed[i];
    if (in.op == Op::Reduce) {
      masks[i] = m | outer;
      continue;
    }
    for_each_value_operand(in, [&](int id) { m |= masks[static_cast<size_t>(id)]; });
    if (in.index) m |= index_classes(*in.index, c, masks);
    if (in.op == Op::LoopVar) m |= c.var[static_cast<size_t>(in.arg)];
    if (in.op == Op::Load) m |= c.load;
    if (in.op == Op::CheckIndex) m |= c.check;
    masks[i] = m;
  }
  return masks;
}

}  // namespace ferrite
