// What the Engine needs from the compiler, behind one interface: an imported, prepared ONNX
// model that compiles Plans for concrete input shapes. model_compiler.cc implements it with
// the frontend and the compiler; a runtime-only build links no_compiler.cc instead, whose
// loader refuses ONNX models (it runs compiled plans only), so that neither the frontend
// nor the compiler ends up in its binary.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bindings/engine/engine_value.h"
#include "compiler/compile.h"
#include "runtime/session.h"
#include "runtime/tensor.h"

namespace ferrite {

// An input or output as the model declares it.
struct DeclaredIo {
  IoInfo info;                         // -1 for unknown or symbolic dims
  std::vector<std::string> dim_names;  // symbolic names ("" for static dims); may be empty
  bool rank_known = true;
  // A sequence or optional: `info` and the rest describe its tensors.
  Container container = Container::Tensor;

  bool is_static() const;
};

class ModelCompiler;

// A model cut at a node that no plan can hold (compiler/graph/graph_cut.h): one whose
// output sizes depend on input values (NonZero, Compress, Unique, NonMaxSuppression), one
// that reads or makes a sequence or optional (graph_cut.h's runs_in_engine), or one whose
// compile raised NeedsCutError (an If whose branches need different shapes, a
// Loop with a run-time trip count, an op needing a value computed at run time). The engine
// runs `head` (which computes what the node and everything after it read), then the node
// on those values, then `tail`, compiled for the sizes the node produced. Values cross by
// name.
struct ModelCut {
  // How the node runs: ValueSized (a value-sized op, a sequence op, an Identity of a
  // sequence or optional) by run_node; If, Loop and Scan by engines of their
  // branches or body (parts, below); Single by an engine of the node alone (parts[0]),
  // compiled for its inputs' shapes and values.
  // StringMover: a node that moves string elements (graph_cut.h's is_string_mover), compiled
  // (parts[0]) on the positions of the elements of its string inputs (string_inputs).
  enum class Kind { ValueSized, If, Loop, Scan, SequenceMap, Single, StringMover };
  Kind kind = Kind::ValueSized;
  std::unique_ptr<ModelCompiler> head, tail;  // either may be null (nothing to compute)
  // If: then, else; Loop: the body; Single: the node alone. Made when first run, so an If
  // branch never taken is never compiled (and reports its errors only when taken).
  std::vector<std::function<std::unique_ptr<ModelCompiler>()>> parts;
  // Per part, the names of its formal inputs in order (Loop: iteration number, condition,
  // loop-carried values); a part's other inputs are outer values it reads, by name.
  std::vector<std::vector<std::string>> part_inputs;
  // Loop, Scan and SequenceMap: the element type and shape (-1 where not static) the body declares
  // for each output, which gives a scan output's type when no iteration ran.
  std::vector<std::pair<DType, std::vector<int64_t>>> body_outputs;
  // Scan: how many of its inputs are scanned (the last ones), and the
  // axes and directions of its scan inputs and outputs (as the attributes give them).
  int64_t num_scan_inputs = 0;
  // Scan-8: a leading sequence_lens input and a batch axis 0 on every other input and output
  // (its scan inputs' directions in scan_input_directions; the other lists empty).
  bool scan_batched = false;
  std::vector<int64_t> scan_input_axes, scan_input_directions, scan_output_axes,
      scan_output_directions;
  std::vector<bool> string_inputs;       // StringMover: per node input, whether strings
  std::string node;                      // "NonZero 'nz'", for messages
  std::vector<std::string> node_inputs;  // "" for an omitted optional input
  std::vector<std::string> node_outputs;
  std::vector<std::shared_ptr<const Tensor>> node_constants;  // per input; null if not constant
  // (inputs, the memory limit): ConcatFromSequence may join one shared tensor many times.
  std::function<std::vector<EngineValue>(const std::vector<const EngineValue*>&, int64_t)> run_node;
  std::vector<std::string> outputs;  // the model's outputs, by name, in order
  std::vector<std::pair<std::string, std::shared_ptr<const Tensor>>> constant_outputs;
};

class ModelCompiler {
 public:
  virtual ~ModelCompiler() = default;
  virtual const std::vector<DeclaredIo>& inputs() const = 0;
  virtual const std::vector<DeclaredIo>& outputs() const = 0;
  // A plan for these input types (all dims static). `values` (empty, or one per input,
  // null where unknown) specializes it on those inputs' values. Throws ferrite::Error, and
  // NeedsInputValueError when the plan needs the value of an input it was not given.
  virtual Plan compile(const std::vector<IoInfo>& types,
                       const std::vector<const Tensor*>& values) = 0;
  // How many plans the compile pipeline made so far: a model compiled once for its symbolic
  // dims instantiates that plan for each shape set, and compiles no more (docs/shapes.md).
  virtual int64_t plans_made() const = 0;
  // Whether the model was compiled once for its symbolic dims, or why not; empty until a
  // shape set with symbolic dims >= 2 was compiled.
  virtual std::string symbolic_status() const { return ""; }
  // The model's cut, once (null when it has no value-sized node). A cut model compiles
  // only through the cut's parts.
  virtual std::unique_ptr<ModelCut> take_cut() { return nullptr; }
  // The model cut at the top-level node NeedsCutError named (by its first output); null
  // when it cannot be cut there.
  virtual std::unique_ptr<ModelCut> cut_at(const std::string& node_output) {
    static_cast<void>(node_output);
    return nullptr;
  }
};

// Imports an ONNX model (from bytes, or a file whose directory holds its external data)
// and runs the shape-independent graph passes. In a runtime-only build: UnsupportedError.
std::unique_ptr<ModelCompiler> load_onnx_model(const uint8_t* data, size_t size,
                                               const CompileOptions& options);
std::unique_ptr<ModelCompiler> load_onnx_model_file(const std::string& path,
                                                    const CompileOptions& options);

// Whether the build has the compiler (false in runtime-only builds).
bool has_compiler();

}  // namespace ferrite
