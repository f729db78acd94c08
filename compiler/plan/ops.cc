#include "compiler/plan/ops.h"

#include <cstring>
#include <iterator>
#include <limits>

namespace ferrite {
namespace {

using namespace op_vec;
constexpr double kInf = std::numeric_limits<double>::infinity();

constexpr OpInfo kOps[] = {
#define FERRITE_OP_INFO(name, arity, vector, ulp, lo, hi) {#name, arity, vector, ulp, lo, hi},
    FERRITE_OPS(FERRITE_OP_INFO)
#undef FERRITE_OP_INFO
};
static_assert(std::size(kOps) == static_cast<size_t>(Op::kCount));
constexpr OpInfo kUnknown = {"?", -1, 0, 0, 0, 0};

}  // namespace

const OpInfo& op_info(Op op) {
  const auto i = static_cast<size_t>(op);
  return i < std::size(kOps) ? kOps[i] : kUnknown;
}

const char* op_name(Op op) {
  return op_info(op).name;
}

int op_arity(Op op) {
  return op_info(op).arity;
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
