// Shared by the Conv / ConvTranspose extern tests (conv_test.cc, conv_paths_test.cc): dense
// and scattered operands, call geometries and their ExternCalls, naive computations written
// a different way from the reference (Conv through an explicitly padded input, ConvTranspose
// by scattering into the full output and cropping it), and check_geometry, which runs a
// geometry through the reference and every way of running the portable backend.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "compiler/plan/error.h"
#include "runtime/kernels/portable/portable_backend.h"
#include "runtime/kernels/reference/reference_backend.h"
#include "tests/unit/runtime/conv_geometry.h"
#include "tests/unit/runtime/extern_runs.h"
#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace conv_cases {

using Dims = std::vector<int64_t>;

struct Operand {
  std::vector<float> data;
  TensorRef ref;
  ExternBuffer buffer() {
    return ExternBuffer{data.data(), DType::F32, static_cast<int64_t>(data.size())};
  }
};

inline int64_t product(const Dims& d) {
  int64_t p = 1;
  for (int64_t x : d) p *= x;
  return p;
}

inline Dims dense_strides(const Dims& shape) {
  Dims s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

inline Operand dense(const Dims& shape, std::vector<float> values) {
  Operand o;
  o.data = std::move(values);
  o.ref.shape = shape;
  o.ref.strides = dense_strides(shape);
  return o;
}

inline Operand random_dense(const Dims& shape, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(static_cast<size_t>(product(shape)));
  for (float& x : v) x = dist(rng);
  return dense(shape, std::move(v));
}

// Calls f(index) for every index of `dims`, row-major.
inline void for_each_index(const Dims& dims, const std::function<void(const Dims&)>& f) {
  if (product(dims) == 0) return;
  Dims idx(dims.size(), 0);
  while (true) {
    f(idx);
    size_t d = dims.size();
    while (d > 0 && ++idx[d - 1] == dims[d - 1]) idx[--d] = 0;
    if (d == 0) return;
  }
}

inline int64_t flat(const Dims& dims, const Dims& idx) {
  int64_t f = 0;
  for (size_t d = 0; d < dims.size(); ++d) f = f * dims[d] + idx[d];
  return f;
}

// The same tensor stored channels-last (dim 1 innermost), each innermost run padded by one
// element, starting at element 1: no stride is the dense one.
inline Operand scattered(const Operand& o) {
  const Dims& shape = o.ref.shape;
  const size_t r = shape.size();
  Dims perm{0};
  for (size_t d = 2; d < r; ++d) perm.push_back(static_cast<int64_t>(d));
  if (r > 1) perm.push_back(1);
  Dims stored(r);
  for (size_t d = 0; d < r; ++d) stored[d] = shape[static_cast<size_t>(perm[d])];
  stored[r - 1] += 1;
  const Dims st = dense_strides(stored);
  Operand s;
  s.data.assign(static_cast<size_t>(product(stored) + 1), 7.0f);
  s.ref.shape = shape;
  s.ref.strides.assign(r, 0);
  for (size_t d = 0; d < r; ++d) s.ref.strides[static_cast<size_t>(perm[d])] = st[d];
  s.ref.offset = 1;
  for_each_index(shape, [&](const Dims& idx) {
    int64_t off = s.ref.offset;
    for (size_t d = 0; d < r; ++d) off += idx[d] * s.ref.strides[d];
    s.data[static_cast<size_t>(off)] = o.data[static_cast<size_t>(flat(shape, idx))];
  });
  return s;
}

// Reads a view back into a dense array.
inline std::vector<float> gather(const Operand& o) {
  std::vector<float> v;
  for_each_index(o.ref.shape, [&](const Dims& idx) {
    int64_t off = o.ref.offset;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * o.ref.strides[d];
    v.push_back(o.data[static_cast<size_t>(off)]);
  });
  return v;
}

using conv_geometry::conv2d;
using conv_geometry::Geometry;
using conv_geometry::random_geometry;

inline ExternCall make_call(const Geometry& g, const std::vector<Operand*>& ins, const Operand& y) {
  ExternCall call;
  encode_extern(g.attrs(), &call);
  for (Operand* o : ins) call.inputs.push_back(o->ref);
  call.outputs = {y.ref};
  return call;
}

// The value of `v` at `idx` of a dense array of shape `dims`.
template <class T>
inline T& at(std::vector<T>& v, const Dims& dims, const Dims& idx) {
  return v[static_cast<size_t>(flat(dims, idx))];
}
template <class T>
inline const T& at(const std::vector<T>& v, const Dims& dims, const Dims& idx) {
  return v[static_cast<size_t>(flat(dims, idx))];
}

// Conv through an explicitly zero-padded input.
inline std::vector<double> naive_conv(const Geometry& g, const std::vector<float>& x,
                                      const std::vector<float>& w) {
  const size_t k = g.k();
  const int64_t cg = g.c / g.group, mg = g.m / g.group;
  const Dims xd = g.x_dims(), wd = g.w_dims(), yd = g.y_dims();
  Dims padded{g.n, g.c};
  for (size_t d = 0; d < k; ++d) padded.push_back(g.in[d] + g.pad_begin[d] + g.pad_end[d]);
  std::vector<double> xp(static_cast<size_t>(product(padded)), 0.0);
  for_each_index(xd, [&](const Dims& i) {
    Dims p = i;
    for (size_t d = 0; d < k; ++d) p[2 + d] += g.pad_begin[d];
    at(xp, padded, p) = at(x, xd, i);
  });
  std::vector<double> y(static_cast<size_t>(product(yd)), 0.0);
  for_each_index(yd, [&](const Dims& o) {
    for (int64_t c = 0; c < cg; ++c)
      for_each_index(g.kernel, [&](const Dims& j) {
        Dims p{o[0], (o[1] / mg) * cg + c}, wi{o[1], c};
        for (size_t d = 0; d < k; ++d) {
          p.push_back(o[2 + d] * g.stride[d] + j[d] * g.dilation[d]);
          wi.push_back(j[d]);
        }
        at(y, yd, o) += at(xp, padded, p) * at(w, wd, wi);
      });
  });
  return y;
}

// ConvTranspose by scattering every product into the full output, then cropping it.
inline std::vector<double> naive_conv_transpose(const Geometry& g, const std::vector<float>& x,
                                                const std::vector<float>& w) {
  const size_t k = g.k();
  const int64_t cg = g.c / g.group, mg = g.m / g.group;
  const Dims xd = g.x_dims(), wd = g.w_dims(), yd = g.y_dims();
  Dims full{g.n, g.m};
  for (size_t d = 0; d < k; ++d) full.push_back(g.stride[d] * (g.in[d] - 1) + g.span(d));
  std::vector<double> t(static_cast<size_t>(product(full)), 0.0);
  for_each_index(xd, [&](const Dims& i) {
    for (int64_t mm = 0; mm < mg; ++mm)
      for_each_index(g.kernel, [&](const Dims& j) {
        Dims p{i[0], (i[1] / cg) * mg + mm}, wi{i[1], mm};
        for (size_t d = 0; d < k; ++d) {
          p.push_back(i[2 + d] * g.stride[d] + j[d] * g.dilation[d]);
          wi.push_back(j[d]);
        }
        at(t, full, p) += static_cast<double>(at(x, xd, i)) * at(w, wd, wi);
      });
  });
  std::vector<double> y(static_cast<size_t>(product(yd)), 0.0);
  for_each_index(yd, [&](const Dims& o) {
    Dims p = o;
    bool inside = true;
    for (size_t d = 0; d < k; ++d) {
      p[2 + d] += g.pad_begin[d];
      inside = inside && p[2 + d] >= 0 && p[2 + d] < full[2 + d];
    }
    if (inside) at(y, yd, o) = at(t, full, p);
  });
  return y;
}

// Dense operands; double accumulation.
inline std::vector<double> naive(const Geometry& g, const std::vector<float>& x,
                                 const std::vector<float>& w, const std::vector<float>* b) {
  std::vector<double> y = g.transpose ? naive_conv_transpose(g, x, w) : naive_conv(g, x, w);
  const Dims yd = g.y_dims();
  if (b) for_each_index(yd, [&](const Dims& o) { at(y, yd, o) += (*b)[o[1]]; });
  return y;
}

inline double max_abs(const std::vector<float>& v) {
  double m = 1;
  for (float x : v) m = std::max(m, static_cast<double>(std::fabs(x)));
  return m;
}

// Every operand strided: the reference reads the views directly, the portable backend
// copies them into dense scratch and scatters the result back; both must give `want`.
inline void check_strided(const Geometry& g, const Operand& x, const Operand& w, const Operand& b,
                          const std::vector<float>& want) {
  Operand xs = scattered(x), ws = scattered(w), ys = scattered(dense(g.y_dims(), want));
  Operand bs = dense({g.m * 2}, std::vector<float>(static_cast<size_t>(g.m * 2), 5.0f));
  for (int64_t i = 0; i < g.m; ++i) bs.data[static_cast<size_t>(2 * i)] = b.data[i];
  bs.ref = TensorRef{0, {g.m}, {2}, 0};
  std::vector<Operand*> ins{&xs, &ws};
  if (g.bias) ins.push_back(&bs);
  const ExternCall call = make_call(g, ins, ys);
  std::vector<ExternBuffer> bufs;
  for (Operand* o : ins) bufs.push_back(o->buffer());
  ExternBuffer out = ys.buffer();
  const double tol = 1e-4 * max_abs(want);
  for (const char* backend : {"reference", "portable"}) {
    std::fill(ys.data.begin(), ys.data.end(), NAN);
    make_backend(backend)->prepare_extern(call)->run(bufs.data(), &out);
    const std::vector<float> got = gather(ys);
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], tol) << backend << " strided at " << i;
  }
}

// Prepared as a session prepares it (W and B constants: W packed once) on `threads` threads,
// run twice into y.
inline void run_with_weights(const ExternCall& call, const std::vector<ExternBuffer>& in,
                             Operand* y, int threads) {
  std::vector<ExternBuffer> constants(in.size());
  for (size_t i = 1; i < std::min<size_t>(in.size(), 3); ++i) constants[i] = in[i];
  BackendOptions options;
  options.threads = threads;
  auto prepared = make_backend("portable", options)->prepare_extern(call, constants);
  ExternBuffer yb = y->buffer();
  for (int run = 0; run < 2; ++run) {
    std::fill(y->data.begin(), y->data.end(), NAN);
    prepared->run(in.data(), &yb);
  }
}

// The reference on dense operands against `naive` (with `with_naive`); the portable backend
// (one-shot; prepared and run twice; with the weights constant, on one and on two threads,
// bitwise equal) against the reference; with `strided`, both backends on scattered operands
// against the same values.
inline void check_geometry(const Geometry& g, std::mt19937& rng, bool with_naive, bool strided) {
  SCOPED_TRACE(g.text());
  Operand x = random_dense(g.x_dims(), rng), w = random_dense(g.w_dims(), rng);
  Operand b = random_dense({g.m}, rng);
  Operand y_ref = dense(g.y_dims(), std::vector<float>(product(g.y_dims()), NAN));
  std::vector<Operand*> ins{&x, &w};
  if (g.bias) ins.push_back(&b);
  const ExternCall call = make_call(g, ins, y_ref);
  std::vector<ExternBuffer> in_bufs;
  for (Operand* o : ins) in_bufs.push_back(o->buffer());
  ExternBuffer out = y_ref.buffer();
  run_reference_extern(call, in_bufs.data(), &out);
  const double tol = 1e-4 * max_abs(y_ref.data);
  if (with_naive) {
    const std::vector<double> want = naive(g, x.data, w.data, g.bias ? &b.data : nullptr);
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(y_ref.data[i], want[i], tol) << "reference vs naive at " << i;
  }
  auto expect_matches = [&](const std::vector<float>& got, const char* what) {
    ASSERT_EQ(got.size(), y_ref.data.size());
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], y_ref.data[i], tol) << what << " at " << i;
  };
  testing::for_each_simd_target([&] {
    Operand y = y_ref;
    std::fill(y.data.begin(), y.data.end(), NAN);
    ExternBuffer yb = y.buffer();
    auto prepared = make_backend("portable")->prepare_extern(call);
    for (int run = 0; run < 2; ++run) {
      std::fill(y.data.begin(), y.data.end(), NAN);
      prepared->run(in_bufs.data(), &yb);
      expect_matches(y.data, "portable prepared");
    }
    run_with_weights(call, in_bufs, &y, 1);
    expect_matches(y.data, "portable, weights packed");
    const std::vector<float> one = y.data;
    run_with_weights(call, in_bufs, &y, 2);
    ASSERT_EQ(std::memcmp(one.data(), y.data.data(), one.size() * sizeof(float)), 0)
        << "two threads differ from one";
  });
  if (strided) check_strided(g, x, w, b, y_ref.data);
}

inline Geometry conv1d(int64_t c, int64_t m, int64_t group, int64_t in, int64_t kernel,
                       int64_t stride, int64_t pad_begin, int64_t pad_end) {
  Geometry g;
  g.c = c;
  g.m = m;
  g.group = group;
  g.in = {in};
  g.kernel = {kernel};
  g.stride = {stride};
  g.dilation = {1};
  g.pad_begin = {pad_begin};
  g.pad_end = {pad_end};
  return g;
}

}  // namespace conv_cases
}  // namespace ferrite
