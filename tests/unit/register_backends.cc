// Every backend this build has is registered before any test runs, so the tests that loop
// over backend_names() cover the jit backend too (engine.cc registers it only when an
// Engine picks its default backend).
#ifdef FERRITE_HAS_JIT
#include "jit/jit_backend.h"

namespace ferrite {
namespace {

const bool kJitRegistered = [] {
  jit::register_jit_backend();
  return true;
}();

}  // namespace
}  // namespace ferrite
#endif
