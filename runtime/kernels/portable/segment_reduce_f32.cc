#include "runtime/kernels/portable/segment_reduce_f32.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "compiler/plan/error.h"
#include "compiler/plan/externs/segment_reduce_call.h"
#include "runtime/following_epilogue.h"
#include "runtime/kernels/portable/epilogue.h"
#include "runtime/kernels/portable/parallel.h"
#include "runtime/kernels/reference/post_ops_apply.h"
#include "runtime/kernels/reference/segment_reduce.h"

namespace ferrite {
namespace {

// The destination-sorted edges, and the indices they were built from (to tell whether
// the next run's src and dst are the same).
struct Csr {
  std::vector<int64_t> row_ptr, edge, src;
  std::vector<int64_t> built_src, built_dst;  // the raw indices, as read
  int64_t rows = -1, nodes = -1;
};

// The indices of `ref` as int64, unnormalized (what the cache compares).
void read_indices(const TensorRef& ref, const ExternBuffer& buf, std::vector<int64_t>* out) {
  const int64_t n = ref.shape[0], stride = ref.strides[0];
  out->resize(static_cast<size_t>(n));
  if (buf.dtype == DType::I64) {
    const auto* p = static_cast<const int64_t*>(buf.data) + ref.offset;
    for (int64_t e = 0; e < n; ++e) (*out)[static_cast<size_t>(e)] = p[e * stride];
  } else {
    const auto* p = static_cast<const int32_t*>(buf.data) + ref.offset;
    for (int64_t e = 0; e < n; ++e) (*out)[static_cast<size_t>(e)] = p[e * stride];
  }
}

void check_range(const std::vector<int64_t>& idx, int64_t n, const char* what) {
  for (size_t e = 0; e < idx.size(); ++e) {
    if (idx[e] < -n || idx[e] >= n)
      fail("SegmentReduce: ", what, "[", e, "] = ", idx[e], " is out of range [", -n, ", ", n, ")");
  }
}

// A stable counting sort of the edges by destination row: O(E + R).
void build(Csr* c, int64_t rows, int64_t nodes) {
  check_range(c->built_src, nodes, "src");
  check_range(c->built_dst, rows, "dst");
  const size_t edges = c->built_dst.size();
  c->row_ptr.assign(static_cast<size_t>(rows) + 1, 0);
  for (int64_t d : c->built_dst) ++c->row_ptr[static_cast<size_t>(d < 0 ? d + rows : d) + 1];
  for (size_t r = 0; r < static_cast<size_t>(rows); ++r) c->row_ptr[r + 1] += c->row_ptr[r];
  std::vector<int64_t> next(c->row_ptr.begin(), c->row_ptr.end() - 1);
  c->edge.resize(edges);
  c->src.resize(edges);
  for (size_t e = 0; e < edges; ++e) {
    const int64_t d = c->built_dst[e], s = c->built_src[e];
    const auto p = static_cast<size_t>(next[static_cast<size_t>(d < 0 ? d + rows : d)]++);
    c->edge[p] = static_cast<int64_t>(e);
    c->src[p] = s < 0 ? s + nodes : s;
  }
  c->rows = rows;
  c->nodes = nodes;
}

bool unit_rows(const TensorRef* r) {
  return !r || r->shape[1] <= 1 || r->strides[1] == 1;
}

class PortableSegmentReduce : public PreparedExtern {
 public:
  PortableSegmentReduce(const ExternCall& call, int threads, SegmentRowsFn rows,
                        std::string implementation)
      : call_(call),
        threads_(threads),
        rows_(std::move(rows)),
        implementation_(std::move(implementation)) {
    decode_segment_reduce_call(call);  // attributes fail at prepare, as on every backend
  }

  std::string implementation() const override { return implementation_; }

  void run(const ExternBuffer* inputs, const ExternBuffer* outputs) override {
    const SegmentOperands s = parse_segment_reduce(call_, inputs, outputs);
    if (s.x_buf.dtype != DType::F32 || !unit_rows(s.x) || !unit_rows(s.data) || !unit_rows(s.out)) {
      reference_segment_reduce(call_, inputs, outputs);
      return;
    }
    refresh_csr(s);
    portable::SegmentRows j;
    auto f32 = [](const ExternBuffer& b, const TensorRef* r) {
      return static_cast<float*>(b.data) + r->offset;
    };
    j.x = f32(s.x_buf, s.x);
    j.x_rs = s.x->strides[0];
    if (s.data) {
      j.data = f32(s.data_buf, s.data);
      j.data_rs = s.data->strides[0];
    }
    j.out = f32(s.out_buf, s.out);
    j.out_rs = s.out->strides[0];
    if (s.weight) {
      j.weight = f32(s.weight_buf, s.weight);
      j.weight_stride = s.weight->strides[0];
    }
    j.row_ptr = csr_.row_ptr.data();
    j.edge = csr_.edge.data();
    j.src = csr_.src.data();
    j.features = s.features;
    j.kind = static_cast<int>(s.kind);
    // Parts of about equal work (a row's edges, plus one for the row): the boundaries
    // depend on the thread count, but every row is computed the same way in any part.
    const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(threads_, s.rows));
    const int64_t total = s.edges + s.rows;
    auto boundary = [&](int64_t p) {
      if (p == parts) return s.rows;
      const int64_t target = total * p / parts;
      // The first row r whose start (edges before it plus r) reaches the target.
      int64_t lo = 0, hi = s.rows;
      while (lo < hi) {
        const int64_t mid = (lo + hi) / 2;
        if (csr_.row_ptr[static_cast<size_t>(mid)] + mid < target) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      return lo;
    };
    // The epilogue runs on a few rows at a time, right after their reduction, while they
    // are in cache.
    Epilogue e;
    if (!call_.post_ops.empty()) {
      check_post_ops(call_, inputs, outputs);
      e.ops = call_.post_ops.data();
      e.op_count = call_.post_ops.size();
      e.operands.resize(e.op_count);
      for (size_t k = 0; k < e.op_count; ++k) {
        const PostOp& po = call_.post_ops[k];
        if (!post_op_is_binary(po.kind)) continue;
        const TensorRef& t = call_.inputs[static_cast<size_t>(po.input)];
        e.operands[k] = {static_cast<const float*>(inputs[po.input].data) + t.offset, t.strides[0],
                         t.strides[1]};
      }
    }
    parallel_parts(threads_, parts, [&](int64_t p) {
      const int64_t r0 = boundary(p), r1 = boundary(p + 1);
      if (!e.active()) return rows_(j, r0, r1);
      constexpr int64_t kRows = 8;
      Epilogue part = e;
      part.shift(r0, 0);
      for (int64_t r = r0; r < r1; r += kRows) {
        const int64_t n = std::min(kRows, r1 - r);
        rows_(j, r, r + n);
        epilogue_apply_f32(part, j.out + r * j.out_rs, j.out_rs, n, j.features);
        part.shift(n, 0);
      }
    });
  }

 private:
  void refresh_csr(const SegmentOperands& s) {
    read_indices(*s.src, s.src_buf, &scratch_src_);
    read_indices(*s.dst, s.dst_buf, &scratch_dst_);
    if (csr_.rows == s.rows && csr_.nodes == s.nodes && scratch_src_ == csr_.built_src &&
        scratch_dst_ == csr_.built_dst)
      return;
    csr_.rows = -1;  // invalid until built (build throws on a bad index)
    std::swap(csr_.built_src, scratch_src_);
    std::swap(csr_.built_dst, scratch_dst_);
    build(&csr_, s.rows, s.nodes);
  }

  const ExternCall& call_;
  int threads_;
  SegmentRowsFn rows_;
  std::string implementation_;
  Csr csr_;
  std::vector<int64_t> scratch_src_, scratch_dst_;
};

}  // namespace

std::unique_ptr<PreparedExtern> prepare_segment_reduce_with(const ExternCall& call, int threads,
                                                            SegmentRowsFn rows,
                                                            std::string implementation) {
  check_chain_epilogue(call);
  return std::make_unique<PortableSegmentReduce>(call, threads, std::move(rows),
                                                 std::move(implementation));
}

std::unique_ptr<PreparedExtern> prepare_portable_segment_reduce(const ExternCall& call,
                                                                int threads) {
  return prepare_segment_reduce_with(call, threads, portable::segment_rows, "");
}

}  // namespace ferrite
