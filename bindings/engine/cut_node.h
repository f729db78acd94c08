// The node a cut model runs between its head and its tail (model_compiler.h's ModelCut):
// a value-sized op on the values (value_sized_ops.h), the branch an If takes, a Loop's or a
// Scan's body once per iteration, or the node alone, each but the first an engine of its own, made
// when first needed and compiled per the shapes it is fed (so a branch never taken is
// never compiled, and a loop-carried value may change shape between iterations).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bindings/engine/engine_value.h"
#include "bindings/engine/model_compiler.h"
#include "runtime/tensor.h"

namespace ferrite {

class Engine;
struct EngineOptions;

class CutNode {
 public:
  CutNode(const ModelCut& cut, const EngineOptions& options);
  ~CutNode();

  // The node's outputs for its inputs (`in`, by position; null where omitted) and the
  // outer values its subgraphs read (`outer`, by name).
  std::vector<EngineValue> run(const std::vector<const EngineValue*>& in, const NamedValues& outer);

  // Its engines made so far, named ("then branch", "else branch", "body", "the node alone").
  std::vector<std::pair<std::string, const Engine*>> engines() const;

  // Plans its engines compiled, and their milliseconds.
  int64_t compiles() const;
  double compile_ms() const;

 private:
  Engine& part(size_t i);
  std::vector<EngineValue> run_part(size_t i, const NamedValues& formal, const NamedValues& outer);
  std::vector<EngineValue> run_if(const std::vector<const EngineValue*>& in,
                                  const NamedValues& outer);
  std::vector<EngineValue> run_loop(const std::vector<const EngineValue*>& in,
                                    const NamedValues& outer);
  std::vector<EngineValue> run_scan(const std::vector<const EngineValue*>& in,
                                    const NamedValues& outer);
  std::vector<EngineValue> run_sequence_map(const std::vector<const EngineValue*>& in,
                                            const NamedValues& outer);
  // A mover of strings: the node compiled on the positions of its string inputs' elements
  // (model_compiler.h's StringMover), its outputs read back as strings.
  std::vector<EngineValue> run_string_mover(const std::vector<const EngineValue*>& in);
  // One Scan-9 over `in` (states, then scan inputs; none null): final states, scan outputs.
  std::vector<EngineValue> scan_once(const std::vector<const Tensor*>& in,
                                     const NamedValues& outer);

  // Adds `t` to what a run keeps to stack (`*kept` bytes): that twice (the stacked copy)
  // must fit the memory limit, else LimitError naming the node and `what`.
  void keep(int64_t* kept, const Tensor& t, const char* what) const;

  const ModelCut& cut_;
  std::unique_ptr<EngineOptions> options_;
  std::vector<std::unique_ptr<Engine>> parts_;
  int64_t memory_limit_;
};

}  // namespace ferrite
