// Validity checks of an ONNX model beyond what building the Graph already enforces, after
// onnx.checker: opset imports; each node against the schema in force for it (input and
// output counts, empty names for required ones, attribute names, types and presence);
// attribute well-formedness; and the element types of every node's inputs and outputs
// against its schema's type constraints, propagated through the graph and its subgraphs.
// Errors are ferrite::Error naming the node, the op (with its schema version) and what is
// wrong. Ops and domains the schema table lacks are left to lowering, which reports them
// unsupported.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "compiler/frontend/onnx/onnx_proto.h"
#include "compiler/graph/graph.h"

namespace ferrite::onnx {

using Opsets = std::map<std::string, int64_t>;  // domain ("" for ai.onnx) -> version

// "Add 'add_1'", or by first output when unnamed: how errors name a node.
std::string describe_node(const NodeProto& n);

// The model's opset imports, checked: each domain once, versions from 1, the default
// domain imported (IR >= 3; older models get ai.onnx 1); a version newer than the schema
// table knows is unsupported.
Opsets check_opset_imports(const ModelProto& m);

// The AttributeProto.AttributeType of the value field `a` holds (kUndefined if none).
int attribute_field_type(const AttributeProto& a);

// One node against its schema and the opset imports; `ir_version` decides whether an
// attribute must state its type (IR >= 2).
void check_node(const NodeProto& n, const Opsets& opsets, int64_t ir_version);

// Element types of every node of `g` and its subgraphs against the type constraints.
void check_types(const Graph& g);

}  // namespace ferrite::onnx
