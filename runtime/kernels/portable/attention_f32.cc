#include "runtime/kernels/portable/attention_f32.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/kernels/portable/float_buffer.h"
#include "runtime/kernels/portable/gemm_f32.h"
#include "runtime/kernels/portable/parallel.h"
#include "runtime/kernels/portable/simd_f32.h"
#include "runtime/kernels/reference/attention.h"

namespace ferrite {
namespace {

constexpr int64_t kRows = 64;   // query rows per part
constexpr int64_t kCols = 256;  // keys per tile (a multiple of 64: rows of scores stay apart)
constexpr float kInf = std::numeric_limits<float>::infinity();

// Dims read off the call's operands (prepare) or checked buffers (run).
struct Dims {
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, head = 0, v_head = 0;
};

// K^T and V of every (batch, kv head) packed once as the GEMM's B operands (when the head
// size fits one K block), so that query blocks share them: K^T [D x T] as panels of keys,
// V [T x Dv] as blocks of kKC keys, the tiles' width.
bool packs_kv(const Dims& d) {
  const GemmGeometry geo = gemm_f32_geometry();
  return geo.kc == kCols && kCols % geo.nr == 0 && d.batch > 0 && d.kv_heads > 0 && d.head > 0 &&
         d.head <= geo.kc && d.v_head > 0 && d.kv_len > 0;
}
size_t packed_k_floats(const Dims& d) {
  return (gemm_f32_packed_b_floats(d.head, d.kv_len) + 15) / 16 * 16;
}
size_t packed_v_floats(const Dims& d) {
  return (gemm_f32_packed_b_floats(d.kv_len, d.v_head) + 15) / 16 * 16;
}

// What one thread works in: scores, the tile's P @ V, the running output, maximum, sum and
// correction, the GEMM's packing blocks.
struct Tiles {
  float *s = nullptr, *pv = nullptr, *o = nullptr, *max = nullptr, *sum = nullptr, *corr = nullptr,
        *gemm = nullptr;
  const float *k_packed = nullptr, *v_packed = nullptr;  // this head's, or null
};

// Where the pieces of one thread's Tiles lie (offsets in floats), and its size.
struct TileLayout {
  size_t s = 0, pv = 0, o = 0, max = 0, sum = 0, corr = 0, gemm = 0, total = 0;
  explicit TileLayout(const Dims& d) {
    ScratchLayout l;
    const size_t out = static_cast<size_t>(kRows * std::max<int64_t>(d.v_head, 1));
    s = l.add(static_cast<size_t>(kRows * kCols));
    pv = l.add(out);
    o = l.add(out);
    max = l.add(kRows);
    sum = l.add(kRows);
    corr = l.add(kRows);
    GemmF32 scores, product;  // the largest of each GEMM a tile runs
    scores.m = product.m = kRows;
    scores.n = kCols;
    scores.k = std::max<int64_t>(d.head, 1);
    product.n = std::max<int64_t>(d.v_head, 1);
    product.k = kCols;
    gemm = l.add(std::max(gemm_f32_scratch_floats(scores, 1), gemm_f32_scratch_floats(product, 1)));
    total = l.floats();
  }
  Tiles at(float* base) const {
    Tiles t;
    t.s = base + s;
    t.pv = base + pv;
    t.o = base + o;
    t.max = base + max;
    t.sum = base + sum;
    t.corr = base + corr;
    t.gemm = base + gemm;
    return t;
  }
};

void softcap_row(float* x, int64_t n, float cap) {
  for (int64_t j = 0; j < n; ++j) x[j] /= cap;
  simd::unary_f32(Op::Tanh, x, x, static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) x[j] *= cap;
}

// Scores of row `i` (keys j0 + [0, n)) made final: softcap, mask, and -inf outside the
// keys [lo, hi) the row sees.
void finish_scores(const AttentionArgs& a, const float* mask_row, int64_t lo, int64_t hi,
                   int64_t j0, int64_t n, float* s) {
  const float cap = static_cast<float>(a.attrs.softcap);
  if (cap > 0) softcap_row(s, n, cap);
  if (mask_row) {
    const int64_t ms = a.mask.stride[3];
    const float* m = mask_row + j0 * ms;
    if (ms == 1) {  // the usual mask: a loop the compiler vectorizes
      for (int64_t j = 0; j < n; ++j) s[j] += m[j];
    } else {
      for (int64_t j = 0; j < n; ++j) s[j] += m[j * ms];
    }
  }
  const int64_t first = std::clamp<int64_t>(lo - j0, 0, n),
                end = std::clamp<int64_t>(hi - j0, 0, n);
  std::fill(s, s + first, -kInf);
  std::fill(s + std::max(first, end), s + n, -kInf);
}

// max or sum of x[0, n) (reduce_f32 folds into its partials, so they start at the identity).
float reduce_row(ReduceKind kind, const float* x, int64_t n) {
  float acc[simd::kAccLanes];
  std::fill(acc, acc + simd::kAccLanes, kind == ReduceKind::Max ? -kInf : 0.0f);
  simd::reduce_f32(kind, x, static_cast<size_t>(n), acc);
  return simd::reduce_f32_finish(kind, acc);
}

// Folds a tile of scores into row r's running maximum and sum: s becomes the tile's
// probabilities relative to the new maximum, corr what the row's earlier output is scaled by.
void online_softmax_row(float* s, int64_t n, Tiles* t, int64_t r) {
  const float tile_max = reduce_row(ReduceKind::Max, s, n);
  const float old = t->max[r];
  const float top = std::isnan(tile_max) ? tile_max : std::max(old, tile_max);
  if (top == -kInf) {  // every score so far masked: nothing to add yet
    std::fill(s, s + n, 0.0f);
    t->corr[r] = 1;
    return;
  }
  const float tile_sum = simd::exp_shifted_sum_f32(s, top, s, static_cast<size_t>(n));
  const float corr = old == -kInf ? 0.0f : std::exp(old - top);
  t->corr[r] = corr;
  t->sum[r] = t->sum[r] * corr + tile_sum;
  t->max[r] = top;
}

// scores = scale * Q rows @ K[j0, j0 + n)^T into t->s.
void tile_scores(const AttentionArgs& a, const float* q, const float* k, int64_t rows, int64_t j0,
                 int64_t n, Tiles* t) {
  if (a.head == 0) {
    std::fill(t->s, t->s + rows * kCols, 0.0f);
    return;
  }
  GemmF32 g;
  g.a = q;
  g.a_rs = a.q.stride[2];
  g.a_cs = a.q.stride[3];
  g.b = k + j0 * a.k.stride[2];  // K^T: row d, column j
  g.b_rs = a.k.stride[3];
  g.b_cs = a.k.stride[2];
  PackedOperand view;  // panels j0 / nr on of the head's packed K^T (one K block)
  if (t->k_packed) {
    view.geometry = gemm_f32_geometry();
    view.data = t->k_packed + j0 * a.head;
    view.rows = a.head;
    view.cols = n;
    g.b_packed = &view;
  }
  g.c = t->s;
  g.c_rs = kCols;
  g.c_cs = 1;
  g.m = rows;
  g.n = n;
  g.k = a.head;
  g.alpha = static_cast<float>(a.attrs.scale);
  gemm_f32(g, 1, t->gemm);
}

// o = o * corr + probabilities @ V[j0, j0 + n), row by row.
void tile_output(const AttentionArgs& a, const float* v, int64_t rows, int64_t j0, int64_t n,
                 Tiles* t) {
  const int64_t dv = a.v_head;
  if (dv == 0) return;
  GemmF32 g;
  g.a = t->s;
  g.a_rs = kCols;
  g.a_cs = 1;
  g.b = v + j0 * a.v.stride[2];
  g.b_rs = a.v.stride[2];
  g.b_cs = a.v.stride[3];
  PackedOperand view;  // K block j0 / kKC of the head's packed V: n is that block's height
  if (t->v_packed) {
    view.geometry = gemm_f32_geometry();
    view.data =
        t->v_packed + j0 * ((dv + view.geometry.nr - 1) / view.geometry.nr * view.geometry.nr);
    view.rows = n;
    view.cols = dv;
    g.b_packed = &view;
  }
  g.c = t->pv;
  g.c_rs = dv;
  g.c_cs = 1;
  g.m = rows;
  g.n = dv;
  g.k = n;
  gemm_f32(g, 1, t->gemm);
  for (int64_t r = 0; r < rows; ++r) {
    const float corr = t->corr[r];
    float* o = t->o + r * dv;
    const float* pv = t->pv + r * dv;
    for (int64_t e = 0; e < dv; ++e) o[e] = o[e] * corr + pv[e];
  }
}

// One part: query rows [i0, i0 + rows) of head h of batch b.
void attend_block(const AttentionArgs& a, int64_t b, int64_t h, int64_t i0, Tiles* t) {
  const int64_t rows = std::min(kRows, a.q_len - i0), dv = a.v_head;
  const int64_t kvh = h / (a.q_heads / a.kv_heads);
  const float* q = a.q.data + b * a.q.stride[0] + h * a.q.stride[1] + i0 * a.q.stride[2];
  const float* k = a.k.data + b * a.k.stride[0] + kvh * a.k.stride[1];
  const float* v = a.v.data + b * a.v.stride[0] + kvh * a.v.stride[1];
  // A sink is one more score, of no value: the row starts with it in its maximum and sum.
  const float sink = a.sinks ? a.sinks[h * a.sink_stride] : -kInf;
  std::fill(t->o, t->o + rows * dv, 0.0f);
  std::fill(t->max, t->max + kRows, sink);
  std::fill(t->sum, t->sum + kRows, sink == -kInf ? 0.0f : 1.0f);  // e^(sink - sink)
  // The keys any row of the block sees; tiles outside them (above a causal diagonal,
  // before a window, past a batch entry's length) add nothing.
  int64_t first = a.kv_len, end = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const auto [lo, hi] = visible_keys(a, b, i0 + r);
    if (lo >= hi) continue;
    first = std::min(first, lo);
    end = std::max(end, hi);
  }
  // Packed K and V are read in whole blocks of kCols keys.
  if (t->k_packed && first < end) first = first / kCols * kCols;
  for (int64_t j0 = first; j0 < end; j0 += kCols) {
    const int64_t n = std::min(kCols, (t->k_packed ? a.kv_len : end) - j0);
    tile_scores(a, q, k, rows, j0, n, t);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r;
      const auto [lo, hi] = visible_keys(a, b, i);
      const float* mask_row = a.mask.data ? a.mask.data + b * a.mask.stride[0] +
                                                h * a.mask.stride[1] + i * a.mask.stride[2]
                                          : nullptr;
      float* s = t->s + r * kCols;
      finish_scores(a, mask_row, lo, hi, j0, n, s);
      online_softmax_row(s, n, t, r);
    }
    tile_output(a, v, rows, j0, n, t);
  }
  for (int64_t r = 0; r < rows; ++r) {
    float* y = a.y + b * a.y_stride[0] + h * a.y_stride[1] + (i0 + r) * a.y_stride[2];
    const float sum = t->sum[r];
    // No key seen: zeros, or NaN with empty_rows_nan (a NaN sink or score: NaN).
    const float inv = sum > 0 || std::isnan(sum) ? 1 / sum
                      : a.attrs.empty_rows_nan   ? std::nanf("")
                                                 : 0.0f;
    for (int64_t e = 0; e < dv; ++e) y[e * a.y_stride[3]] = t->o[r * dv + e] * inv;
  }
}

Dims dims_of(const AttentionArgs& a) {
  return Dims{a.batch, a.q_heads, a.kv_heads, a.q_len, a.kv_len, a.head, a.v_head};
}

// The dims the call's views claim (checked again against the buffers at run); zeros when
// they are not rank 4.
Dims dims_of(const ExternCall& call) {
  Dims d;
  if (call.inputs.size() < 3 || call.outputs.empty()) return d;
  const auto &q = call.inputs[0].shape, &k = call.inputs[1].shape, &v = call.inputs[2].shape;
  if (q.size() != 4 || k.size() != 4 || v.size() != 4) return d;
  return Dims{q[0], q[1], k[1], q[2], k[2], q[3], v[3]};
}

class PortableAttention : public PreparedExtern {
 public:
  PortableAttention(const ExternCall& call, int threads) : call_(call), threads_(threads) {
    scratch_floats_ = layout(dims_of(call)).total;
  }

  size_t scratch_bytes() const override { return scratch_floats_ * sizeof(float); }
  void bind_scratch(void* scratch) override { scratch_.bind(scratch, scratch_bytes()); }

  void run(const ExternBuffer* inputs, const ExternBuffer* outputs) override {
    const AttentionArgs a = parse_attention(call_, inputs, outputs);
    const Dims d = dims_of(a);
    const int64_t blocks = (a.q_len + kRows - 1) / kRows;
    const int64_t parts = a.batch * a.q_heads * blocks;
    if (parts == 0) return;
    const Layout l = layout(d);
    float* base = scratch_.get(l.total);
    const bool packed = packs_kv(d);
    if (packed) {  // K^T and V of each (batch, kv head), once
      parallel_parts(threads_, a.batch * a.kv_heads, [&](int64_t p) {
        const int64_t b = p / a.kv_heads, h = p % a.kv_heads;
        PackedOperand k, v;
        gemm_f32_pack_b(a.k.data + b * a.k.stride[0] + h * a.k.stride[1], a.k.stride[3],
                        a.k.stride[2], a.head, a.kv_len, &k, base + l.k_at(p));
        gemm_f32_pack_b(a.v.data + b * a.v.stride[0] + h * a.v.stride[1], a.v.stride[2],
                        a.v.stride[3], a.kv_len, a.v_head, &v, base + l.v_at(p));
      });
    }
    // Contiguous runs of parts, one per thread, each in its own tiles.
    const int64_t slots = std::max<int64_t>(1, std::min<int64_t>(threads_, parts));
    parallel_parts(threads_, slots, [&](int64_t slot) {
      Tiles t = l.tiles.at(base + l.tiles_at + static_cast<size_t>(slot) * l.tiles.total);
      for (int64_t p = parts * slot / slots; p < parts * (slot + 1) / slots; ++p) {
        const int64_t bh = p / blocks, b = bh / a.q_heads, h = bh % a.q_heads;
        if (packed) {
          const int64_t kv = b * a.kv_heads + h / (a.q_heads / a.kv_heads);
          t.k_packed = base + l.k_at(kv);
          t.v_packed = base + l.v_at(kv);
        }
        attend_block(a, b, h, (p % blocks) * kRows, &t);
      }
    });
  }

 private:
  // The scratch: packed K^T and V per (batch, kv head) when packs_kv, then a Tiles per thread.
  struct Layout {
    TileLayout tiles;
    size_t k_floats = 0, v_floats = 0, tiles_at = 0, total = 0;
    explicit Layout(const Dims& d) : tiles(d) {}
    size_t k_at(int64_t p) const { return static_cast<size_t>(p) * (k_floats + v_floats); }
    size_t v_at(int64_t p) const { return k_at(p) + k_floats; }
  };
  Layout layout(const Dims& d) const {
    Layout l(d);
    if (packs_kv(d)) {
      l.k_floats = packed_k_floats(d);
      l.v_floats = packed_v_floats(d);
      l.tiles_at = static_cast<size_t>(d.batch * d.kv_heads) * (l.k_floats + l.v_floats);
    }
    const int64_t parts = d.batch * d.q_heads * ((d.q_len + kRows - 1) / kRows);
    const int64_t slots = std::max<int64_t>(1, std::min<int64_t>(threads_, parts));
    l.total = l.tiles_at + static_cast<size_t>(slots) * l.tiles.total;
    return l;
  }

  const ExternCall& call_;
  int threads_;
  size_t scratch_floats_ = 0;
  Scratch scratch_;
};

}  // namespace

std::unique_ptr<PreparedExtern> prepare_portable_attention(const ExternCall& call, int threads) {
  return std::make_unique<PortableAttention>(call, threads);
}

}  // namespace ferrite
