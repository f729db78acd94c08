#include "compiler/plan/ops.h"

#include <cstring>
#include <iterator>

namespace ferrite {
namespace {

struct OpInfo {
  const char* name;
  int arity;
};

constexpr OpInfo kOps[] = {
#define FERRITE_OP_INFO(name, arity) {#name, arity},
    FERRITE_OPS(FERRITE_OP_INFO)
#undef FERRITE_OP_INFO
};

}  // namespace

const char* op_name(Op op) {
  auto i = static_cast<size_t>(op);
  return i < sizeof(kOps) / sizeof(kOps[0]) ? kOps[i].name : "?";
}

int op_arity(Op op) {
  auto i = static_cast<size_t>(op);
  return i < sizeof(kOps) / sizeof(kOps[0]) ? kOps[i].arity : -1;
}

bool op_from_name(const char* name, Op* out) {
  for (size_t i = 0; i < sizeof(kOps) / sizeof(kOps[0]); ++i) {
    if (std::strcmp(kOps[i].name, name) == 0) {
      *out = static_cast<Op>(i);
      return true;
    }
  }
  return false;
}

const char* reduce_name(ReduceKind k) {
  static constexpr const char* kNames[] = {"sum", "prod", "max", "min", "argmax", "argmin"};
  static_assert(std::size(kNames) == static_cast<size_t>(ReduceKind::kCount));
  const size_t i = static_cast<size_t>(k);
  return i < std::size(kNames) ? kNames[i] : "?";
}

}  // namespace ferrite
