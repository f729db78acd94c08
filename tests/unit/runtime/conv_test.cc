// The Conv and ConvTranspose externs: the reference against values worked out by hand and
// against a naive computation written here a different way (Conv through an explicitly
// padded input, ConvTranspose by scattering into the full output and cropping it); the
// portable backend against the reference over random shapes (1-D to 3-D, groups, depthwise,
// strides, dilations, asymmetric and negative pads, bias, batch > 1), its fast paths and
// chunked im2col / col2im, strided operands, on every SIMD target; and the operand checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "compiler/plan/error.h"
#include "runtime/kernels/portable/portable_backend.h"
#include "runtime/kernels/reference/reference_backend.h"
#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace {

using Dims = std::vector<int64_t>;

struct Operand {
  std::vector<float> data;
  TensorRef ref;
  ExternBuffer buffer() {
    return ExternBuffer{data.data(), DType::F32, static_cast<int64_t>(data.size())};
  }
};

int64_t product(const Dims& d) {
  int64_t p = 1;
  for (int64_t x : d) p *= x;
  return p;
}

Dims dense_strides(const Dims& shape) {
  Dims s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

Operand dense(const Dims& shape, std::vector<float> values) {
  Operand o;
  o.data = std::move(values);
  o.ref.shape = shape;
  o.ref.strides = dense_strides(shape);
  return o;
}

Operand random_dense(const Dims& shape, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(static_cast<size_t>(product(shape)));
  for (float& x : v) x = dist(rng);
  return dense(shape, std::move(v));
}

// Calls f(index) for every index of `dims`, row-major.
void for_each_index(const Dims& dims, const std::function<void(const Dims&)>& f) {
  if (product(dims) == 0) return;
  Dims idx(dims.size(), 0);
  while (true) {
    f(idx);
    size_t d = dims.size();
    while (d > 0 && ++idx[d - 1] == dims[d - 1]) idx[--d] = 0;
    if (d == 0) return;
  }
}

int64_t flat(const Dims& dims, const Dims& idx) {
  int64_t f = 0;
  for (size_t d = 0; d < dims.size(); ++d) f = f * dims[d] + idx[d];
  return f;
}

// The same tensor stored channels-last (dim 1 innermost), each innermost run padded by one
// element, starting at element 1: no stride is the dense one.
Operand scattered(const Operand& o) {
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
std::vector<float> gather(const Operand& o) {
  std::vector<float> v;
  for_each_index(o.ref.shape, [&](const Dims& idx) {
    int64_t off = o.ref.offset;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * o.ref.strides[d];
    v.push_back(o.data[static_cast<size_t>(off)]);
  });
  return v;
}

struct Geometry {
  bool transpose = false;
  int64_t n = 1, c = 1, m = 1, group = 1;
  Dims in, kernel, stride, dilation, pad_begin, pad_end;
  bool bias = false;

  size_t k() const { return in.size(); }
  int64_t span(size_t d) const { return (kernel[d] - 1) * dilation[d] + 1; }
  int64_t out(size_t d) const {
    if (transpose) return stride[d] * (in[d] - 1) + span(d) - pad_begin[d] - pad_end[d];
    const int64_t room = in[d] + pad_begin[d] + pad_end[d] - span(d);
    return room >= 0 ? room / stride[d] + 1 : 0;
  }
  Dims x_dims() const { return cat({n, c}, in); }
  Dims w_dims() const { return cat(transpose ? Dims{c, m / group} : Dims{m, c / group}, kernel); }
  Dims y_dims() const {
    Dims o;
    for (size_t d = 0; d < k(); ++d) o.push_back(out(d));
    return cat({n, m}, o);
  }
  std::string text() const {
    std::string s = std::string(transpose ? "ConvTranspose" : "Conv") + " n" + std::to_string(n) +
                    " c" + std::to_string(c) + " m" + std::to_string(m) + " g" +
                    std::to_string(group) + (bias ? " bias" : "");
    for (size_t d = 0; d < k(); ++d)
      s += " | in " + std::to_string(in[d]) + " k" + std::to_string(kernel[d]) + " s" +
           std::to_string(stride[d]) + " d" + std::to_string(dilation[d]) + " p" +
           std::to_string(pad_begin[d]) + "," + std::to_string(pad_end[d]);
    return s;
  }
  static Dims cat(Dims a, const Dims& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }
};

ExternCall make_call(const Geometry& g, const std::vector<Operand*>& ins, const Operand& y) {
  ExternCall call;
  call.op = g.transpose ? "ConvTranspose" : "Conv";
  if (g.group != 1) call.ints["group"] = g.group;
  for (size_t d = 0; d < g.k(); ++d) {
    const std::string s = std::to_string(d);
    call.ints["stride" + s] = g.stride[d];
    call.ints["dilation" + s] = g.dilation[d];
    call.ints["pad_begin" + s] = g.pad_begin[d];
    call.ints["pad_end" + s] = g.pad_end[d];
  }
  for (Operand* o : ins) call.inputs.push_back(o->ref);
  call.outputs = {y.ref};
  return call;
}

// The value of `v` at `idx` of a dense array of shape `dims`.
template <class T>
T& at(std::vector<T>& v, const Dims& dims, const Dims& idx) {
  return v[static_cast<size_t>(flat(dims, idx))];
}
template <class T>
const T& at(const std::vector<T>& v, const Dims& dims, const Dims& idx) {
  return v[static_cast<size_t>(flat(dims, idx))];
}

// Conv through an explicitly zero-padded input.
std::vector<double> naive_conv(const Geometry& g, const std::vector<float>& x,
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
std::vector<double> naive_conv_transpose(const Geometry& g, const std::vector<float>& x,
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
std::vector<double> naive(const Geometry& g, const std::vector<float>& x,
                          const std::vector<float>& w, const std::vector<float>* b) {
  std::vector<double> y = g.transpose ? naive_conv_transpose(g, x, w) : naive_conv(g, x, w);
  const Dims yd = g.y_dims();
  if (b) for_each_index(yd, [&](const Dims& o) { at(y, yd, o) += (*b)[o[1]]; });
  return y;
}

double max_abs(const std::vector<float>& v) {
  double m = 1;
  for (float x : v) m = std::max(m, static_cast<double>(std::fabs(x)));
  return m;
}

// Every operand strided: the reference reads the views directly, the portable backend
// copies them into dense scratch and scatters the result back; both must give `want`.
void check_strided(const Geometry& g, const Operand& x, const Operand& w, const Operand& b,
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
void run_with_weights(const ExternCall& call, const std::vector<ExternBuffer>& in, Operand* y,
                      int threads) {
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
void check_geometry(const Geometry& g, std::mt19937& rng, bool with_naive, bool strided) {
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
  reference_extern(call.op)(call, in_bufs.data(), &out);
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
    portable_extern(call.op)(call, in_bufs.data(), &yb);
    expect_matches(y.data, "portable");
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

Geometry random_geometry(std::mt19937& rng, bool transpose) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Geometry g;
  g.transpose = transpose;
  const size_t k = static_cast<size_t>(pick(1, 3));
  g.n = pick(1, 2);
  if (pick(0, 3) == 0) {  // depthwise
    g.group = g.c = g.m = pick(1, 5);
  } else {
    g.group = pick(1, 3);
    g.c = g.group * pick(1, 3);
    g.m = g.group * pick(1, 3);
  }
  g.bias = pick(0, 1) == 1;
  const int64_t max_in = k == 1 ? 13 : k == 2 ? 8 : 5;
  for (size_t d = 0; d < k; ++d) {
    g.kernel.push_back(pick(1, 3));
    g.stride.push_back(pick(1, 3));
    g.dilation.push_back(pick(1, 2));
    g.in.push_back(pick(1, max_in));
    g.pad_begin.push_back(pick(transpose ? -1 : 0, 2));
    g.pad_end.push_back(pick(transpose ? -2 : 0, 2));
    // Keep at least one output element.
    while (g.out(d) < 1) {
      if (transpose) {
        ++g.in[d];
      } else {
        ++g.pad_end[d];
      }
    }
  }
  return g;
}

Geometry conv2d(int64_t n, int64_t c, int64_t m, int64_t group, Dims in, int64_t kernel,
                int64_t stride, int64_t dilation, int64_t pad) {
  Geometry g;
  g.n = n;
  g.c = c;
  g.m = m;
  g.group = group;
  g.in = in;
  g.bias = true;
  g.kernel = {kernel, kernel};
  g.stride = {stride, stride};
  g.dilation = {dilation, dilation};
  g.pad_begin = {pad, pad};
  g.pad_end = {pad, pad};
  return g;
}

Geometry conv1d(int64_t c, int64_t m, int64_t group, int64_t in, int64_t kernel, int64_t stride,
                int64_t pad_begin, int64_t pad_end) {
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

TEST(Conv, ReferenceMatchesHandComputedValues) {
  // 1-D: x = 1..5, taps [1, 0, -1], pads 1/1, stride 2, bias 0.5:
  // o0 = 0 - 2, o1 = 2 - 4, o2 = 4 - 0 (each plus 0.5).
  Geometry g1 = conv1d(1, 1, 1, 5, 3, 2, 1, 1);
  g1.bias = true;
  // 2-D, ONNX's basic case: 5x5 input 0..24, 3x3 ones, pads 1: sums of 3x3 neighbourhoods.
  Geometry g2 = conv2d(1, 1, 1, 1, {5, 5}, 3, 1, 1, 1);
  g2.bias = false;
  std::vector<float> x2(25), ones(9, 1.0f);
  for (int i = 0; i < 25; ++i) x2[i] = static_cast<float>(i);
  // Groups: channels (1, -1) and (4, 5), 1x1 taps 2 and 3, group 2: y = (2 x0, 3 x1).
  Geometry g3 = conv1d(2, 2, 2, 2, 1, 1, 0, 0);
  // ConvTranspose 1-D: x = [1, 2, 3], taps [1, 2, 3] to one output channel, stride 2: the
  // full output is [1, 2, 3+2, 4, 6+3, 6, 9]; pad_begin 1 drops its first element and
  // pad_end -1 (output_padding 1) appends one that only the bias (0.25) reaches.
  Geometry g4 = conv1d(1, 1, 1, 3, 3, 2, 1, -1);
  g4.transpose = true;
  g4.bias = true;
  struct Case {
    Geometry g;
    std::vector<float> x, w, b, want;
  } cases[] = {
      {g1, {1, 2, 3, 4, 5}, {1, 0, -1}, {0.5f}, {-1.5f, -1.5f, 4.5f}},
      {g2, x2, ones, {}, {12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                          117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84}},
      {g3, {1, -1, 4, 5}, {2, 3}, {}, {2, -2, 12, 15}},
      {g4, {1, 2, 3}, {1, 2, 3}, {0.25f}, {2.25f, 5.25f, 4.25f, 9.25f, 6.25f, 9.25f, 0.25f}},
  };
  for (Case& c : cases) {
    SCOPED_TRACE(c.g.text());
    Operand x = dense(c.g.x_dims(), c.x), w = dense(c.g.w_dims(), c.w), b = dense({c.g.m}, c.b);
    Operand y = dense(c.g.y_dims(), std::vector<float>(c.want.size(), NAN));
    std::vector<Operand*> ins{&x, &w};
    if (c.g.bias) ins.push_back(&b);
    const ExternCall call = make_call(c.g, ins, y);
    std::vector<ExternBuffer> bufs;
    for (Operand* o : ins) bufs.push_back(o->buffer());
    for (const char* backend : {"reference", "portable"}) {
      ExternBuffer out = y.buffer();
      make_backend(backend)->prepare_extern(call)->run(bufs.data(), &out);
      for (size_t i = 0; i < c.want.size(); ++i)
        EXPECT_FLOAT_EQ(y.data[i], c.want[i]) << backend << " at " << i;
    }
  }
}

TEST(Conv, RandomShapesMatchNaiveAndReference) {
  std::mt19937 rng(42);
  for (int i = 0; i < 120; ++i) {
    const Geometry g = random_geometry(rng, i % 2 == 1);
    check_geometry(g, rng, true, i % 5 == 0);
    if (HasFatalFailure()) return;
  }
}

// The portable implementation `g` is prepared with as a session prepares it (W and B
// constants): PortableConv's path.
std::string portable_path(const Geometry& g, std::mt19937& rng) {
  Operand x = random_dense(g.x_dims(), rng), w = random_dense(g.w_dims(), rng);
  Operand b = random_dense({g.m}, rng), y = dense(g.y_dims(), std::vector<float>(1));
  std::vector<Operand*> ins{&x, &w};
  if (g.bias) ins.push_back(&b);
  std::vector<ExternBuffer> constants(ins.size());
  for (size_t i = 1; i < ins.size(); ++i) constants[i] = ins[i]->buffer();
  return make_backend("portable")
      ->prepare_extern(make_call(g, ins, y), constants)
      ->implementation();
}

TEST(Conv, WinogradMatchesReference) {
  std::mt19937 rng(5);
  // Odd outputs (tiles past the edge) and a batch; two groups of 8 channels without padding;
  // 64 channels on 31 x 31: tile rows in several blocks.
  const Geometry cases[] = {conv2d(2, 16, 24, 1, {13, 17}, 3, 1, 1, 1),
                            conv2d(1, 16, 16, 2, {10, 9}, 3, 1, 1, 0),
                            conv2d(1, 64, 64, 1, {31, 31}, 3, 1, 1, 1)};
  for (const Geometry& g : cases) {
    SCOPED_TRACE(g.text());
    EXPECT_EQ(portable_path(g, rng), "winograd 2x2 3x3");
    check_geometry(g, rng, false, false);
    if (HasFatalFailure()) return;
    // Run with W in another buffer than the one it was prepared with: U transformed per run.
    Operand x = random_dense(g.x_dims(), rng), w = random_dense(g.w_dims(), rng);
    Operand b = random_dense({g.m}, rng);
    Operand y = dense(g.y_dims(), std::vector<float>(product(g.y_dims()), NAN));
    const ExternCall call = make_call(g, {&x, &w, &b}, y);
    Operand w_elsewhere = w;
    std::vector<ExternBuffer> in{x.buffer(), w.buffer(), b.buffer()};
    const std::vector<ExternBuffer> constants{{}, w.buffer(), b.buffer()};
    ExternBuffer out = y.buffer();
    reference_extern(call.op)(call, in.data(), &out);
    const std::vector<float> want = y.data;
    auto prepared = make_backend("portable")->prepare_extern(call, constants);
    in[1] = w_elsewhere.buffer();
    std::fill(y.data.begin(), y.data.end(), NAN);
    prepared->run(in.data(), &out);
    const double tol = 1e-4 * max_abs(want);
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(y.data[i], want[i], tol) << "W elsewhere, at " << i;
  }
}

TEST(Conv, PackedWeightsRunWithoutTheirBuffer) {
  // Prepared with W constant, the paths that pack it say so (constants_copied) and run
  // with W's buffer freed, as a Session runs them; the depthwise loop reads W itself.
  std::mt19937 rng(17);
  Geometry transpose = conv2d(1, 8, 6, 2, {7, 6}, 3, 2, 1, 1);
  transpose.transpose = true;
  const std::pair<Geometry, bool> cases[] = {{conv2d(1, 16, 16, 1, {9, 9}, 3, 1, 1, 1), true},
                                             {conv2d(1, 4, 6, 1, {9, 9}, 3, 2, 1, 1), true},
                                             {conv2d(1, 8, 6, 2, {5, 7}, 1, 1, 1, 0), true},
                                             {transpose, true},
                                             {conv2d(1, 6, 6, 6, {9, 9}, 3, 1, 1, 1), false}};
  for (const auto& [g, copies] : cases) {
    SCOPED_TRACE(g.text());
    Operand x = random_dense(g.x_dims(), rng), w = random_dense(g.w_dims(), rng);
    Operand b = random_dense({g.m}, rng);
    Operand y = dense(g.y_dims(), std::vector<float>(product(g.y_dims()), NAN));
    const ExternCall call = make_call(g, {&x, &w, &b}, y);
    std::vector<ExternBuffer> in{x.buffer(), w.buffer(), b.buffer()};
    ExternBuffer out = y.buffer();
    reference_extern(call.op)(call, in.data(), &out);
    const std::vector<float> want = y.data;
    auto prepared = make_backend("portable")->prepare_extern(call, {{}, in[1], in[2]});
    EXPECT_EQ(prepared->constants_copied(),
              copies ? std::vector<size_t>{1} : std::vector<size_t>{});
    if (!copies) continue;
    in[1].data = nullptr;
    std::fill(y.data.begin(), y.data.end(), NAN);
    prepared->run(in.data(), &out);
    const double tol = 1e-4 * max_abs(want);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(y.data[i], want[i], tol) << "at " << i;
  }
}

TEST(Conv, FastPathsAndChunksMatchReference) {
  std::mt19937 rng(7);
  // K in 3 blocks; small M: im2col rows copied from the windows layout (padded, dilated).
  Geometry windows = conv2d(1, 64, 64, 1, {31, 31}, 3, 1, 2, 2);
  // Large M over short rows: the columns between output rows would cost more than packing
  // im2col straight from X (K in 3 blocks).
  Geometry im2col = conv2d(1, 64, 256, 1, {14, 14}, 3, 1, 2, 0);
  Geometry pointwise = conv2d(2, 32, 48, 1, {20, 20}, 1, 1, 1, 0);
  Geometry pointwise_groups = conv2d(1, 32, 16, 2, {9, 11}, 1, 1, 1, 0);
  Geometry depthwise = conv2d(2, 16, 16, 16, {17, 19}, 3, 1, 1, 1);
  Geometry depthwise_strided = conv2d(1, 8, 8, 8, {17, 19}, 3, 2, 2, 2);
  Geometry depthwise_multiplier = conv2d(1, 8, 16, 8, {9, 9}, 3, 1, 1, 1);
  Geometry stem = conv2d(1, 3, 16, 1, {40, 40}, 7, 2, 1, 3);     // windows over 2 x 2 phases
  Geometry dilated = conv2d(2, 6, 10, 2, {15, 13}, 3, 3, 2, 2);  // phases of dilated taps
  Geometry strided_1x1 = conv2d(1, 16, 24, 1, {15, 15}, 1, 2, 1, 0);
  Geometry conv_1d = conv1d(8, 12, 1, 300, 5, 1, 2, 2);             // windows without gaps
  Geometry transpose = conv2d(1, 16, 16, 1, {40, 40}, 4, 2, 1, 1);  // col2im in 2 chunks
  transpose.transpose = true;
  const std::pair<Geometry, const char*> cases[] = {{windows, "gemm windows"},
                                                    {im2col, "gemm im2col"},
                                                    {pointwise, "gemm 1x1"},
                                                    {pointwise_groups, "gemm 1x1"},
                                                    {depthwise, "depthwise"},
                                                    {depthwise_strided, "depthwise"},
                                                    {depthwise_multiplier, "gemm windows"},
                                                    {stem, "gemm windows"},
                                                    {dilated, "gemm windows"},
                                                    {strided_1x1, "gemm im2col"},
                                                    {conv_1d, "gemm windows"},
                                                    {transpose, "gemm col2im"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.first.text());
    EXPECT_EQ(portable_path(c.first, rng), c.second);
    check_geometry(c.first, rng, false, false);
    if (HasFatalFailure()) return;
  }
}

// Post-ops on `g`'s output: a per-channel Add, an activation, a full residual Mul, a scalar
// Sub, and (with `spatial`) a Max with an operand broadcast along all but one spatial dim,
// whose strides do not flatten (then the post-ops run after the op). Portable against the
// reference on every SIMD target, weights constant, one and two threads bitwise equal.
void check_fused_post_ops(const Geometry& g, PostOpKind activation, bool spatial,
                          std::mt19937& rng) {
  SCOPED_TRACE(g.text() + " then " + post_op_name(activation) + (spatial ? " + spatial" : ""));
  const Dims yd = g.y_dims();
  Operand x = random_dense(g.x_dims(), rng), w = random_dense(g.w_dims(), rng);
  Operand b = random_dense({g.m}, rng), chan = random_dense({g.m}, rng);
  Operand res = random_dense(yd, rng), scalar = random_dense({1}, rng);
  Operand row = random_dense({yd[yd.size() - 2]}, rng);
  Operand y = dense(yd, std::vector<float>(static_cast<size_t>(product(yd)), NAN));
  std::vector<Operand*> ins{&x, &w};
  if (g.bias) ins.push_back(&b);
  ExternCall call = make_call(g, ins, y);
  auto operand = [&](Operand* o, Dims strides) {
    o->ref = TensorRef{0, yd, std::move(strides), 0};
    ins.push_back(o);
    call.inputs.push_back(o->ref);
    return static_cast<int32_t>(call.inputs.size() - 1);
  };
  Dims per_channel(yd.size(), 0), per_row(yd.size(), 0);
  per_channel[1] = 1;
  per_row[yd.size() - 2] = 1;
  call.post_ops = {PostOp{PostOpKind::Add, 0, 0, operand(&chan, per_channel)},
                   PostOp{activation, 0.1f, 0.6f},
                   PostOp{PostOpKind::Mul, 0, 0, operand(&res, dense_strides(yd))},
                   PostOp{PostOpKind::Sub, 0, 0, operand(&scalar, Dims(yd.size(), 0))}};
  if (spatial) call.post_ops.push_back(PostOp{PostOpKind::Max, 0, 0, operand(&row, per_row)});
  std::vector<ExternBuffer> bufs;
  for (Operand* o : ins) bufs.push_back(o->buffer());
  ExternBuffer out = y.buffer();
  reference_extern(call.op)(call, bufs.data(), &out);
  const std::vector<float> want = y.data;
  const double tol = 1e-4 * max_abs(want);
  testing::for_each_simd_target([&] {
    run_with_weights(call, bufs, &y, 1);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(y.data[i], want[i], tol) << "at " << i;
    const std::vector<float> one = y.data;
    run_with_weights(call, bufs, &y, 2);
    ASSERT_EQ(std::memcmp(one.data(), y.data.data(), one.size() * sizeof(float)), 0)
        << "two threads differ from one";
    std::fill(y.data.begin(), y.data.end(), NAN);
    portable_extern(call.op)(call, bufs.data(), &out);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(y.data[i], want[i], tol) << "at " << i;
  });
}

TEST(Conv, PostOpsFusedOnEveryPath) {
  std::mt19937 rng(11);
  Geometry implicit = conv2d(2, 5, 14, 1, {9, 11}, 3, 1, 1, 1);  // tile remainders
  Geometry winograd = conv2d(2, 8, 12, 1, {9, 11}, 3, 1, 1, 1);
  Geometry strided = conv2d(1, 4, 8, 2, {13, 10}, 3, 2, 1, 1);
  Geometry pointwise = conv2d(2, 16, 13, 1, {7, 9}, 1, 1, 1, 0);
  Geometry depthwise = conv2d(2, 6, 6, 6, {11, 13}, 3, 1, 1, 1);
  Geometry depthwise_s2 = conv2d(1, 5, 5, 5, {12, 9}, 3, 2, 2, 1);
  Geometry transpose = conv2d(1, 6, 4, 2, {5, 6}, 3, 2, 1, 1);
  transpose.transpose = true;
  Geometry bias_only = conv1d(0, 3, 1, 7, 3, 1, 1, 1);  // no input channels: an empty sum
  bias_only.bias = true;
  for (const Geometry& g :
       {implicit, winograd, strided, pointwise, depthwise, depthwise_s2, transpose, bias_only}) {
    for (PostOpKind act : {PostOpKind::Relu, PostOpKind::GeluErf, PostOpKind::Clip})
      check_fused_post_ops(g, act, false, rng);
    check_fused_post_ops(g, PostOpKind::Sigmoid, true, rng);
    if (HasFatalFailure()) return;
  }
}

TEST(Conv, RejectsBadOperands) {
  std::mt19937 rng(3);
  Geometry g = conv2d(1, 4, 6, 2, {5, 5}, 3, 1, 1, 1);
  Operand x = random_dense(g.x_dims(), rng), w = random_dense(g.w_dims(), rng);
  Operand y = dense(g.y_dims(), std::vector<float>(product(g.y_dims())));
  Operand b = random_dense({g.m}, rng);
  ExternBuffer in[3] = {x.buffer(), w.buffer(), b.buffer()};
  ExternBuffer out = y.buffer();
  auto expect_error = [&](const ExternCall& call, const ExternBuffer* ins, const char* start) {
    for (const char* backend : {"reference", "portable"}) {
      SCOPED_TRACE(backend);
      try {
        make_backend(backend)->prepare_extern(call)->run(ins, &out);
        ADD_FAILURE() << "no error";
      } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()).rfind(start, 0), 0u) << e.what();
      }
    }
  };
  const ExternCall ok = make_call(g, {&x, &w, &b}, y);
  ExternCall bad_y = ok;
  bad_y.outputs[0].shape[3] = 4;  // the attributes give 5
  expect_error(bad_y, in, "Conv: Y[1,6,5,4] has 4 elements in spatial dim 1");
  ExternCall bad_group = ok;
  bad_group.ints["group"] = 3;  // 4 channels
  expect_error(bad_group, in, "Conv: X[1,4,5,5] and W[6,2,3,3] do not agree");
  ExternCall bad_rank = ok;
  bad_rank.inputs[1].shape.pop_back();
  bad_rank.inputs[1].strides.pop_back();
  expect_error(bad_rank, in, "Conv: W has rank 3");
  ExternCall bad_bias = ok;
  bad_bias.inputs[2].shape[0] = 5;
  expect_error(bad_bias, in, "Conv: B[5] needs 6 elements");
  ExternCall bad_stride = ok;
  bad_stride.ints["stride0"] = 0;
  expect_error(bad_stride, in, "Conv: stride0 = 0 is out of range");
  ExternCall transpose = ok;
  transpose.op = "ConvTranspose";  // W is [M, C/group, ...], not [C, M/group, ...]
  expect_error(transpose, in, "ConvTranspose: X[1,4,5,5] and W[6,2,3,3] do not agree");
  ExternBuffer f64[3] = {x.buffer(), w.buffer(), b.buffer()};
  f64[0].dtype = DType::F64;
  expect_error(ok, f64, "Conv: dtype float64 unsupported");
  ExternBuffer small[3] = {x.buffer(), w.buffer(), b.buffer()};
  small[1].elements -= 1;
  expect_error(ok, small, "Conv: W reaches elements [0, 107] outside its buffer");
  // The portable backend checks the shapes when it prepares (it sizes its scratch then).
  EXPECT_THROW(make_backend("portable")->prepare_extern(bad_group), Error);
}

}  // namespace
}  // namespace ferrite
