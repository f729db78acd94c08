#include "runtime/kernels/dnnl/dnnl_externs.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>

#include "compiler/plan/externs/extern_op.h"
#include "runtime/kernels/dnnl/dnnl_conv.h"
#include "runtime/kernels/dnnl/dnnl_conv_integer.h"
#include "runtime/kernels/dnnl/dnnl_matmul.h"
#include "runtime/kernels/dnnl/dnnl_matmul_integer.h"
#include "runtime/kernels/dnnl/dnnl_steps.h"

namespace ferrite {

namespace {

double elements_of(const TensorRef& r) {
  double n = 1;
  for (int64_t d : r.shape) n *= d > 0 ? static_cast<double>(d) : 0.0;
  return n;
}

// Multiply-adds of a call (0 when its operands are not what the op needs: the op's own
// checks report that).
double multiply_adds(ExternOp op, const ExternCall& call) {
  if (call.inputs.size() < 2 || call.outputs.empty()) return 0;
  const TensorRef &x = call.inputs[0], &w = call.inputs[1], &y = call.outputs[0];
  if (x.shape.empty() || w.shape.empty()) return 0;
  if (op == ExternOp::MatMul || op == ExternOp::MatMulInteger)
    return elements_of(y) * static_cast<double>(x.shape.back());
  const double per_channel =
      w.shape[0] > 0 ? elements_of(w) / static_cast<double>(w.shape[0]) : 0.0;
  return elements_of(op == ExternOp::ConvTranspose ? x : y) * per_channel;
}

// oneDNN opens an OpenMP region for every primitive, whatever its size; below about 1e5
// multiply-adds (~1 us on one AVX-512 core) the region's wake-up and barrier cost more than
// the split saves, so such calls run on the caller's thread. Above it two threads pay off
// even for a vector-matrix product, which is memory-bound: the mlp's 784x512 layer at
// batch 1 (4e5 multiply-adds) takes 20 us on one thread and 13 us on two (each streams
// half the weights, which then fit its core's L2), and mobilenet_v2 at 2 threads ran
// 6.1 -> 5.7 ms when this limit went from 1e6 to 1e5.
constexpr double kMinParallelMultiplyAdds = 1e5;

}  // namespace

bool dnnl_enabled() {
  const char* v = std::getenv("FERRITE_DNNL");
  return !(v && std::strcmp(v, "0") == 0);
}

bool dnnl_has_avx512() {
  // The ISA oneDNN dispatches to: the CPU's, capped by ONEDNN_MAX_CPU_ISA.
  return dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core;
}

bool dnnl_has_bf16() {
  return dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core_bf16;
}

std::unique_ptr<PreparedExtern> prepare_dnnl_extern(const ExternCall& call,
                                                    const std::vector<ExternBuffer>& constants,
                                                    const std::vector<PackedInput>& packed,
                                                    int threads, PackedStore* store,
                                                    bool fast_math) {
  if (!dnnl_enabled()) return nullptr;
  // An epilogue that is no chain of post-ops has no oneDNN form: the portable op applies it.
  if (!call.epilogue.empty() && call.post_ops.empty()) return nullptr;
  const ExternOp op = call.op;
  if (multiply_adds(op, call) < kMinParallelMultiplyAdds) threads = 1;
  const onednn::PackedForms forms{packed, store};
  const bool bf16 = fast_math && dnnl_has_bf16();
  switch (op) {  // the registration table
    case ExternOp::MatMul:
      return onednn::prepare_matmul(call, constants, forms, threads, bf16);
    case ExternOp::Conv:
    case ExternOp::ConvTranspose:
      return onednn::prepare_conv(call, constants, forms, threads, bf16);
    case ExternOp::MatMulInteger:
      return onednn::prepare_matmul_integer(call, constants, forms, threads);
    case ExternOp::ConvInteger:
      return onednn::prepare_conv_integer(call, constants, forms, threads);
    case ExternOp::ScatterElements:
    case ExternOp::ScatterND:
    case ExternOp::SegmentReduce:
    case ExternOp::TopK:
    case ExternOp::Attention:
    case ExternOp::MatMulNBits:
    case ExternOp::BitCast:
      return nullptr;  // not oneDNN ops
  }
  return nullptr;
}

}  // namespace ferrite
