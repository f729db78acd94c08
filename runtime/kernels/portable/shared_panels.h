// The portable GEMM's packed weights in a PackedStore (packed_store.h), so that the sessions
// of one model pack each constant weight once: the key of a constant view packed into a
// layout, and the move of panels packed here into the store. Entries are never written
// after they are shared: an extern that packs again (its SIMD target changed) packs into its
// own operands.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/plan/plan.h"
#include "runtime/backend.h"
#include "runtime/kernels/portable/gemm_f32.h"
#include "runtime/packed_store.h"

namespace ferrite {

using SharedPanels = std::shared_ptr<const std::vector<PackedOperand>>;

// The store key of the view `ref` of constant `buffer` packed as `layout`
// (gemm_f32_packed_layout).
std::string panels_key(const std::string& layout, const ExternBuffer& buffer, const TensorRef& ref);

// Moves the operands packed in `*own` (each `floats_each` floats) into the store under `key`
// and returns them; `*own` is left as as many unpacked operands, for a later repack.
SharedPanels share_panels(PackedStore* store, const std::string& key,
                          std::vector<PackedOperand>* own, size_t floats_each);

}  // namespace ferrite
