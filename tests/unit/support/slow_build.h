// Builds whose tests run far slower than natively: aarch64 (under qemu, about 30 times;
// the scalar reference 100 times) and the sanitizers (ASan about 5 times). Random tests draw
// fewer cases there: the native build runs them all, and the slow builds still walk every
// code path the generators reach (the sanitizers look for memory errors, qemu for ARM).
#pragma once

namespace ferrite::test {

#if defined(__aarch64__) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSlowBuild = true;
#else
constexpr bool kSlowBuild = false;
#endif

// n natively; a third of it (at least 1) in a slow build.
constexpr int cases_for_build(int n) {
  return kSlowBuild ? (n + 2) / 3 : n;
}

}  // namespace ferrite::test
