#include "tests/fuzz/fuzz_inputs.h"

#include <algorithm>
#include <functional>

#include "bindings/cli/tensor_values.h"
#include "bindings/engine/engine.h"
#include "compiler/plan/error.h"
#include "compiler/plan/interpret.h"

namespace ferrite::fuzz {
namespace {

constexpr uint64_t kInputSeed = 0x5EEDF00D;  // as `ferrite run`
constexpr int64_t kMaxInputBytes = int64_t{1} << 40;

int64_t small_dim(const TensorType& t, size_t d) {
  if (d < t.dim_names.size() && !t.dim_names[d].empty()) {
    return static_cast<int64_t>(std::hash<std::string>()(t.dim_names[d]) % 3) + 1;
  }
  return 1;
}

bool add_bytes(int64_t* total, int64_t n) {
  return n >= 0 && !__builtin_add_overflow(*total, n, total);
}

}  // namespace

std::vector<TensorType> small_input_types(const Graph& g) {
  std::vector<TensorType> types;
  for (const Value* v : g.inputs) {
    TensorType t;
    t.dtype = v->type.dtype;
    if (v->type.rank_known) t.shape = v->type.shape;
    // A generated string is at most 7 bytes, held in a std::string.
    int64_t bytes = t.dtype == DType::String ? static_cast<int64_t>(sizeof(std::string))
                                             : static_cast<int64_t>(dtype_size(t.dtype));
    if (bytes == 0) fail("fuzz: input '", v->name, "' has no element type the engine takes");
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (t.shape[d] < 0) t.shape[d] = small_dim(v->type, d);
      if (__builtin_mul_overflow(bytes, t.shape[d], &bytes) || bytes > kMaxInputBytes) {
        fail("fuzz: input '", v->name, "' is larger than any tensor that can be fed");
      }
    }
    types.push_back(std::move(t));
  }
  return types;
}

std::vector<Tensor> generated_inputs(const std::vector<TensorType>& types) {
  int64_t total = 0;
  for (const TensorType& t : types) {
    int64_t n = 1;
    for (int64_t d : t.shape) {
      if (d < 0 || __builtin_mul_overflow(n, d, &n)) fail("fuzz: input too large to generate");
    }
    const int64_t size = t.dtype == DType::String ? static_cast<int64_t>(sizeof(std::string))
                                                  : static_cast<int64_t>(dtype_size(t.dtype));
    if (__builtin_mul_overflow(n, size, &n) || !add_bytes(&total, n) || total > kRunBudgetBytes) {
      fail("fuzz: inputs too large to generate");
    }
  }
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < types.size(); ++i) {
    inputs.push_back(generated_input(types[i].dtype, types[i].shape, kInputSeed + i));
  }
  return inputs;
}

std::vector<Tensor> generated_inputs(const Plan& plan) {
  std::vector<TensorType> types;
  for (int32_t id : plan.inputs) {
    TensorType t;
    t.dtype = plan.buffers[static_cast<size_t>(id)].dtype;
    t.shape = plan.buffers[static_cast<size_t>(id)].shape;
    types.push_back(std::move(t));
  }
  return generated_inputs(types);
}

Plan compile_for(const Graph& g, const std::vector<TensorType>& types,
                 const std::vector<Tensor>& values, const CompileOptions& options) {
  try {
    return compile_graph(g, types, options);
  } catch (const NeedsInputValueError&) {
    std::vector<std::shared_ptr<const TensorData>> known;
    for (const Tensor& t : values) {
      auto data = std::make_shared<TensorData>();
      data->dtype = t.dtype();
      data->shape = t.shape();
      data->bytes.assign(t.data(), t.data() + t.nbytes());
      known.push_back(std::move(data));
    }
    return compile_graph(g, types, options, known);
  }
}

CompileOptions options_for(size_t input_size) {
  CompileOptions options;
  options.channels_last = input_size % 2 == 1;
  options.fuse = input_size % 8 != 3;
  options.memory_limit = kCompileMemoryLimit;
  return options;
}

bool fits_budget(const Plan& plan) {
  int64_t total = 0;
  if (!add_bytes(&total, plan.pool_bytes)) return false;
  for (const PlanBuffer& b : plan.buffers) {
    int64_t n = -1;
    try {
      n = b.nbytes();
    } catch (const Error&) {
      return false;
    }
    if (b.kind != BufferKind::Temp && !add_bytes(&total, n)) return false;
  }
  for (const PackedConstant& p : plan.packed) {
    if (!add_bytes(&total, static_cast<int64_t>(p.bytes.size()))) return false;
  }
  return total <= kRunBudgetBytes && estimated_work(plan) <= kRunBudgetWork;
}

double estimated_work(const Plan& plan) {
  auto elements = [](const std::vector<int64_t>& shape) {
    double n = 1;
    for (int64_t d : shape) n *= static_cast<double>(std::max<int64_t>(d, 0));
    return n;
  };
  double work = 0;
  for (const Step& s : plan.steps) {
    const auto i = static_cast<size_t>(s.index);
    if (s.kind == StepKind::Kernel && i < plan.kernels.size()) {
      const Kernel& k = plan.kernels[i];
      work += interpret_work(k) + elements(k.ranges);
    } else if (s.kind == StepKind::Extern && i < plan.externs.size()) {
      const ExternCall& x = plan.externs[i];
      double out = 0, in = 0;
      for (const TensorRef& r : x.outputs) out += elements(r.shape);
      for (const TensorRef& r : x.inputs) in += elements(r.shape);
      double inner = 1;
      const bool conv = x.op == ExternOp::Conv || x.op == ExternOp::ConvTranspose ||
                        x.op == ExternOp::ConvInteger;
      const bool matmul = x.op == ExternOp::MatMul || x.op == ExternOp::MatMulInteger ||
                          x.op == ExternOp::MatMulNBits;
      if (matmul && !x.inputs.empty() && !x.inputs[0].shape.empty()) {
        inner = static_cast<double>(x.inputs[0].shape.back());
      } else if (conv && x.inputs.size() > 1 && !x.inputs[1].shape.empty()) {
        inner = elements(x.inputs[1].shape) / std::max<double>(1, x.inputs[1].shape[0]);
      } else {
        inner = 16;  // sorts, scatters, segment sums: a few passes over their operands
        out += in;
      }
      work += out * std::max(inner, 1.0);
    }
  }
  return work;
}

const std::vector<std::string>& fuzz_backends() {
  static const std::vector<std::string> kBackends = [] {
    default_backend();  // registers the jit backend in native builds
    std::vector<std::string> all = available_backends();
    std::vector<std::string> ordered = {"reference"};
    for (const std::string& b : all) {
      if (b.rfind("reference", 0) != 0) ordered.push_back(b);  // not its jittered forms
    }
    return ordered;
  }();
  return kBackends;
}

}  // namespace ferrite::fuzz
