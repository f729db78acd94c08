#include "bindings/engine/value_sized_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>

#include "compiler/plan/error.h"
#include "compiler/plan/scalar_ops.h"

namespace ferrite {
namespace {

struct OpCtx {
  const Node& node;
  const std::string& what;
  size_t num_outputs;
  const std::vector<const Tensor*>& in;

  template <class... Args>
  [[noreturn]] void error(const Args&... args) const {
    fail(what, ": ", args...);
  }
  const Tensor& input(size_t i) const {
    if (i >= in.size() || !in[i]) error("missing required input ", i);
    return *in[i];
  }
  const Tensor* optional(size_t i) const { return i < in.size() ? in[i] : nullptr; }
  void rank(size_t i, size_t want) const {
    if (input(i).shape().size() != want)
      error("input ", i, " must have rank ", want, ", got ", input(i).shape().size());
  }
  int axis(int64_t a, size_t rank) const {
    const int64_t r = static_cast<int64_t>(rank);
    if (a < -r || a >= r) error("axis ", a, " out of range for rank ", r);
    return static_cast<int>(a < 0 ? a + r : a);
  }
};

// Element i as a number that orders and compares as the dtype does.
double number(const Tensor& t, int64_t i) {
  const Scalar s = load_element(t.dtype(), t.data(), i);
  switch (compute_type(t.dtype())) {
    case ScalarType::F32:
      return s.f32;
    case ScalarType::F64:
      return s.f64;
    case ScalarType::Bool:
      return s.b ? 1 : 0;
    default:
      return static_cast<double>(s.i64);
  }
}

// Element i of an integer tensor, exactly (a double would round INT64_MAX, which exporters
// write for "no limit", past the int64 range).
int64_t integer(const OpCtx& c, const Tensor& t, int64_t i, const char* what) {
  if (dtype_is_float(t.dtype())) c.error(what, " must be an integer, got ", dtype_name(t.dtype()));
  return load_element(t.dtype(), t.data(), i).i64;
}

bool nonzero(const Tensor& t, int64_t i) {
  const double v = number(t, i);
  return v != 0 || std::isnan(v);
}

Tensor i64_tensor(std::vector<int64_t> shape, const std::vector<int64_t>& v) {
  return Tensor(DType::I64, std::move(shape), v.data());
}

// Row-major strides, in elements.
std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

std::vector<Tensor> non_zero(const OpCtx& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> shape = x.shape();
  if (shape.empty()) shape = {1};  // a scalar as numpy.nonzero sees it
  const std::vector<int64_t> strides = strides_of(shape);
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < x.elements(); ++i)
    if (nonzero(x, i)) hits.push_back(i);
  const int64_t n = static_cast<int64_t>(hits.size());
  std::vector<int64_t> out(shape.size() * hits.size());
  for (size_t d = 0; d < shape.size(); ++d)
    for (int64_t k = 0; k < n; ++k)
      out[d * hits.size() + static_cast<size_t>(k)] =
          hits[static_cast<size_t>(k)] / strides[d] % shape[d];
  std::vector<Tensor> r;
  r.push_back(i64_tensor({static_cast<int64_t>(shape.size()), n}, out));
  return r;
}

// Copies the slices `picked` (indices along `axis`) of `x` into a new tensor.
Tensor take_slices(const Tensor& x, int axis, const std::vector<int64_t>& picked) {
  std::vector<int64_t> shape = x.shape();
  const int64_t dim = shape[static_cast<size_t>(axis)];
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  shape[static_cast<size_t>(axis)] = static_cast<int64_t>(picked.size());
  Tensor y(x.dtype(), shape);
  const size_t row = static_cast<size_t>(inner) * dtype_size(x.dtype());
  uint8_t* dst = y.data();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t p : picked) {
      if (row) std::memcpy(dst, x.data() + (static_cast<size_t>(o * dim + p)) * row, row);
      dst += row;
    }
  return y;
}

// Compress's and Unique's rule: along the node's `axis`, or over `x` flattened to 1-D
// (into `*flat`) when it has none. Sets `*data` to what to work on; returns the axis.
int axis_or_flat(const OpCtx& c, const Tensor& x, Tensor* flat, const Tensor** data) {
  if (c.node.has_attr("axis")) return c.axis(c.node.attr_int("axis", 0), x.shape().size());
  *flat = Tensor(x.dtype(), {x.elements()}, x.data());
  *data = flat;
  return 0;
}

std::vector<Tensor> compress(const OpCtx& c) {
  const Tensor& x = c.input(0);
  const Tensor& cond = c.input(1);
  c.rank(1, 1);
  Tensor flat;
  const Tensor* data = &x;
  const int axis = axis_or_flat(c, x, &flat, &data);
  const int64_t dim = data->shape()[static_cast<size_t>(axis)];
  std::vector<int64_t> picked;
  for (int64_t i = 0; i < cond.elements(); ++i) {
    if (!nonzero(cond, i)) continue;
    if (i >= dim) c.error("condition selects index ", i, " past the ", dim, " the axis has");
    picked.push_back(i);
  }
  std::vector<Tensor> r;
  r.push_back(take_slices(*data, axis, picked));
  return r;
}

// Lexicographic, with NaN after every number and equal to NaN (numpy.unique's order; its
// NaNs collapse into one), so a strict weak order for any values.
struct SliceLess {
  static bool less(double a, double b) {
    if (std::isnan(a)) return false;
    return std::isnan(b) || a < b;
  }
  bool operator()(const std::vector<double>& a, const std::vector<double>& b) const {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), less);
  }
};

std::vector<Tensor> unique(const OpCtx& c) {
  const Tensor& x = c.input(0);
  Tensor flat;
  const Tensor* data = &x;
  const int axis = axis_or_flat(c, x, &flat, &data);
  const bool sorted = c.node.attr_int("sorted", 1) != 0;
  const std::vector<int64_t>& shape = data->shape();
  const int64_t dim = shape[static_cast<size_t>(axis)];
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  // Slice s as numbers, outer-major (the order numpy.unique compares them in).
  std::vector<std::vector<double>> slices(static_cast<size_t>(dim));
  for (int64_t s = 0; s < dim; ++s)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < inner; ++k)
        slices[static_cast<size_t>(s)].push_back(number(*data, (o * dim + s) * inner + k));
  // The first occurrence of each distinct slice, in order of appearance.
  std::map<std::vector<double>, size_t, SliceLess> seen;
  std::vector<int64_t> first, inverse(static_cast<size_t>(dim)), counts;
  for (int64_t s = 0; s < dim; ++s) {
    auto it = seen.emplace(slices[static_cast<size_t>(s)], first.size()).first;
    if (it->second == first.size()) {
      first.push_back(s);
      counts.push_back(0);
    }
    inverse[static_cast<size_t>(s)] = static_cast<int64_t>(it->second);
    ++counts[it->second];
  }
  std::vector<size_t> order(first.size());
  std::iota(order.begin(), order.end(), 0);
  if (sorted)
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return SliceLess()(slices[static_cast<size_t>(first[a])],
                         slices[static_cast<size_t>(first[b])]);
    });
  std::vector<int64_t> rank(order.size()), picked, sorted_counts;
  for (size_t r = 0; r < order.size(); ++r) {
    rank[order[r]] = static_cast<int64_t>(r);
    picked.push_back(first[order[r]]);
    sorted_counts.push_back(counts[order[r]]);
  }
  for (int64_t& v : inverse) v = rank[static_cast<size_t>(v)];
  const int64_t n = static_cast<int64_t>(picked.size());
  std::vector<Tensor> r;
  r.push_back(take_slices(*data, axis, picked));
  r.push_back(i64_tensor({n}, picked));
  r.push_back(i64_tensor({dim}, inverse));
  r.push_back(i64_tensor({n}, sorted_counts));
  while (r.size() > c.num_outputs) r.pop_back();
  return r;
}

float scalar_float(const OpCtx& c, size_t i, float dflt) {
  const Tensor* t = c.optional(i);
  if (!t) return dflt;
  if (t->elements() != 1) c.error("input ", i, " must hold one value, got ", t->elements());
  return static_cast<float>(number(*t, 0));
}

// Whether boxes a and b (corners, either order) overlap by more than `threshold` (IoU).
bool suppresses(const float* a, const float* b, float threshold) {
  const float ay0 = std::min(a[0], a[2]), ay1 = std::max(a[0], a[2]);
  const float ax0 = std::min(a[1], a[3]), ax1 = std::max(a[1], a[3]);
  const float by0 = std::min(b[0], b[2]), by1 = std::max(b[0], b[2]);
  const float bx0 = std::min(b[1], b[3]), bx1 = std::max(b[1], b[3]);
  const float ih = std::min(ay1, by1) - std::max(ay0, by0);
  const float iw = std::min(ax1, bx1) - std::max(ax0, bx0);
  if (ih <= 0 || iw <= 0) return false;
  const float inter = ih * iw;
  const float area_a = (ay1 - ay0) * (ax1 - ax0), area_b = (by1 - by0) * (bx1 - bx0);
  const float uni = area_a + area_b - inter;
  if (area_a <= 0 || area_b <= 0 || uni <= 0) return false;
  return inter / uni > threshold;
}

std::vector<Tensor> non_max_suppression(const OpCtx& c) {
  const Tensor& boxes = c.input(0);
  const Tensor& scores = c.input(1);
  c.rank(0, 3);
  c.rank(1, 3);
  if (boxes.dtype() != DType::F32 || scores.dtype() != DType::F32)
    c.error("boxes and scores must be float32");
  const int64_t batches = boxes.shape()[0], n = boxes.shape()[1];
  if (boxes.shape()[2] != 4)
    c.error("boxes must be [batch, boxes, 4], got dim 2 = ", boxes.shape()[2]);
  if (scores.shape()[0] != batches || scores.shape()[2] != n)
    c.error("scores must be [", batches, ", classes, ", n, "]");
  const int64_t classes = scores.shape()[1];
  int64_t max_out = 0;
  if (const Tensor* m = c.optional(2)) {
    if (m->elements() != 1) c.error("max_output_boxes_per_class must hold one value");
    max_out = integer(c, *m, 0, "max_output_boxes_per_class");
  }
  const float iou = scalar_float(c, 3, 0.f);
  const bool has_floor = c.optional(4) != nullptr;
  const float floor = scalar_float(c, 4, 0.f);
  const bool center = c.node.attr_int("center_point_box", 0) != 0;
  // Corners [y0, x0, y1, x1] of every box.
  std::vector<float> corners(static_cast<size_t>(batches * n * 4));
  const float* b = boxes.as<float>();
  for (int64_t i = 0; i < batches * n; ++i) {
    const float* p = b + 4 * i;
    float* q = corners.data() + 4 * i;
    if (center) {  // [x_center, y_center, width, height]
      q[0] = p[1] - p[3] / 2;
      q[1] = p[0] - p[2] / 2;
      q[2] = p[1] + p[3] / 2;
      q[3] = p[0] + p[2] / 2;
    } else {
      std::memcpy(q, p, 4 * sizeof(float));
    }
  }
  std::vector<int64_t> out;
  const float* s = scores.as<float>();
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t ci = 0; ci < classes; ++ci) {
      const float* cls = s + (bi * classes + ci) * n;
      std::vector<int64_t> cand;
      for (int64_t i = 0; i < n; ++i)
        if (!has_floor || cls[i] > floor) cand.push_back(i);
      std::stable_sort(cand.begin(), cand.end(),
                       [&](int64_t x, int64_t y) { return cls[x] > cls[y]; });
      std::vector<int64_t> kept;
      for (int64_t i : cand) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        const float* bx = corners.data() + 4 * (bi * n + i);
        bool drop = false;
        for (int64_t k : kept)
          drop = drop || suppresses(corners.data() + 4 * (bi * n + k), bx, iou);
        if (drop) continue;
        kept.push_back(i);
        out.insert(out.end(), {bi, ci, i});
      }
    }
  std::vector<Tensor> r;
  r.push_back(i64_tensor({static_cast<int64_t>(out.size() / 3), 3}, out));
  return r;
}

}  // namespace

std::vector<Tensor> run_value_sized_op(const Node& node, const std::string& what,
                                       size_t num_outputs,
                                       const std::vector<const Tensor*>& inputs) {
  const OpCtx c{node, what, num_outputs, inputs};
  if (node.op_type == "NonZero") return non_zero(c);
  if (node.op_type == "Compress") return compress(c);
  if (node.op_type == "Unique") return unique(c);
  if (node.op_type == "NonMaxSuppression") return non_max_suppression(c);
  c.error("not an op the engine runs between compiled parts");
}

}  // namespace ferrite
