// What the Engine needs from the compiler, behind one interface: an imported, prepared ONNX
// model that compiles Plans for concrete input shapes. model_compiler.cc implements it with
// the frontend and the compiler; a runtime-only build links no_compiler.cc instead, whose
// loader refuses ONNX models (it runs compiled plans only), so that neither the frontend
// nor the compiler ends up in its binary.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "runtime/session.h"
#include "runtime/tensor.h"

namespace ferrite {

// An input or output as the model declares it.
struct DeclaredIo {
  IoInfo info;                         // -1 for unknown or symbolic dims
  std::vector<std::string> dim_names;  // symbolic names ("" for static dims); may be empty
  bool rank_known = true;

  bool is_static() const;
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
