#include "bindings/engine/engine_value.h"

#include <utility>

#include "compiler/plan/error.h"

namespace ferrite {

EngineValue EngineValue::of(Tensor t) {
  return of(std::make_shared<const Tensor>(std::move(t)));
}

EngineValue EngineValue::of(TensorRef t) {
  EngineValue v;
  v.kind_ = Kind::Tensor;
  v.elem_ = t->dtype();
  v.tensor_ = std::move(t);
  return v;
}

EngineValue EngineValue::borrowed(const Tensor& t) {
  return of(TensorRef(std::shared_ptr<const Tensor>(), &t));  // aliasing: owns nothing
}

EngineValue EngineValue::sequence(DType elem, std::vector<TensorRef> items) {
  EngineValue v;
  v.kind_ = Kind::Sequence;
  v.elem_ = elem;
  v.items_ = std::move(items);
  return v;
}

const EngineValue::TensorRef& EngineValue::tensor_ref(const std::string& what) const {
  if (kind_ != Kind::Tensor) fail(what, " is ", type_text(), ", not a tensor");
  return tensor_;
}

const Tensor& EngineValue::tensor(const std::string& what) const {
  return *tensor_ref(what);
}

const std::vector<EngineValue::TensorRef>& EngineValue::items(const std::string& what) const {
  if (kind_ != Kind::Sequence) fail(what, " is ", type_text(), ", not a sequence");
  return items_;
}

std::string tensor_type_text(const Tensor& t) {
  std::string s = str_cat(dtype_name(t.dtype()), '[');
  for (size_t d = 0; d < t.shape().size(); ++d) s += str_cat(d ? "," : "", t.shape()[d]);
  return s + ']';
}

std::string EngineValue::type_text() const {
  switch (kind_) {
    case Kind::None:
      return "no value";
    case Kind::Tensor:
      return tensor_type_text(*tensor_);
    case Kind::Sequence:
      return str_cat("sequence<", dtype_name(elem_), "> of ", items_.size());
  }
  return "?";
}

}  // namespace ferrite
