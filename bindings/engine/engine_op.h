// What an op the engine runs on its values (sequence_ops.h, string_ops.h) sees: the node,
// how errors name it, its inputs (null where omitted) and the memory limit of its outputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bindings/engine/engine_value.h"
#include "compiler/graph/graph.h"
#include "compiler/plan/error.h"

namespace ferrite {

struct EngineOp {
  const Node& node;
  const std::string& what;
  const std::vector<const EngineValue*>& in;
  int64_t memory_limit;

  // ferrite::Error "<what>: <args...>".
  template <class... Args>
  [[noreturn]] void error(const Args&... args) const {
    fail(what, ": ", args...);
  }
  const EngineValue* optional(size_t i) const { return i < in.size() ? in[i] : nullptr; }
  const EngineValue& input(size_t i) const {
    if (!optional(i)) error("missing required input ", i);
    return *in[i];
  }
  const Tensor& tensor(size_t i) const { return input(i).tensor(str_cat(what, ": input ", i)); }
};

}  // namespace ferrite
