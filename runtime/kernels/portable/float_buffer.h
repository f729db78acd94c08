// Memory of the portable GEMM and convolutions: FloatBuffer, a 64-byte aligned float array
// that only grows (packed weights, scratch of one-shot calls), and Scratch, what a prepared
// extern runs in — the session's arena shared by every extern (PreparedExtern::bind_scratch)
// when it is bound and large enough, else a FloatBuffer of its own.
#pragma once

#include <cstddef>

#include "runtime/tensor.h"

namespace ferrite {

class FloatBuffer {
 public:
  // At least n floats (zeroed when it grows; kept otherwise).
  float* reserve(size_t n) {
    if (n > capacity_) {
      bytes_ = aligned_alloc_bytes(n * sizeof(float));
      capacity_ = n;
    }
    return data();
  }
  float* data() const { return reinterpret_cast<float*>(bytes_.get()); }
  size_t capacity() const { return capacity_; }

 private:
  AlignedBytes bytes_;
  size_t capacity_ = 0;
};

// Offsets of the pieces of one scratch area, each 64-byte aligned.
class ScratchLayout {
 public:
  // Reserves `floats` and returns their offset (in floats).
  size_t add(size_t floats) {
    const size_t at = total_;
    total_ += (floats + 15) / 16 * 16;
    return at;
  }
  size_t floats() const { return total_; }

 private:
  size_t total_ = 0;
};

class Scratch {
 public:
  void bind(void* arena, size_t bytes) {
    arena_ = static_cast<float*>(arena);
    arena_floats_ = bytes / sizeof(float);
  }
  // `floats` floats, 64-byte aligned: the arena if they fit, else owned memory.
  float* get(size_t floats) {
    if (arena_ && floats <= arena_floats_) return arena_;
    return own_.reserve(floats);
  }

 private:
  float* arena_ = nullptr;
  size_t arena_floats_ = 0;
  FloatBuffer own_;
};

}  // namespace ferrite
