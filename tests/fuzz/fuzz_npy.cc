// Fuzz target: the CLI's .npy reader (bindings/cli/npy.h). What it accepts, written again
// (encode_npy) and read back, is the same tensor.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bindings/cli/npy.h"
#include "compiler/plan/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ferrite;
  Tensor t;
  try {
    t = parse_npy(data, size, "fuzz.npy");
  } catch (const Error&) {
    return 0;
  }
  const std::vector<uint8_t> bytes = encode_npy(t);
  const Tensor back = parse_npy(bytes.data(), bytes.size(), "encoded");
  if (back.dtype() != t.dtype() || back.shape() != t.shape() || back.nbytes() != t.nbytes() ||
      (t.nbytes() && std::memcmp(back.data(), t.data(), t.nbytes()) != 0)) {
    std::fprintf(stderr, "==fuzz== npy: a tensor written and read back differs\n");
    std::abort();
  }
  return 0;
}
