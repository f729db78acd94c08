// The ops on string tensors (runtime/tensor.h's DType::String), run by the engine between
// the compiled parts of a model (compiler/graph/graph_cut.h's runs_on_strings): no plan holds
// strings. StringConcat, StringSplit, StringNormalizer, Equal on strings, LabelEncoder from or
// to strings, Cast and CastLike to and from strings. The ops that only move elements
// (graph_cut.h's is_string_mover) run compiled, on the elements' positions (cut_node.h).
// Strings are bytes (UTF-8 by ONNX's convention), compared byte for byte. Full builds only.
#pragma once

#include <string>
#include <vector>

#include "bindings/engine/engine_value.h"
#include "compiler/graph/graph.h"

namespace ferrite {

// Runs `node` on `inputs` (null for an omitted optional input); returns its first
// `num_outputs` outputs. Throws ferrite::Error starting with `what` (the node, described) for
// inputs of the wrong type or shape; UnsupportedError for an op on strings it lacks; a
// LimitError for an output past `memory_limit` bytes.
std::vector<EngineValue> run_string_op(const Node& node, const std::string& what,
                                       size_t num_outputs,
                                       const std::vector<const EngineValue*>& inputs,
                                       int64_t memory_limit);

// The shape two shapes broadcast to (numpy's rule); fails naming `what` when they do not.
std::vector<int64_t> broadcast_shapes(const std::string& what, const std::vector<int64_t>& a,
                                      const std::vector<int64_t>& b);
// For each element of `out` (row-major), the index of the element of a tensor of shape `in`
// broadcast to it.
std::vector<int64_t> broadcast_index(const std::vector<int64_t>& in,
                                     const std::vector<int64_t>& out);

}  // namespace ferrite
