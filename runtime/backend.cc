// The backend registry. The built-in backends are listed here explicitly (a static
// registration object in a static library would be dropped by the linker).
#include "runtime/backend.h"

#include <map>
#include <mutex>

#include "compiler/plan/error.h"
#include "runtime/function_extern.h"
#include "runtime/kernels/portable/portable_backend.h"
#include "runtime/kernels/reference/reference_backend.h"

namespace ferrite {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, BackendFactory> factories = {
      {"reference", [](const BackendOptions&) { return make_reference_backend(); }},
      {"portable", [](const BackendOptions& o) { return make_portable_backend(o); }},
  };
};

Registry& registry() {
  static Registry r;
  return r;
}

class FunctionExtern : public PreparedExtern {
 public:
  FunctionExtern(const ExternCall& call, ExternFn fn) : call_(call), fn_(fn) {}
  void run(const ExternBuffer* inputs, const ExternBuffer* outputs) override {
    fn_(call_, inputs, outputs);
  }

 private:
  const ExternCall& call_;
  ExternFn fn_;
};

}  // namespace

std::unique_ptr<PreparedExtern> prepare_function_extern(const ExternCall& call, ExternFn fn) {
  return std::make_unique<FunctionExtern>(call, fn);
}

std::unique_ptr<PreparedExtern> KernelBackend::prepare_extern(
    const ExternCall& call, const std::vector<ExternBuffer>& /*constants*/,
    const std::vector<PackedInput>& /*packed*/) const {
  fail("extern '", extern_op_name(call.op), "': not implemented by backend '", name(), "'");
}

void register_backend(const std::string& name, BackendFactory factory) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.factories[name] = factory;
}

std::vector<std::string> backend_names() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> names;
  for (const auto& kv : r.factories) names.push_back(kv.first);
  return names;
}

std::unique_ptr<KernelBackend> make_backend(const std::string& name,
                                            const BackendOptions& options) {
  BackendFactory factory = nullptr;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.factories.find(name);
    if (it != r.factories.end()) factory = it->second;
  }
  if (!factory) {
    std::string known;
    for (const std::string& n : backend_names()) known += (known.empty() ? "" : ", ") + n;
    fail("unknown backend '", name, "' (available: ", known, ")");
  }
  return factory(options);
}

}  // namespace ferrite
