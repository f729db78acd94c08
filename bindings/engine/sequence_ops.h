// The ops on ONNX's sequences and optionals (compiler/graph/graph_cut.h's sequence_ops, and
// Identity of such a value), run by the engine on its values (engine_value.h) between the
// compiled parts of a model: a sequence is a list of tensors (shared, never copied); an
// optional holding a value is that value, an empty one no value. Full builds only.
#pragma once

#include <string>
#include <vector>

#include "bindings/engine/engine_value.h"
#include "compiler/graph/graph.h"

namespace ferrite {

// Runs `node` on `inputs` (null for an omitted optional input); returns its first
// `num_outputs` outputs. Throws ferrite::Error starting with `what` (the node, described)
// for inputs of the wrong kind or type, and positions or splits out of range; LimitError
// for a ConcatFromSequence output past `memory_limit` bytes (a sequence may hold one
// tensor many times).
std::vector<EngineValue> run_sequence_op(const Node& node, const std::string& what,
                                         size_t num_outputs,
                                         const std::vector<const EngineValue*>& inputs,
                                         int64_t memory_limit);

}  // namespace ferrite
