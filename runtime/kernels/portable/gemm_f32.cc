// The portable GEMM's driver (gemm_f32.h): the per-target blocking loops, compiled per target
// by foreach_target.h around the packing (gemm_pack-inl.h) and the microkernels
// (gemm_micro-inl.h); then, once, the dispatch, the packed-operand API and the split over
// threads.
#include "runtime/kernels/portable/gemm_f32.h"

#include <algorithm>
#include <cstring>

#include "compiler/plan/error.h"
#include "runtime/kernels/portable/parallel.h"
#include "runtime/kernels/portable/simd_f32.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "runtime/kernels/portable/gemm_f32.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "runtime/kernels/portable/gemm_micro-inl.h"
#include "runtime/kernels/portable/gemm_pack-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ferrite {
namespace HWY_NAMESPACE {
using namespace gemm;  // NOLINT: this file is the GEMM's per-target driver

// KC: the depth of a K block (the C tile is loaded and stored once per block). MC: rows of
// a packed A block (in L2). NC: columns of a packed B block, in panels.
constexpr int64_t kKC = 256;
constexpr int64_t kMC = 16 * kMR;
constexpr int64_t kNCFloats = 1024;
static_assert(kMC % kMR == 0, "A blocks are whole panels");

int64_t PanelWidth() {
  return kNV * static_cast<int64_t>(hn::Lanes(DF()));
}

// B with unit-stride rows is read in place when packing it would cost about as much as
// using it: GEMV-like products (each panel serves one or two tiles), and, when a panel's
// rows span 4 cache lines or more (AVX-512), any single block of A. Narrower panels read in
// place by a dozen tiles thrash L1 (B's rows, a large stride apart, fall into few sets):
// conv 1x1 256->64 on AVX2 ran at 53 GFLOP/s in place against 76 packed; on AVX-512, 105
// in place against 85.
int64_t InPlaceBMaxM(int64_t nr) {
  return nr * static_cast<int64_t>(sizeof(float)) >= 256 ? kMC : 2 * kMR;
}

GemmGeometry Geometry() {
  const int64_t nr = PanelWidth();
  GemmGeometry g;
  g.mr = kMR;
  g.nr = nr;
  g.kc = kKC;
  g.mc = kMC;
  g.nc = std::max<int64_t>(nr, kNCFloats / nr * nr);
  g.in_place_b_max_m = InPlaceBMaxM(nr);
  g.row_group = kRowPanels;
  return g;
}

int64_t RoundUp(int64_t x, int64_t m) {
  return (x + m - 1) / m * m;
}

// The columns of B held in row groups (PackedOperand::row_grouped): its whole groups.
int64_t GroupedColumns(int64_t n, int64_t nr) {
  return n / (kRowPanels * nr) * (kRowPanels * nr);
}

// B (k x n) packed whole: K block p0 holds its panels at dst + p0 * round_up(n, nr). A row
// group is a panel kRowPanels times as wide.
void PackWholeB(const float* b, int64_t rs, int64_t cs, int64_t k, int64_t n, float* dst,
                bool row_grouped) {
  const int64_t nr = PanelWidth(), n_pad = RoundUp(n, nr);
  const int64_t grouped = row_grouped ? GroupedColumns(n, nr) : 0;
  for (int64_t p0 = 0; p0 < k; p0 += kKC) {
    const int64_t kc = std::min(kKC, k - p0);
    float* block = dst + p0 * n_pad;
    if (grouped > 0) PackB(b + p0 * rs, rs, cs, kc, grouped, kRowPanels * nr, block);
    if (grouped < n)
      PackB(b + p0 * rs + grouped * cs, rs, cs, kc, n - grouped, nr, block + grouped * kc);
  }
}

// A (m x k) packed whole: K block p0 holds its panels at dst + p0 * round_up(m, kMR).
void PackWholeA(const float* a, int64_t rs, int64_t cs, int64_t m, int64_t k, float* dst) {
  const int64_t m_pad = RoundUp(m, kMR);
  for (int64_t p0 = 0; p0 < k; p0 += kKC)
    PackA(a + p0 * cs, rs, cs, m, std::min(kKC, k - p0), kMR, dst + p0 * m_pad, true);
}

// Where the panels of one K block of B come from: packed (prepacked, by the caller's packer
// or here) or read in place.
struct BSource {
  const float* block = nullptr;     // packed: panel q at block + q * kc * nr (in a row group: q's
                                    // group at that place, q's columns interleaved in it)
  int64_t first = 0;                // the column of `block` where the caller's columns start
  int64_t grouped = 0;              // columns [0, grouped) of `block` are in row groups
  const float* in_place = nullptr;  // else: B's element (p0, j0), rows `rs` apart
  int64_t rs = 0;
  const float* tail = nullptr;  // in place: the last, partial panel, packed

  // The panel at column jr of the block, w columns wide, and its step along k.
  const float* panel(int64_t jr, int64_t w, int64_t kc, int64_t nr, int64_t* k_step) const {
    *k_step = nr;
    if (block) {
      const int64_t j = first + jr, gw = kRowPanels * nr;
      if (j >= grouped) return block + (j / nr) * kc * nr;
      *k_step = gw;
      return block + (j / gw) * kc * gw + j % gw;
    }
    if (w < nr) return tail;
    *k_step = rs;
    return in_place + jr;
  }
};

BSource SourceOfB(const GemmF32& g, bool use_pb, bool direct_b, int64_t p0, int64_t kc, int64_t j0,
                  int64_t nc, int64_t nr, float* b_buf) {
  BSource src;
  if (use_pb) {
    src.block = g.b_packed->data + p0 * RoundUp(g.n, nr);
    src.first = j0;
    if (g.b_packed->row_grouped) src.grouped = GroupedColumns(g.n, nr);
  } else if (g.b_packer) {
    g.b_packer(g.b_ctx, p0, kc, j0, nc, nr, b_buf);
    src.block = b_buf;
  } else if (!direct_b) {
    PackB(g.b + p0 * g.b_rs + j0 * g.b_cs, g.b_rs, g.b_cs, kc, nc, nr, b_buf);
    src.block = b_buf;
  } else {
    src.in_place = g.b + p0 * g.b_rs + j0;
    src.rs = g.b_rs;
    if (nc % nr != 0) {
      const int64_t t0 = nc / nr * nr;
      PackB(src.in_place + t0, g.b_rs, 1, kc, nc - t0, nr, b_buf);
      src.tail = b_buf;
    }
  }
  return src;
}

// The tiles of C[i0 : i0 + mc, j0 : j0 + nc] over the K block [p0, p0 + kc): A's panels at
// a_block, B's from `src`; `epilogue` on the last K block.
void BlockTiles(const GemmF32& g, const float* a_block, const BSource& src, int64_t i0, int64_t mc,
                int64_t j0, int64_t nc, int64_t p0, int64_t kc, int64_t nr,
                const Epilogue* epilogue) {
  const bool in_registers = epilogue && epi::EpilogueInRegisters(*epilogue);
  auto tile = [&](int64_t ir, int64_t jr, int64_t w) {
    return TileC{g.c + (i0 + ir) * g.c_rs + (j0 + jr) * g.c_cs,
                 g.c_rs,
                 g.c_cs,
                 w,
                 g.alpha,
                 p0 > 0,
                 epilogue,
                 in_registers,
                 i0 + ir,
                 j0 + jr};
  };
  int64_t jr = 0;
  if (mc == 1) {  // a single row: kRowPanels whole panels at a time
    for (; jr + kRowPanels * nr <= nc; jr += kRowPanels * nr) {
      const float* bp[kRowPanels];
      TileC t[kRowPanels];
      int64_t b_ks[kRowPanels];
      for (int q = 0; q < kRowPanels; ++q) {
        bp[q] = src.panel(jr + q * nr, nr, kc, nr, &b_ks[q]);
        t[q] = tile(0, jr + q * nr, nr);
      }
      // Past the row groups of a grouped B the panels step along k differently: those
      // after the last whole run take the loop below.
      if (b_ks[kRowPanels - 1] != b_ks[0]) break;
      MicroRow<kNV>(kc, a_block, bp, b_ks[0], t);
    }
  }
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(DF()));
  for (; jr < nc; jr += nr) {
    const int64_t w = std::min(nr, nc - jr), nv = (w + lanes - 1) / lanes;
    int64_t b_ks = 0;
    const float* bp = src.panel(jr, w, kc, nr, &b_ks);
    for (int64_t ir = 0; ir < mc; ir += kMR) {
      const int64_t h = std::min<int64_t>(kMR, mc - ir);
      MicroFor(h, nv)(kc, a_block + (ir / kMR) * kc * kMR, bp, b_ks, tile(ir, jr, w));
    }
  }
}

// C[i_begin:i_end, j_begin:j_end] of g, whole. Prepacked operands need i_begin and j_begin
// on panel boundaries (the thread split keeps them there).
void GemmBlock(const GemmF32& g, bool use_pa, bool use_pb, int64_t i_begin, int64_t i_end,
               int64_t j_begin, int64_t j_end, float* a_buf, float* b_buf) {
  const GemmGeometry geo = Geometry();
  const int64_t m_pad = RoundUp(g.m, kMR);
  // Decided on the whole product, never on a thread's block.
  const bool direct_b = !use_pb && !g.b_packer && g.b_cs == 1 && g.m <= InPlaceBMaxM(geo.nr);
  const Epilogue* epilogue = g.epilogue && g.epilogue->active() ? g.epilogue : nullptr;
  for (int64_t j0 = j_begin; j0 < j_end; j0 += geo.nc) {
    const int64_t nc = std::min(geo.nc, j_end - j0);
    for (int64_t p0 = 0; p0 < g.k; p0 += kKC) {
      const int64_t kc = std::min(kKC, g.k - p0);
      const BSource src = SourceOfB(g, use_pb, direct_b, p0, kc, j0, nc, geo.nr, b_buf);
      for (int64_t i0 = i_begin; i0 < i_end; i0 += kMC) {
        const int64_t mc = std::min(kMC, i_end - i0);
        const float* a_block = a_buf;
        if (use_pa) {
          a_block = g.a_packed->data + p0 * m_pad + (i0 / kMR) * kc * kMR;
        } else {
          PackA(g.a + i0 * g.a_rs + p0 * g.a_cs, g.a_rs, g.a_cs, mc, kc, kMR, a_buf, false);
        }
        BlockTiles(g, a_block, src, i0, mc, j0, nc, p0, kc, geo.nr,
                   p0 + kc == g.k ? epilogue : nullptr);
      }
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ferrite
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ferrite {

HWY_EXPORT(Geometry);
HWY_EXPORT(PackWholeA);
HWY_EXPORT(PackWholeB);
HWY_EXPORT(GemmBlock);

namespace {

int64_t round_up(int64_t x, int64_t m) {
  return (x + m - 1) / m * m;
}

// Below this many multiply-adds a second thread costs more than it saves.
constexpr int64_t kMinParallelWork = int64_t{1} << 18;

}  // namespace

GemmGeometry gemm_f32_geometry() {
  return HWY_DYNAMIC_DISPATCH(Geometry)();
}

size_t gemm_f32_packed_a_floats(int64_t m, int64_t k) {
  return static_cast<size_t>(round_up(m, gemm_f32_geometry().mr) * k);
}

size_t gemm_f32_packed_b_floats(int64_t k, int64_t n) {
  return static_cast<size_t>(k * round_up(n, gemm_f32_geometry().nr));
}

void gemm_f32_pack_a(const float* a, int64_t a_rs, int64_t a_cs, int64_t m, int64_t k,
                     PackedOperand* out, float* dst) {
  out->geometry = gemm_f32_geometry();
  out->rows = m;
  out->cols = k;
  if (!dst) dst = out->owned.reserve(gemm_f32_packed_a_floats(m, k));
  out->data = dst;
  if (m > 0 && k > 0) HWY_DYNAMIC_DISPATCH(PackWholeA)(a, a_rs, a_cs, m, k, dst);
}

void gemm_f32_pack_b(const float* b, int64_t b_rs, int64_t b_cs, int64_t k, int64_t n,
                     PackedOperand* out, float* dst, bool row_grouped) {
  out->geometry = gemm_f32_geometry();
  out->rows = k;
  out->cols = n;
  out->row_grouped = row_grouped;
  if (!dst) dst = out->owned.reserve(gemm_f32_packed_b_floats(k, n));
  out->data = dst;
  if (k > 0 && n > 0) HWY_DYNAMIC_DISPATCH(PackWholeB)(b, b_rs, b_cs, k, n, dst, row_grouped);
}

bool gemm_f32_packed_usable(const PackedOperand* p, int64_t rows, int64_t cols) {
  return p && p->data && p->rows == rows && p->cols == cols && p->geometry == gemm_f32_geometry();
}

namespace {

size_t packed_floats(char kind, int64_t rows, int64_t cols) {
  return kind == 'A' ? gemm_f32_packed_a_floats(rows, cols) : gemm_f32_packed_b_floats(rows, cols);
}

}  // namespace

std::string gemm_f32_packed_layout(const std::string& what, char kind, int64_t rows, int64_t cols,
                                   size_t count, bool row_grouped) {
  const GemmGeometry g = gemm_f32_geometry();
  return str_cat("portable ", simd::target_name(), " ", what, " ", kind, " ", rows, "x", cols, " x",
                 count, " mr ", g.mr, " nr ", g.nr, " kc ", g.kc, " mc ", g.mc, " nc ", g.nc,
                 row_grouped ? str_cat(" row groups ", g.row_group) : std::string());
}

bool gemm_f32_adopt_packed(const std::string& layout, const uint8_t* bytes, size_t size,
                           const std::string& what, char kind, int64_t rows, int64_t cols,
                           std::vector<PackedOperand>* out, bool row_grouped) {
  const size_t count = out->size(), floats = packed_floats(kind, rows, cols);
  if (layout != gemm_f32_packed_layout(what, kind, rows, cols, count, row_grouped) ||
      size != count * floats * sizeof(float))
    return false;
  for (size_t i = 0; i < count; ++i) {
    PackedOperand& p = (*out)[i];
    p.geometry = gemm_f32_geometry();
    p.rows = rows;
    p.cols = cols;
    p.row_grouped = row_grouped;
    float* dst = p.owned.reserve(floats);
    std::memcpy(dst, bytes + i * floats * sizeof(float), floats * sizeof(float));
    p.data = dst;
  }
  return true;
}

std::vector<uint8_t> gemm_f32_packed_bytes(const std::vector<PackedOperand>& ops, char kind) {
  std::vector<uint8_t> out;
  for (const PackedOperand& p : ops) {
    const size_t bytes = packed_floats(kind, p.rows, p.cols) * sizeof(float);
    const uint8_t* from = reinterpret_cast<const uint8_t*>(p.data);
    out.insert(out.end(), from, from + bytes);
  }
  return out;
}

namespace {

// How gemm_f32 splits C over threads: `parts` blocks of whole panels, along the columns when
// there are enough of them (each thread then packs all of A: M x K against its M x K x N / T
// multiply-adds), else along the rows.
struct Split {
  int64_t parts = 1;
  bool cols = true;
};

Split split_for(const GemmF32& g, const GemmGeometry& geo, int threads) {
  Split s;
  const int64_t col_panels = (g.n + geo.nr - 1) / geo.nr, row_panels = (g.m + geo.mr - 1) / geo.mr;
  if (threads <= 1 || g.m * g.n * g.k < kMinParallelWork) return s;
  if (col_panels >= threads || col_panels >= row_panels) {
    s.parts = std::min<int64_t>(threads, col_panels);
  } else {
    s.parts = std::min<int64_t>(threads, row_panels);
    s.cols = false;
  }
  return s;
}

// One thread's packing blocks: A (MC x KC) then B (KC x NC), each 64-byte aligned.
struct SlotLayout {
  size_t a = 0, b = 0, total = 0;
};

SlotLayout slot_layout(const GemmF32& g, const GemmGeometry& geo) {
  const int64_t kc = std::min(geo.kc, g.k);
  ScratchLayout l;
  SlotLayout s;
  s.a = l.add(static_cast<size_t>(round_up(std::min(geo.mc, g.m), geo.mr) * kc));
  s.b = l.add(static_cast<size_t>(kc * round_up(std::min(geo.nc, g.n), geo.nr)));
  s.total = l.floats();
  return s;
}

}  // namespace

size_t gemm_f32_scratch_floats(const GemmF32& g, int threads) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) return 0;
  const GemmGeometry geo = gemm_f32_geometry();
  return static_cast<size_t>(split_for(g, geo, threads).parts) * slot_layout(g, geo).total;
}

void gemm_f32(const GemmF32& g, int threads, float* scratch) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) return;
  const GemmGeometry geo = gemm_f32_geometry();
  const bool use_pa = gemm_f32_packed_usable(g.a_packed, g.m, g.k);
  const bool use_pb = !g.b_packer && gemm_f32_packed_usable(g.b_packed, g.k, g.n);
  const Split split = split_for(g, geo, threads);
  const SlotLayout slot = slot_layout(g, geo);
  FloatBuffer local;
  if (!scratch) scratch = local.reserve(static_cast<size_t>(split.parts) * slot.total);
  const int64_t col_panels = (g.n + geo.nr - 1) / geo.nr, row_panels = (g.m + geo.mr - 1) / geo.mr;
  parallel_parts(threads, split.parts, [&](int64_t part) {
    int64_t i0 = 0, i1 = g.m, j0 = 0, j1 = g.n;
    if (split.cols) {
      j0 = std::min(g.n, col_panels * part / split.parts * geo.nr);
      j1 = std::min(g.n, col_panels * (part + 1) / split.parts * geo.nr);
    } else {
      i0 = std::min(g.m, row_panels * part / split.parts * geo.mr);
      i1 = std::min(g.m, row_panels * (part + 1) / split.parts * geo.mr);
    }
    float* mine = scratch + static_cast<size_t>(part) * slot.total;
    HWY_DYNAMIC_DISPATCH(GemmBlock)
    (g, use_pa, use_pb, i0, i1, j0, j1, mine + slot.a, mine + slot.b);
  });
}

}  // namespace ferrite
#endif  // HWY_ONCE
