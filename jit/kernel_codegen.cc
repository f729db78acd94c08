#include "jit/kernel_codegen.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>

#include <xbyak/xbyak.h>

#include "compiler/plan/error.h"
#include "jit/kernel_emitter.h"

namespace ferrite {
namespace jit {
namespace {

using namespace Xbyak;

class Sealed : public CompiledCode {
 public:
  Sealed(std::unique_ptr<CodeGenerator> g, size_t instruction_bytes)
      : g_(std::move(g)), instruction_bytes_(instruction_bytes) {}
  JitFn fn() const override { return reinterpret_cast<JitFn>(const_cast<uint8_t*>(g_->getCode())); }
  const uint8_t* code() const override { return g_->getCode(); }
  size_t size() const override { return g_->getSize(); }
  size_t instruction_bytes() const override { return instruction_bytes_; }

 private:
  std::unique_ptr<CodeGenerator> g_;
  size_t instruction_bytes_;
};

}  // namespace

std::unique_ptr<CompiledCode> generate_kernel(const Layout& layout) {
  constexpr size_t kMaxCode = size_t(1) << 20;
  auto gen = std::make_unique<KernelEmitter>(layout, kMaxCode);
  try {
    gen->generate();
  } catch (const Xbyak::Error& e) {
    fail("jit: kernel '", layout.k.name, "': code generation failed: ", e.what());
  }
  if (gen->hasUndefinedLabel()) fail("jit: kernel '", layout.k.name, "': undefined label");
  gen->setProtectModeRE();  // W^X: writable while generating, now read+execute only
  const size_t instruction_bytes = gen->instruction_bytes();
  return std::make_unique<Sealed>(std::move(gen), instruction_bytes);
}

}  // namespace jit
}  // namespace ferrite
