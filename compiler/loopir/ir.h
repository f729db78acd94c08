// The loop IR's value handles, after Inductor: TensorBox → (View) → StorageBox → Buffer.
//
// A StorageBox holds one lowered value: either an unrealized definition (Pointwise or
// Reduction inner function, inlined into every consumer) or, once realized, a Buffer that
// consumers load from. A TensorBox is what a graph Value maps to: a StorageBox seen
// through a view — an index remap (`reindex`), so transpose, slice, broadcast, reshape and
// friends never copy. When the remap is expressible as strides over the storage's
// contiguous layout, the view also records them, so externs can take it as a strided ref.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/loopir/buffer.h"

namespace ferrite {

struct StorageBox {
  DType dtype = DType::F32;
  std::vector<int64_t> size;
  std::optional<std::vector<Index>> sym;  // symbolic sizes (loopir/shape_env.h), or none
  std::shared_ptr<ComputedDef> def;       // unrealized definition
  Buffer* buffer = nullptr;               // realized storage (inputs, constants, externs, computed)

  bool realized() const { return buffer != nullptr; }
  // Index → value: the inner function before realization, a load after.
  V load(KernelBuilder& b, const std::vector<Index>& index) const;
};

using Reindex = std::function<std::vector<Index>(const std::vector<Index>&)>;

struct StridedView {
  std::vector<int64_t> strides;  // over the storage's contiguous element order
  int64_t offset = 0;
  // Symbolic strides and offset, set with the box's `sym` sizes.
  std::vector<Index> sym_strides;
  Index sym_offset;
};

struct TensorBox {
  DType dtype = DType::F32;
  std::vector<int64_t> size;
  // Symbolic sizes (loopir/shape_env.h: set only by lowerings that keep its promise), or none.
  std::optional<std::vector<Index>> sym;
  // A value computed from sizes (a symbolic compile's Shape and the arithmetic on it,
  // lower/sym_values.cc): its elements, row-major, as formulas over the symbols. Such a
  // box is no data: only the size arithmetic and the ops taking shapes read it.
  std::optional<std::vector<Index>> sym_value;
  std::shared_ptr<StorageBox> storage;
  // Null: identity. Shared, so that copying a box (every loader holds one) costs the same
  // however many views it composes.
  std::shared_ptr<const Reindex> reindex;
  std::optional<StridedView> strided;  // set when the view is plain strides over storage
  int view_depth = 0;                  // views composed in reindex (calls nested that deep)

  int64_t elements() const;
  bool is_identity_view() const { return !reindex; }
  V load(KernelBuilder& b, const std::vector<Index>& index) const;
  Loader loader() const;
};

using TensorBoxPtr = std::shared_ptr<TensorBox>;

// A fresh value with an unrealized pointwise definition.
TensorBoxPtr make_pointwise_box(DType dtype, std::vector<int64_t> size, Loader fn,
                                const std::string& origin);
// A fresh pointwise value holding `t`'s elements (a copy when realized), with its sym sizes.
TensorBoxPtr copy_box(const TensorBoxPtr& t, const std::string& origin);
TensorBoxPtr make_reduction_box(DType dtype, std::shared_ptr<ComputedDef> def);
// Gives a fresh box (an identity view of its storage, as make_pointwise_box makes) its
// symbolic sizes, for a lowering that keeps shape_env.h's promise.
void set_box_sym(const TensorBoxPtr& t, std::vector<Index> sym);
// A value stored in an existing buffer (inputs, constants, extern outputs).
TensorBoxPtr make_buffer_box(Buffer* buf);

// A view of `base`: `reindex` maps the view's index to base's index. Its strides over the
// storage are found by composing the remap with base's strides and simplifying: they exist
// when the result is affine in the view's index (permute, slice, expand, most reshapes).
TensorBoxPtr make_view(const TensorBoxPtr& base, std::vector<int64_t> size, Reindex reindex);

}  // namespace ferrite
