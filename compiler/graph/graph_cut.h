// Cutting a graph at a node whose output sizes depend on input values (NonZero, Compress,
// Unique, NonMaxSuppression), or that reads or makes a sequence or optional (runs_in_engine,
// below; the same cut): the compiler sizes everything before it runs, so such a node
// splits the model into a head, which computes what the node and everything after it read,
// the node itself, which the engine runs on the values (bindings/engine/value_sized_ops.h),
// and a tail, compiled for the sizes the node produced (and cut again at its own such node).
// Each part is an ordinary graph, compiled on its own; values cross by name. A part's
// inputs that were computed before the cut have no declared shape (rank unknown) and may
// have no known element type (Undefined): the fed tensors give both.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"

namespace ferrite {

// Whether `op_type` (default ONNX domain) is an op whose output sizes depend on its input
// values and which the engine runs between the compiled parts.
bool is_value_sized_op(const std::string& op_type, const std::string& domain);

// The ops on ONNX's sequences and optionals (graph.h's Container), which the engine runs on
// its values (bindings/engine/sequence_ops.h): SequenceEmpty, SequenceConstruct, ...
const std::vector<std::string>& sequence_ops();
bool is_sequence_op(const std::string& op_type, const std::string& domain);

// String tensors (DType::String) are values no plan holds either: the engine runs every node
// that reads or makes one (bindings/engine/string_ops.h). The ops on strings by name:
// StringConcat, StringSplit, StringNormalizer, RegexFullMatch.
bool is_string_op(const std::string& op_type, const std::string& domain);
// The ops that only move, pick or copy their data input's elements (Identity, Reshape,
// Transpose, Gather, Concat, Slice, Split, Where, ...): on strings, the engine runs them on
// the elements' positions (string_ops.h).
bool is_string_mover(const std::string& op_type, const std::string& domain);
// Whether `n` is a string op, or reads or makes a string tensor.
bool runs_on_strings(const Graph& g, const Node& n);
// Gives the values that nodes compute as strings, where the model does not declare their
// type, the element type string: the outputs of StringConcat, StringSplit's first,
// StringNormalizer, Cast and CastLike to string, LabelEncoder to strings, and of a mover of
// strings. `g`'s nodes in order (as the ONNX file lists them, topologically); subgraphs too.
void infer_string_types(Graph& g);

// Whether the engine runs `n` (a node of `g`) between compiled parts: a value-sized op, a
// sequence op, any node reading or making a sequence or optional value (an If or Loop
// carrying one, or whose subgraphs read one from `g`), or one on strings.
bool runs_in_engine(const Graph& g, const Node& n);

struct GraphCut {
  // Computes the cut node's inputs and the values after the cut reads from before it
  // (its outputs, by their names); inputs: the model inputs it reads. Null when the node
  // reads only model inputs and constants.
  std::unique_ptr<Graph> head;
  // The cut node, on its own: op type, attributes, name; inputs and outputs by name.
  Node node;
  std::string described;  // the node's describe() in the graph (its copy has no outputs)
  // The node as a graph of its own (single_node_graph).
  std::shared_ptr<const Graph> single;
  std::vector<std::string> node_inputs;  // "" for an omitted optional input
  std::vector<std::string> node_outputs;
  // Values of the cut node's constant inputs, by input index (null where not constant).
  std::vector<std::shared_ptr<const TensorData>> node_constants;
  // Everything else; inputs: what it reads from the model inputs, the head and the node.
  // Null when nothing follows the node.
  std::unique_ptr<Graph> tail;
  // The model's outputs by name, in order (each from the head, the node, the tail, a model
  // input or a constant), and the constants among them.
  std::vector<std::string> outputs;
  std::vector<std::pair<std::string, std::shared_ptr<const TensorData>>> constant_outputs;
};

// Cuts `g` (topologically sorted) at its first top-level value-sized node; null when it has
// none. Nodes inside If/Loop/Scan bodies are not cut here (a body runs as a graph of its
// own when its node is cut, and is cut in turn).
std::unique_ptr<GraphCut> cut_at_value_sized_node(const Graph& g);
// Cuts `g` (sorted) at nodes[at]: its ancestors, it, the rest.
std::unique_ptr<GraphCut> cut_at_node(const Graph& g, size_t at);
// Cuts `g` at its top-level node whose first output is `node_output` (NeedsCutError's);
// null when there is none, or when that node is all the graph holds and is not an If, a
// Loop or a Scan (run on its own, it would be that graph again).
std::unique_ptr<GraphCut> cut_at_output(const Graph& g, const std::string& node_output);

// A copy of `g` (inputs in order, as declared; nodes; constants shared; subgraphs shared).
std::unique_ptr<Graph> copy_graph(const Graph& g);
// An If branch or a Loop body as a graph of its own: its inputs are the formal inputs it
// reads and the outer values it captures, by name, none with a declared shape.
std::unique_ptr<Graph> standalone_subgraph(const Graph& body);
// The graph of one node of `g`: its inputs (and the values its subgraphs capture) as graph
// inputs with no declared shape, its outputs as graph outputs.
std::unique_ptr<Graph> single_node_graph(const Graph& g, const Node& n);

}  // namespace ferrite
