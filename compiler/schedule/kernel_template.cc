#include "compiler/schedule/kernel_template.h"

#include "compiler/loopir/simplify.h"
#include "compiler/plan/error.h"

namespace ferrite {

Kernel instantiate_kernel(const KernelTemplate& t, const std::vector<int64_t>& values) {
  Kernel k = t.body;
  if (t.ranges.size() != k.ranges.size() || t.elements.size() != k.args.size())
    fail("kernel template ", k.name, ": ", t.ranges.size(), " range and ", t.elements.size(),
         " size formulas for ", k.ranges.size(), " loops and ", k.args.size(), " args");
  for (size_t d = 0; d < k.ranges.size(); ++d)
    k.ranges[d] = eval_size_formula(*t.ranges[d], values);
  for (size_t i = 0; i < k.args.size(); ++i)
    k.args[i].elements = eval_size_formula(*t.elements[i], values);
  IndexSimplifier simp(k.ranges);
  for (size_t i = 0; i < k.code.size(); ++i)
    if (k.code[i].op == Op::CheckIndex) simp.set_value_range(static_cast<int>(i), k.code[i].iimm);
  for (Instr& in : k.code)
    if (in.index) in.index = simp.simplify(bind_syms(in.index, values));
  validate_kernel(k);
  return k;
}

std::string kernel_templates_to_string(const std::vector<KernelTemplate>& templates) {
  std::string out;
  for (const KernelTemplate& t : templates) {
    out += str_cat("template of kernel ", t.kernel, ": ranges [");
    for (size_t d = 0; d < t.ranges.size(); ++d)
      out += str_cat(d ? ", " : "", index_to_string(*t.ranges[d]));
    out += "] arg elements [";
    for (size_t i = 0; i < t.elements.size(); ++i)
      out += str_cat(i ? ", " : "", index_to_string(*t.elements[i]));
    out += "]\n" + kernel_to_string(t.body) + "\n";
  }
  return out;
}

}  // namespace ferrite
