#include "compiler/lower/ml_common.h"

#include <cstring>
#include <memory>

namespace ferrite {
namespace ml {

TensorBoxPtr table(GraphLowering& gl, const std::vector<double>& v, bool f64,
                   const std::string& n) {
  auto d = std::make_shared<TensorData>();
  d->dtype = f64 ? DType::F64 : DType::I64;
  d->shape = {static_cast<int64_t>(v.size())};
  d->bytes.assign(v.size() * 8, 0);
  uint8_t* out = d->bytes.mutable_data();
  for (size_t i = 0; i < v.size(); ++i) {
    if (f64) {
      std::memcpy(out + 8 * i, &v[i], 8);
    } else {
      const int64_t x = static_cast<int64_t>(v[i]);
      std::memcpy(out + 8 * i, &x, 8);
    }
  }
  return constant_box(gl, d, n);
}

std::vector<double> doubles(const std::vector<int64_t>& v) {
  return std::vector<double>(v.begin(), v.end());
}

std::vector<double> float_values(const LowerCtx& c, const std::string& key) {
  if (!c.node.has_attr(key)) return {};
  const Attribute& a = c.node.attrs.at(key);
  if (a.kind == AttrKind::Floats) return a.floats;
  const auto t = c.node.attr_tensor(key);
  std::vector<double> v(static_cast<size_t>(t->elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = t->float_at(static_cast<int64_t>(i));
  return v;
}

TensorBoxPtr post_transformed(const LowerCtx& c, TensorBoxPtr z, const std::string& post) {
  if (post == "SOFTMAX") return softmax_over(c, z, 1, false);
  if (post == "LOGISTIC") {
    return make_pointwise(c, {z}, DType::F64, [](KernelBuilder& b, const std::vector<V>& v) {
      return b.unary(Op::Sigmoid, v[0]);
    });
  }
  if (post != "NONE") c.unsupported("post_transform ", post, " (NONE, LOGISTIC or SOFTMAX)");
  return z;
}

TensorBoxPtr cast_to(const LowerCtx& c, const TensorBoxPtr& z, DType out) {
  const ScalarType st = compute_type(out);
  return make_pointwise(
      c, {z}, out, [st](KernelBuilder& b, const std::vector<V>& v) { return b.cast(v[0], st); });
}

const TensorBoxPtr& samples(const LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (x->size.size() != 2 ||
      (!dtype_is_float(x->dtype) && x->dtype != DType::I64 && x->dtype != DType::I32))
    c.unsupported("X of ", TensorType{x->dtype, x->size, {}, true}.to_string(),
                  " (numbers [samples, features] only)");
  return x;
}

TensorBoxPtr first_best_label(LowerCtx& c, const TensorBoxPtr& score, const TensorBoxPtr& labels) {
  const int64_t k = score->size[1];
  auto best = std::make_shared<ComputedDef>();
  best->is_reduction = true;
  best->ranges = {score->size[0]};
  best->reduction_ranges = {k};
  best->reduce = ReduceKind::ArgMax;
  best->rfn = [score](KernelBuilder& b, const std::vector<Index>& o, const std::vector<Index>& r) {
    return score->load(b, {o[0], r[0]});
  };
  best->origin = c.origin();
  const TensorBoxPtr at = make_reduction_box(DType::I64, best);
  c.gl.realize(at);
  return make_pointwise_box(
      DType::I64, {score->size[0]},
      [at, labels, k](KernelBuilder& b, const std::vector<Index>& i) {
        const V j = b.check_index(at->load(b, i), k, "a class index");
        return labels->load(b, {ix_value(j.id)});
      },
      c.origin());
}

}  // namespace ml
}  // namespace ferrite
