// The column loops of conv_simd_f32.h, compiled per target by foreach_target.h: packing
// the implicit GEMM's im2col panels straight from the input planes or from the windows copy
// (filling it, and dropping the columns between output rows after the GEMM), and
// ConvTranspose's col2im. Rows along the innermost spatial dim are contiguous runs of both input
// and output when its stride is 1: those are vector copies; other strides are scalar gathers.
#include <algorithm>

#include "runtime/kernels/portable/conv_simd_f32.h"
#include "runtime/kernels/portable/keep_loop.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "runtime/kernels/portable/conv_columns_f32.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "runtime/kernels/portable/epilogue-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ferrite {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// y[0:n] = x[0:n]
HWY_INLINE void CopyRow(const float* HWY_RESTRICT x, float* HWY_RESTRICT y, int64_t n) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    hn::StoreU(hn::LoadU(d, x + i), d, y + i);
    FERRITE_KEEP_LOOP();
  }
  for (; i < n; ++i) {
    y[i] = x[i];
    FERRITE_KEEP_LOOP();
  }
}

// y[0:n] = x[0:2n:2] (stride 2, as in strided stems and downsampling convolutions): pairs of
// vectors de-interleaved while the source pair lies inside x[0 : limit).
HWY_INLINE void CopyEvenRow(const float* HWY_RESTRICT x, int64_t limit, float* HWY_RESTRICT y,
                            int64_t n) {
  int64_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  for (; i + N <= n && 2 * (i + N) <= limit; i += N)
    hn::StoreU(hn::ConcatEven(d, hn::LoadU(d, x + 2 * i + N), hn::LoadU(d, x + 2 * i)), d, y + i);
#else
  (void)limit;
#endif
  for (; i < n; ++i) y[i] = x[2 * i];
}

// y[0:n] += x[0:n]
HWY_INLINE void AddRow(const float* HWY_RESTRICT x, float* HWY_RESTRICT y, int64_t n) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + N <= n; i += N)
    hn::StoreU(hn::Add(hn::LoadU(d, x + i), hn::LoadU(d, y + i)), d, y + i);
  for (; i < n; ++i) y[i] += x[i];
}

// A run of a panel's columns inside one output row: panel column `col` onwards holds output
// positions (o0, o1, o2 ...) for `len` columns.
struct Run {
  int64_t col, o0, o1, o2, len;
};

// Panels are cut into pieces of at most this many columns (bounds the run table).
constexpr int64_t kPiece = 256;
// Kernel widths up to this get their valid output ranges tabulated once per call.
constexpr int64_t kRangeTable = 64;

// The runs of output positions [q, q + cols) (cols <= kPiece), starting at panel column col0.
int64_t FindRuns(const ConvArgs& a, int64_t q, int64_t cols, int64_t col0, Run* runs) {
  const int64_t ow = a.out[2];
  int64_t o2 = q % ow, rows = q / ow;
  int64_t o1 = rows % a.out[1], o0 = rows / a.out[1], n = 0;
  for (int64_t col = 0; col < cols; ++n) {
    const int64_t len = std::min(ow - o2, cols - col);
    runs[n] = Run{col0 + col, o0, o1, o2, len};
    col += len;
    o2 = 0;
    if (++o1 == a.out[1]) {
      o1 = 0;
      ++o0;
    }
  }
  return n;
}

// One row of an im2col panel: input channel plane xc at kernel position (t0, t1, off2: the
// offsets it adds to o * stride along each spatial dim), outputs [lo, hi) of a row landing
// inside the input row; one segment per run.
void FillRow(const ConvArgs& a, const float* xc, int64_t t0, int64_t t1, int64_t off2, int64_t lo,
             int64_t hi, const Run* runs, int64_t nruns, float* row) {
  const int64_t iw = a.in[2], s2 = a.stride[2];
  for (int64_t i = 0; i < nruns; ++i) {
    const Run& run = runs[i];
    float* out = row + run.col;
    const int64_t i0 = run.o0 * a.stride[0] + t0, i1 = run.o1 * a.stride[1] + t1;
    if (i0 < 0 || i0 >= a.in[0] || i1 < 0 || i1 >= a.in[1]) {
      std::fill(out, out + run.len, 0.0f);
      continue;
    }
    const float* xrow = xc + (i0 * a.in[1] + i1) * iw;
    const int64_t end = run.o2 + run.len;
    const int64_t v0 = std::min(std::max(lo, run.o2), end);
    const int64_t v1 = std::min(std::max(hi, v0), end);
    std::fill(out, out + (v0 - run.o2), 0.0f);
    if (s2 == 1) {
      CopyRow(xrow + v0 + off2, out + (v0 - run.o2), v1 - v0);
    } else if (s2 == 2) {
      const int64_t first = 2 * v0 + off2;  // inside the row: v0 >= lo
      CopyEvenRow(xrow + first, iw - first, out + (v0 - run.o2), v1 - v0);
    } else {
      for (int64_t o = v0; o < v1; ++o) out[o - run.o2] = xrow[o * s2 + off2];
    }
    std::fill(out + (v1 - run.o2), out + run.len, 0.0f);
  }
}

void PackIm2Col(const Im2ColSource& src, int64_t p0, int64_t kc, int64_t j0, int64_t nc, int64_t nr,
                float* dst) {
  const ConvArgs& a = *src.a;
  const int64_t k1 = a.kernel[1], k2 = a.kernel[2], ks = a.kernel_size();
  // Per kernel column: the outputs of a row that land inside the input row.
  int64_t lo_tab[kRangeTable], hi_tab[kRangeTable];
  for (int64_t j = 0; j < std::min(k2, kRangeTable); ++j)
    conv_valid_range(a.out[2], a.in[2], a.stride[2], j * a.dilation[2] - a.pad_begin[2], &lo_tab[j],
                     &hi_tab[j]);
  Run runs[kPiece];
  for (int64_t jp = 0; jp < nc; jp += nr) {
    const int64_t w = std::min(nr, nc - jp);
    float* panel = dst + (jp / nr) * kc * nr;
    for (int64_t c0 = 0; c0 < w; c0 += kPiece) {
      const int64_t nruns = FindRuns(a, j0 + jp + c0, std::min(kPiece, w - c0), c0, runs);
      // Row p0 + p of B is (c, jk0, jk1, jk2): channel and kernel position, stepped.
      const int64_t r = p0 % ks;
      int64_t c = p0 / ks, jk0 = r / (k1 * k2), jk1 = r / k2 % k1, jk2 = r % k2;
      for (int64_t p = 0; p < kc; ++p) {
        const int64_t off2 = jk2 * a.dilation[2] - a.pad_begin[2];
        int64_t lo, hi;
        if (jk2 < kRangeTable) {
          lo = lo_tab[jk2];
          hi = hi_tab[jk2];
        } else {
          conv_valid_range(a.out[2], a.in[2], a.stride[2], off2, &lo, &hi);
        }
        FillRow(a, src.x + c * a.in_size(), jk0 * a.dilation[0] - a.pad_begin[0],
                jk1 * a.dilation[1] - a.pad_begin[1], off2, lo, hi, runs, nruns, panel + p * nr);
        if (++jk2 == k2) {
          jk2 = 0;
          if (++jk1 == k1) {
            jk1 = 0;
            if (++jk0 == a.kernel[0]) {
              jk0 = 0;
              ++c;
            }
          }
        }
      }
    }
    if (w < nr)
      for (int64_t p = 0; p < kc; ++p) std::fill(panel + p * nr + w, panel + (p + 1) * nr, 0.0f);
  }
}

void FillWindows(const ConvArgs& a, const ConvWindows& w, const float* x, int64_t c0, int64_t c1,
                 float* dst) {
  const auto& s = a.stride;
  const auto& len = w.len;
  for (int64_t c = c0; c < c1; ++c) {
    const float* xc = x + c * a.in_size();
    float* phase = dst + c * w.channel;
    for (int64_t f0 = 0; f0 < s[0]; ++f0) {
      for (int64_t f1 = 0; f1 < s[1]; ++f1) {
        for (int64_t f2 = 0; f2 < s[2]; ++f2, phase += w.plane) {
          // Positions r with an input column r * s + f - pad inside the row: [lo, hi).
          int64_t lo, hi;
          conv_valid_range(len[2], a.in[2], s[2], f2 - a.pad_begin[2], &lo, &hi);
          const int64_t first = lo * s[2] + f2 - a.pad_begin[2];
          for (int64_t r0 = 0; r0 < len[0]; ++r0) {
            for (int64_t r1 = 0; r1 < len[1]; ++r1) {
              float* row = phase + (r0 * len[1] + r1) * len[2];
              const int64_t i0 = r0 * s[0] + f0 - a.pad_begin[0];
              const int64_t i1 = r1 * s[1] + f1 - a.pad_begin[1];
              if (i0 < 0 || i0 >= a.in[0] || i1 < 0 || i1 >= a.in[1] || lo == hi) {
                std::fill(row, row + len[2], 0.0f);
                continue;
              }
              const float* xrow = xc + (i0 * a.in[1] + i1) * a.in[2];
              std::fill(row, row + lo, 0.0f);
              if (s[2] == 1) {
                CopyRow(xrow + first, row + lo, hi - lo);
              } else if (s[2] == 2) {
                CopyEvenRow(xrow + first, a.in[2] - first, row + lo, hi - lo);
              } else {
                for (int64_t r = lo; r < hi; ++r) row[r] = xrow[first + (r - lo) * s[2]];
              }
              std::fill(row + hi, row + len[2], 0.0f);
            }
          }
        }
      }
    }
  }
}

void PackWindows(const WindowsSource& src, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                 int64_t nr, float* dst) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const int64_t* offsets = src.w->offsets.data() + p0;
  for (int64_t jp = 0; jp < nc; jp += nr) {
    const int64_t w = std::min(nr, nc - jp);
    float* panel = dst + (jp / nr) * kc * nr;
    const float* base = src.copy + j0 + jp;
    if (w == nr) {
      for (int64_t p = 0; p < kc; ++p) {
        const float* from = base + offsets[p];
        for (int64_t i = 0; i < nr; i += N)
          hn::StoreU(hn::LoadU(d, from + i), d, panel + p * nr + i);
      }
      continue;
    }
    for (int64_t p = 0; p < kc; ++p) {
      std::copy(base + offsets[p], base + offsets[p] + w, panel + p * nr);
      std::fill(panel + p * nr + w, panel + (p + 1) * nr, 0.0f);
    }
  }
}

void UnpadWindows(const ConvArgs& a, const ConvWindows& w, const float* c, const Epilogue* post_ops,
                  int64_t m0, int64_t m1, float* y) {
  constexpr int64_t kStrip = 256;
  static_assert(kStrip % vm::kMaxLanes == 0, "strips are whole vectors");
  HWY_ALIGN float buf[kStrip];
  const auto& out = a.out;
  for (int64_t m = m0; m < m1; ++m) {
    for (int64_t o0 = 0; o0 < out[0]; ++o0) {
      for (int64_t o1 = 0; o1 < out[1]; ++o1) {
        const float* from = c + m * w.cols + (o0 * w.len[1] + o1) * w.len[2];
        const int64_t at = (o0 * out[1] + o1) * out[2];
        float* to = y + m * a.out_size() + at;
        if (!post_ops) {
          CopyRow(from, to, out[2]);
          continue;
        }
        for (int64_t x0 = 0; x0 < out[2]; x0 += kStrip) {
          const int64_t n = std::min(kStrip, out[2] - x0);
          CopyRow(from + x0, buf, n);
          std::fill(buf + n, buf + kStrip, 0.0f);
          epi::EpilogueRow(*post_ops, m, at + x0, buf, n);
          CopyRow(buf, to + x0, n);
        }
      }
    }
  }
}

void Col2Im(const ConvArgs& a, const float* col, int64_t r0, int64_t r1, float* y) {
  const int64_t iw = a.in[2], ow = a.out[2], s2 = a.stride[2];
  const int64_t cols = (r1 - r0) * iw, plane = a.out_size();
  const float* crow = col;
  for (int64_t m = 0; m < a.c_out_group(); ++m) {
    for (int64_t j0 = 0; j0 < a.kernel[0]; ++j0) {
      for (int64_t j1 = 0; j1 < a.kernel[1]; ++j1) {
        for (int64_t j2 = 0; j2 < a.kernel[2]; ++j2, crow += cols) {
          const int64_t off = j2 * a.dilation[2] - a.pad_begin[2];
          int64_t lo, hi;
          conv_valid_range(iw, ow, s2, off, &lo, &hi);
          if (lo == hi) continue;
          for (int64_t r = r0; r < r1; ++r) {
            const int64_t i0 = r / a.in[1], i1 = r % a.in[1];
            const int64_t o0 = i0 * a.stride[0] + j0 * a.dilation[0] - a.pad_begin[0];
            const int64_t o1 = i1 * a.stride[1] + j1 * a.dilation[1] - a.pad_begin[1];
            if (o0 < 0 || o0 >= a.out[0] || o1 < 0 || o1 >= a.out[1]) continue;
            float* yrow = y + m * plane + (o0 * a.out[1] + o1) * ow;
            const float* src = crow + (r - r0) * iw;
            if (s2 == 1) {
              AddRow(src + lo, yrow + lo + off, hi - lo);
            } else {
              for (int64_t i = lo; i < hi; ++i) yrow[i * s2 + off] += src[i];
            }
          }
        }
      }
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ferrite
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ferrite {

HWY_EXPORT(PackIm2Col);
HWY_EXPORT(FillWindows);
HWY_EXPORT(PackWindows);
HWY_EXPORT(UnpadWindows);
HWY_EXPORT(Col2Im);

bool conv_windows_fit(const ConvArgs& a) {
  for (int d = 0; d < 3; ++d)
    if (a.stride[d] > a.in[d] + a.pad_begin[d] + a.pad_end[d]) return false;
  return true;
}

ConvWindows conv_windows(const ConvArgs& a) {
  ConvWindows w;
  w.plane = 1;
  int64_t phases = 1;
  for (int d = 0; d < 3; ++d) {
    const int64_t padded = a.in[d] + a.pad_begin[d] + a.pad_end[d];
    w.len[d] = (padded + a.stride[d] - 1) / a.stride[d];
    w.plane *= w.len[d];
    phases *= a.stride[d];
  }
  w.channel = phases * w.plane;
  w.cols = ((a.out[0] - 1) * w.len[1] + a.out[1] - 1) * w.len[2] + a.out[2];
  w.offsets.reserve(static_cast<size_t>(a.c_in_group() * a.kernel_size()));
  for (int64_t c = 0; c < a.c_in_group(); ++c)
    for (int64_t j0 = 0; j0 < a.kernel[0]; ++j0)
      for (int64_t j1 = 0; j1 < a.kernel[1]; ++j1)
        for (int64_t j2 = 0; j2 < a.kernel[2]; ++j2) {
          // Tap t[d] = j[d] * dilation[d] lies in phase t % stride, t / stride positions on.
          const int64_t t0 = j0 * a.dilation[0], t1 = j1 * a.dilation[1], t2 = j2 * a.dilation[2];
          const int64_t phase =
              ((t0 % a.stride[0]) * a.stride[1] + t1 % a.stride[1]) * a.stride[2] +
              t2 % a.stride[2];
          w.offsets.push_back(c * w.channel + phase * w.plane +
                              ((t0 / a.stride[0]) * w.len[1] + t1 / a.stride[1]) * w.len[2] +
                              t2 / a.stride[2]);
        }
  return w;
}

void conv_windows_fill_f32(const ConvArgs& a, const ConvWindows& w, const float* x, int64_t c0,
                           int64_t c1, float* dst) {
  HWY_DYNAMIC_DISPATCH(FillWindows)(a, w, x, c0, c1, dst);
}

void conv_pack_windows_f32(const void* source, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                           int64_t nr, float* dst) {
  HWY_DYNAMIC_DISPATCH(PackWindows)
  (*static_cast<const WindowsSource*>(source), p0, kc, j0, nc, nr, dst);
}

void conv_windows_unpad_f32(const ConvArgs& a, const ConvWindows& w, const float* c,
                            const Epilogue* post_ops, int64_t m0, int64_t m1, float* y) {
  HWY_DYNAMIC_DISPATCH(UnpadWindows)(a, w, c, post_ops, m0, m1, y);
}

void conv_pack_im2col_f32(const void* source, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                          int64_t nr, float* dst) {
  HWY_DYNAMIC_DISPATCH(PackIm2Col)
  (*static_cast<const Im2ColSource*>(source), p0, kc, j0, nc, nr, dst);
}

void conv_col2im_add_f32(const ConvArgs& a, const float* col, int64_t r0, int64_t r1, float* y) {
  HWY_DYNAMIC_DISPATCH(Col2Im)(a, col, r0, r1, y);
}

}  // namespace ferrite
#endif  // HWY_ONCE
