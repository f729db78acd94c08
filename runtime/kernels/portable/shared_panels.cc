#include "runtime/kernels/portable/shared_panels.h"

namespace ferrite {

std::string panels_key(const std::string& layout, const ExternBuffer& buffer,
                       const TensorRef& ref) {
  return PackedStore::key(layout, PackedSource{buffer.data, buffer.dtype, buffer.elements,
                                               ref.shape, ref.strides, ref.offset});
}

SharedPanels share_panels(PackedStore* store, const std::string& key,
                          std::vector<PackedOperand>* own, size_t floats_each) {
  const size_t count = own->size();
  SharedPanels shared = std::make_shared<const std::vector<PackedOperand>>(std::move(*own));
  own->clear();
  own->resize(count);
  store->insert(key, shared, count * floats_each * sizeof(float));
  return shared;
}

}  // namespace ferrite
