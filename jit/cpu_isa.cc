#include "jit/cpu_isa.h"

#include <xbyak/xbyak_util.h>
#include <cstdlib>
#include <iterator>

#include "compiler/plan/error.h"

namespace ferrite {
namespace jit {

const char* isa_name(Isa isa) {
  static constexpr const char* kNames[] = {"none", "avx2", "avx512"};  // enumerator order
  const size_t i = static_cast<size_t>(isa);
  return i < std::size(kNames) ? kNames[i] : "none";
}

bool host_supports(Isa isa) {
  static const Xbyak::util::Cpu cpu;
  using C = Xbyak::util::Cpu;
  const bool avx2 = cpu.has(C::tAVX2) && cpu.has(C::tFMA) && cpu.has(C::tF16C);
  switch (isa) {
    case Isa::None:
      return true;
    case Isa::Avx2:
      return avx2;
    case Isa::Avx512:
      return avx2 && cpu.has(C::tAVX512F) && cpu.has(C::tAVX512DQ) && cpu.has(C::tAVX512BW) &&
             cpu.has(C::tAVX512VL);
  }
  return false;
}

Isa host_isa() {
  if (host_supports(Isa::Avx512)) return Isa::Avx512;
  if (host_supports(Isa::Avx2)) return Isa::Avx2;
  return Isa::None;
}

Isa choose_isa(const std::string& requested) {
  std::string name = requested, source = "isa";
  if (name.empty()) {
    const char* env = std::getenv("FERRITE_ISA");
    if (env && *env) {
      name = env;
      source = "FERRITE_ISA";
    }
  }
  if (name.empty()) return host_isa();
  Isa isa;
  if (name == "avx512") {
    isa = Isa::Avx512;
  } else if (name == "avx2") {
    isa = Isa::Avx2;
  } else {
    fail(source, "=", name, ": unknown instruction set (expected avx2 or avx512)");
  }
  if (!host_supports(isa)) {
    fail(source, "=", name, ": this CPU does not support it (best here: ", isa_name(host_isa()),
         ")");
  }
  return isa;
}

}  // namespace jit
}  // namespace ferrite
