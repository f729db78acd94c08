// libhwy's out-of-line symbols for the wasm build. Natively we link Debian's libhwy; for
// Emscripten only its headers exist, and they call a handful of functions that live in
// libhwy's .cc files: the aligned allocator, Abort and the target queries behind
// HWY_DYNAMIC_DISPATCH. This file provides them with the same contracts.
//
// One deliberate difference: hwy::Abort throws ferrite::Error instead of calling abort(),
// because nothing in Ferrite may take down the host (a browser tab, a node process).
#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "compiler/plan/error.h"
#include "hwy/aligned_allocator.h"
#include "hwy/base.h"
#include "hwy/targets.h"

namespace hwy {
namespace {

// Stored just below each aligned block so that Free can find what malloc returned and
// DeleteAlignedArray knows how many bytes of objects to destroy.
struct AllocationHeader {
  void* allocated;
  size_t payload_size;
};

// Large enough for the header and keeps every block a multiple of HWY_ALIGNMENT.
constexpr size_t kHeaderSpace = HWY_ALIGNMENT;
static_assert(sizeof(AllocationHeader) <= kHeaderSpace, "header must fit before the payload");

AllocationHeader* HeaderOf(const void* aligned_pointer) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(aligned_pointer) - sizeof(AllocationHeader);
  return reinterpret_cast<AllocationHeader*>(addr);
}

void FreeRaw(void* allocated, FreePtr free_ptr, void* opaque_ptr) {
  if (free_ptr == nullptr) {
    std::free(allocated);
  } else {
    free_ptr(opaque_ptr, allocated);
  }
}

std::atomic<int64_t> supported_for_test{0};
std::atomic<int64_t> disabled_targets{0};

// The module was compiled for HWY_STATIC_TARGET (WASM with -msimd128); an engine that
// lacks SIMD128 refuses to instantiate it, so every baseline target is available.
int64_t DetectedTargets() {
  return HWY_ENABLED_BASELINE | HWY_EMU128 | HWY_SCALAR;
}

}  // namespace

void* AllocateAlignedBytes(size_t payload_size, AllocPtr alloc_ptr, void* opaque_ptr) {
  if (payload_size > SIZE_MAX - kHeaderSpace - HWY_ALIGNMENT) return nullptr;
  const size_t total = payload_size + kHeaderSpace + HWY_ALIGNMENT;
  void* allocated = alloc_ptr == nullptr ? std::malloc(total) : alloc_ptr(opaque_ptr, total);
  if (allocated == nullptr) return nullptr;
  uintptr_t aligned = reinterpret_cast<uintptr_t>(allocated) + kHeaderSpace;
  aligned = (aligned + HWY_ALIGNMENT - 1) & ~static_cast<uintptr_t>(HWY_ALIGNMENT - 1);
  void* payload = reinterpret_cast<void*>(aligned);
  AllocationHeader* header = HeaderOf(payload);
  header->allocated = allocated;
  header->payload_size = payload_size;
  return payload;
}

void FreeAlignedBytes(const void* aligned_pointer, FreePtr free_ptr, void* opaque_ptr) {
  if (aligned_pointer == nullptr) return;
  FreeRaw(HeaderOf(aligned_pointer)->allocated, free_ptr, opaque_ptr);
}

void AlignedDeleter::DeleteAlignedArray(void* aligned_pointer, FreePtr free_ptr, void* opaque_ptr,
                                        ArrayDeleter deleter) {
  if (aligned_pointer == nullptr) return;
  const AllocationHeader* header = HeaderOf(aligned_pointer);
  if (deleter != nullptr) deleter(aligned_pointer, header->payload_size);
  FreeRaw(header->allocated, free_ptr, opaque_ptr);
}

void Abort(const char* file, int line, const char* format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  throw ferrite::Error(ferrite::str_cat("Highway check failed at ", file, ":", line, ": ",
                                        static_cast<const char*>(message)));
}

int64_t SupportedTargets() {
  int64_t targets = supported_for_test.load();
  if (targets == 0) targets = DetectedTargets();
  targets &= ~disabled_targets.load();
  // There must always be one target to call (same rule as libhwy).
  return targets == 0 ? HWY_STATIC_TARGET : targets;
}

void DisableTargets(int64_t targets) {
  // Like libhwy: the static target can never be disabled.
  disabled_targets.store(targets & ~static_cast<int64_t>(HWY_STATIC_TARGET));
  GetChosenTarget().Update(SupportedTargets());
}

void SetSupportedTargetsForTest(int64_t targets) {
  supported_for_test.store(targets);
  GetChosenTarget().Update(SupportedTargets());
}

ChosenTarget& GetChosenTarget() {
  static ChosenTarget chosen;
  return chosen;
}

}  // namespace hwy
