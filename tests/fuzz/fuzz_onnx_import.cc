// Fuzz target: the ONNX reader and importer (compiler/frontend/onnx) on any bytes, as a
// model and as a serialized TensorProto (the node suites' input_N.pb). Malformed input must
// give a ferrite::Error; anything else escapes (fuzz_inputs.h).
#include <cstddef>
#include <cstdint>

#include "compiler/frontend/onnx/onnx_import.h"
#include "compiler/plan/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    ferrite::import_onnx(data, size, "");
  } catch (const ferrite::Error&) {
  }
  try {
    ferrite::parse_tensor_proto(data, size);
  } catch (const ferrite::Error&) {
  }
  return 0;
}
