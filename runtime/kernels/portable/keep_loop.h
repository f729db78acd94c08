// FERRITE_KEEP_LOOP(): placed in the body of a short copy or fill loop, keeps the compiler
// from turning the loop into a call to memcpy / memset (LLVM's loop idiom pass does that
// even for vector loops). In wasm those are calls into emscripten's libc, a word at a time:
// copying one 56-float output row cost several times what the loop of v128 moves does, and
// the copies of the depthwise convolution alone were 9% of mobilenet_v2.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define FERRITE_KEEP_LOOP() __asm__ volatile("" ::: "memory")
#else
#define FERRITE_KEEP_LOOP() ((void)0)
#endif
