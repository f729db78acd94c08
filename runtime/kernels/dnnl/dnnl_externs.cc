#include "runtime/kernels/dnnl/dnnl_externs.h"

#include <cstdlib>
#include <cstring>

#include "runtime/kernels/dnnl/dnnl_conv.h"
#include "runtime/kernels/dnnl/dnnl_matmul.h"

namespace ferrite {

bool dnnl_enabled() {
  const char* v = std::getenv("FERRITE_DNNL");
  return !(v && std::strcmp(v, "0") == 0);
}

std::unique_ptr<PreparedExtern> prepare_dnnl_extern(const ExternCall& call,
                                                    const std::vector<ExternBuffer>& constants,
                                                    int threads) {
  if (!dnnl_enabled()) return nullptr;
  if (call.op == "MatMul") return onednn::prepare_matmul(call, constants, threads);
  if (call.op == "Conv") return onednn::prepare_conv(call, constants, threads, false);
  if (call.op == "ConvTranspose") return onednn::prepare_conv(call, constants, threads, true);
  return nullptr;
}

}  // namespace ferrite
