// The ops whose output sizes depend on their input values, run by the engine between the
// compiled parts of a cut model (compiler/graph/graph_cut.h): NonZero, Compress, Unique and
// NonMaxSuppression, with ONNX's semantics (and onnxruntime's where ONNX leaves a choice:
// NonMaxSuppression keeps the earlier box among equal scores). Full builds only.
#pragma once

#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "runtime/tensor.h"

namespace ferrite {

// Runs `node` (one of graph_cut.h's is_value_sized_op; its op type and attributes) on
// `inputs` (null for an omitted optional input); returns its first `num_outputs` outputs.
// Throws ferrite::Error starting with `what` (the node, described) for inputs of the wrong
// type, rank or size.
std::vector<Tensor> run_value_sized_op(const Node& node, const std::string& what,
                                       size_t num_outputs,
                                       const std::vector<const Tensor*>& inputs);

}  // namespace ferrite
