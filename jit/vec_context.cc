#include "jit/vec_context.h"

#include "compiler/plan/error.h"

namespace ferrite {
namespace jit {

Xbyak::Xmm VecContext::tmp(size_t n) const {
  if (n >= scratch.size())
    fail("jit: a vector routine needs more than ", scratch.size(), " scratch registers");
  return vec(scratch[n]);
}

}  // namespace jit
}  // namespace ferrite
