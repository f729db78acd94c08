// RegexFullMatch (ai.onnx, opset 20): whether each string of X matches the `pattern`
// attribute (RE2 syntax) as a whole. The pattern is compiled once, when the model loads:
// an invalid one fails the load, as in onnxruntime. RE2 matches in time linear in the
// string (no backtracking), so no pattern makes a run hang. Full builds only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bindings/engine/engine_value.h"
#include "compiler/graph/graph.h"

namespace re2 {
class RE2;
}

namespace ferrite {

class RegexFullMatch {
 public:
  // Compiles `node`'s pattern; throws ferrite::Error starting with `what` when it has none or
  // RE2 rejects it (with RE2's reason).
  RegexFullMatch(const Node& node, std::string what);
  ~RegexFullMatch();
  RegexFullMatch(const RegexFullMatch&) = delete;
  RegexFullMatch& operator=(const RegexFullMatch&) = delete;

  // Y (bool, X's shape) for X = inputs[0], a string tensor. Safe to call from several
  // threads at once.
  std::vector<EngineValue> run(const std::vector<const EngineValue*>& inputs,
                               int64_t memory_limit) const;

 private:
  std::string what_;
  std::unique_ptr<const re2::RE2> re_;
};

}  // namespace ferrite
