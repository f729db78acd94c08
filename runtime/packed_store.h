// Weights that externs packed at prepare time (reordered into a library's blocked or
// Winograd layout), shared by the sessions of one model. The engine compiles a model with
// symbolic dims once per shape set; every such session's externs pack the same weights,
// often into the same layout. With a store, the first session packs them and the others use
// those bytes in place: a new batch size does not pack again (resnet18: oneDNN's Winograd
// weight transform took 480 of the 530 ms a new batch size cost) and the shape sessions
// hold one packed copy between them, not one each.
//
// An entry is found by the packed layout's exact name and the source: the constant's bytes
// (a 128-bit digest of all of them), its element type and count, and the view of it that was
// packed. The layout's name also names the entry's type: oneDNN's ("onednn ...") are
// PackedBytes, the portable GEMM's ("portable ...") a std::vector<PackedOperand>. The store
// holds its entries weakly: a packed form lives as long as some prepared extern holds it, so
// evicting a model's last session that used a layout frees it. Entries are never written
// after they are added: an extern that must pack again (the portable GEMM when the SIMD
// target changed) packs into a copy of its own.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/plan/aligned_bytes.h"
#include "compiler/plan/dtype.h"

namespace ferrite {

// The packed bytes of one weight, 64-byte aligned.
struct PackedBytes {
  AlignedBytes bytes;
  size_t size = 0;
};

// The source of a packed weight: a constant (its data, element type and count) and the view
// of it that was packed (dims, element strides, offset).
struct PackedSource {
  const void* data = nullptr;
  DType dtype = DType::F32;
  int64_t elements = 0;
  std::vector<int64_t> dims, strides;
  int64_t offset = 0;
};

class PackedStore {
 public:
  // The key of `source` packed into `layout`: the layout's name, the source's element type,
  // count and view, and a digest of its bytes. Hashes every byte (XXH3, ~2 ms for resnet18's
  // 47 MB).
  static std::string key(const std::string& layout, const PackedSource& source);

  // The form packed under `key` that some extern still holds; null when none. T is the type
  // the key's layout names.
  template <class T>
  std::shared_ptr<const T> find(const std::string& key) {
    return std::static_pointer_cast<const T>(find_any(key));
  }
  // Adds `packed` (of `bytes` bytes) under `key`, after the caller packed it (an entry
  // already there is replaced).
  void insert(const std::string& key, std::shared_ptr<const void> packed, size_t bytes);
  // How many find() calls found their bytes (tests, reports).
  int64_t hits() const;
  // The live entries (packed bytes some extern holds), and their bytes.
  size_t live_entries() const;
  size_t live_bytes() const;

 private:
  std::shared_ptr<const void> find_any(const std::string& key);

  struct Entry {
    std::weak_ptr<const void> packed;
    size_t bytes = 0;
  };
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
  int64_t hits_ = 0;
};

}  // namespace ferrite
