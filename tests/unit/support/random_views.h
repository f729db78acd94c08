// Random tensor views for the random-kernel tests (loop normalisation, backend differential
// tests): how a kernel's loop point finds its element in a dense buffer after a chain of view
// ops (permute, slice, reshape, broadcast), as the lowering builds index expressions. Also a
// small random source whose draws do not depend on the standard library (std::uniform_*_
// distribution and std::shuffle differ between libstdc++ and libc++), so that a seed names
// the same kernel natively and in the wasm build.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "compiler/loopir/simplify.h"
#include "compiler/plan/index_expr.h"

namespace ferrite {
namespace test_support {

class Rng {
 public:
  explicit Rng(uint32_t seed) : gen_(seed) {}
  // Uniform in [lo, hi] (hi - lo is small: the modulo bias is negligible).
  int pick(int lo, int hi) {
    return lo + static_cast<int>(gen_() % static_cast<uint32_t>(hi - lo + 1));
  }
  // Uniform in [0, 1).
  double unit() { return static_cast<double>(gen_()) * 0x1p-32; }
  bool chance(double p) { return unit() < p; }
  template <class T>
  const T& one_of(const std::vector<T>& v) {
    return v[static_cast<size_t>(pick(0, static_cast<int>(v.size()) - 1))];
  }
  template <class T>
  void shuffle(std::vector<T>* v) {
    for (int i = static_cast<int>(v->size()) - 1; i > 0; --i) std::swap((*v)[i], (*v)[pick(0, i)]);
  }

 private:
  std::mt19937 gen_;
};

// A view of a tensor as the kernel sees it: one index expression per dim of `shape`.
struct View {
  std::vector<int64_t> shape;
  std::vector<Index> expr;
};

inline int64_t elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

// The identity view over loop dims [0, n) of `ranges`.
inline View dims_view(const std::vector<int64_t>& ranges, int n) {
  View v;
  for (int d = 0; d < n; ++d) {
    v.shape.push_back(ranges[d]);
    v.expr.push_back(ix_var(d));
  }
  return v;
}

// The element of a view's point in a dense row-major tensor at `offset`.
inline Index dense_index(const View& v, int64_t offset) {
  Index e = ix_const(offset);
  int64_t stride = 1;
  for (int d = static_cast<int>(v.shape.size()) - 1; d >= 0; --d) {
    e = ix_add(e, ix_mul(v.expr[d], stride));
    stride *= v.shape[d];
  }
  return e;
}

// A random shape with the same number of elements (and some size-1 dims).
inline std::vector<int64_t> reshape_target(Rng& rng, int64_t n) {
  std::vector<int64_t> factors;
  for (int64_t p = 2; n > 1; ++p)
    while (n % p == 0) {
      factors.push_back(p);
      n /= p;
    }
  rng.shuffle(&factors);
  std::vector<int64_t> shape;
  for (int64_t f : factors) {
    if (shape.empty() || rng.chance(0.5)) shape.push_back(1);
    shape.back() *= f;
    if (rng.chance(0.2)) shape.push_back(1);
  }
  if (shape.empty()) shape.push_back(1);
  return shape;
}

enum ViewStep { kPermute = 0, kSlice = 1, kReshape = 2, kBroadcast = 3 };

// One step from the view to the tensor it is a view of (of kind `kind`, or at random; a
// broadcast only when allowed: it makes several points share an element).
inline void view_step(Rng& rng, View* v, bool allow_broadcast, int kind = -1) {
  const int n = static_cast<int>(v->shape.size());
  if (kind < 0) kind = rng.pick(0, allow_broadcast ? 3 : 2);
  if (n == 0) return;
  if (kind == kPermute) {  // the tensor is the view permuted
    std::vector<int> p(n);
    for (int i = 0; i < n; ++i) p[i] = i;
    rng.shuffle(&p);
    View w;
    for (int i : p) {
      w.shape.push_back(v->shape[i]);
      w.expr.push_back(v->expr[i]);
    }
    *v = w;
  } else if (kind == kSlice) {  // the view is a slice of it
    const int d = rng.pick(0, n - 1), start = rng.pick(0, 2), stride = rng.pick(1, 2);
    v->expr[d] = ix_add(ix_mul(v->expr[d], stride), ix_const(start));
    v->shape[d] = start + (v->shape[d] - 1) * stride + 1 + rng.pick(0, 1);
  } else if (kind == kReshape) {  // the view is a reshape of it
    std::vector<int64_t> shape = reshape_target(rng, elements(v->shape));
    Index flat = ix_const(0);
    int64_t stride = 1;
    for (int d = n - 1; d >= 0; --d) {
      flat = ix_add(flat, ix_mul(v->expr[d], stride));
      stride *= v->shape[d];
    }
    View w;
    w.shape = shape;
    w.expr.resize(shape.size());
    stride = 1;
    for (int j = static_cast<int>(shape.size()) - 1; j >= 0; --j) {
      w.expr[j] = ix_mod(ix_floordiv(flat, stride), shape[j]);
      stride *= shape[j];
    }
    *v = w;
  } else {  // the view broadcasts a size-1 dim of it
    const int d = rng.pick(0, n - 1);
    v->expr[d] = ix_const(0);
    v->shape[d] = 1;
  }
}

// The element index of a view after a few random steps, into a dense buffer with an
// offset; *size gets the buffer's elements.
inline Index random_view_index(Rng& rng, View v, bool allow_broadcast, int64_t* size) {
  for (int s = rng.pick(0, 3); s > 0; --s) view_step(rng, &v, allow_broadcast);
  const bool offset_buffer = rng.chance(0.5);  // two statements: a fixed draw order
  const int64_t offset = offset_buffer ? rng.pick(1, 5) : 0;
  *size = offset + elements(v.shape) + rng.pick(0, 2);
  return dense_index(v, offset);
}

}  // namespace test_support
}  // namespace ferrite
