// A node on its own (op type and attributes, no values), for ops the engine runs on values
// (value_sized_ops.h, sequence_ops.h).
#pragma once

#include <map>
#include <string>
#include <utility>

#include "compiler/graph/graph.h"

namespace ferrite::test {

inline Node node_of(const std::string& op, std::map<std::string, Attribute> attrs = {}) {
  Node n;
  n.op_type = op;
  n.attrs = std::move(attrs);
  return n;
}

}  // namespace ferrite::test
