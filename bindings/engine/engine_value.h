// What the engine passes between the parts of a model and gives back: a tensor, a sequence
// of tensors, or no value (an optional without one). Sequences and optionals are ONNX's
// non-tensor types (graph.h's Container); no plan holds them, so the ops on them run in the
// engine (sequence_ops.h). An optional that holds a value is that value. Tensors are shared,
// never copied, between values: a sequence built from another shares its tensors.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/tensor.h"

namespace ferrite {

class EngineValue {
 public:
  enum class Kind : uint8_t { None, Tensor, Sequence };
  using TensorRef = std::shared_ptr<const Tensor>;

  EngineValue() = default;  // no value
  static EngineValue of(Tensor t);
  static EngineValue of(TensorRef t);
  // Refers to `t`, which must outlive the value and every value made from it.
  static EngineValue borrowed(const Tensor& t);
  // A sequence of `items`, whose element type is `elem` (its tensors' dtype; Undefined when
  // empty and not declared).
  static EngineValue sequence(DType elem, std::vector<TensorRef> items);

  Kind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == Kind::Tensor; }
  bool is_sequence() const { return kind_ == Kind::Sequence; }
  bool is_none() const { return kind_ == Kind::None; }
  // The tensor; fails with "<what> is <type_text()>, not a tensor" otherwise.
  const Tensor& tensor(const std::string& what) const;
  const TensorRef& tensor_ref(const std::string& what) const;
  // The items; fails with "<what> is <type_text()>, not a sequence" otherwise.
  const std::vector<TensorRef>& items(const std::string& what) const;
  DType elem_dtype() const { return elem_; }
  // "float32[2,3]", "sequence<float32> of 3", "no value".
  std::string type_text() const;

 private:
  Kind kind_ = Kind::None;
  TensorRef tensor_;
  std::vector<TensorRef> items_;
  DType elem_ = DType::Undefined;
};

// Values by name: the model's inputs and what its parts computed so far.
using NamedValues = std::unordered_map<std::string, const EngineValue*>;

// "float32[2,3]".
std::string tensor_type_text(const Tensor& t);

}  // namespace ferrite
