// The runtime-only build's ModelCompiler loader: there is no frontend and no compiler to
// load an ONNX model with, only compiled plans (`ferrite compile MODEL -o MODEL.fplan`).
#include "bindings/engine/model_compiler.h"
#include "compiler/plan/error.h"

namespace ferrite {
namespace {

[[noreturn]] void no_compiler() {
  throw UnsupportedError(
      "this is a runtime-only build of Ferrite: it runs compiled plans (.fplan files, "
      "written by `ferrite compile MODEL -o MODEL.fplan`), not ONNX models");
}

}  // namespace

std::unique_ptr<ModelCompiler> load_onnx_model(const uint8_t*, size_t, const CompileOptions&) {
  no_compiler();
}

std::unique_ptr<ModelCompiler> load_onnx_model_file(const std::string&, const CompileOptions&) {
  no_compiler();
}

bool has_compiler() {
  return false;
}

}  // namespace ferrite
