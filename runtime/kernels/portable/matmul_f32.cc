#include "runtime/kernels/portable/matmul_f32.h"

#include <algorithm>

#include "compiler/plan/error.h"
#include "runtime/kernels/portable/epilogue.h"
#include "runtime/kernels/portable/gemm_f32.h"
#include "runtime/kernels/portable/parallel.h"
#include "runtime/kernels/reference/extern_operands.h"
#include "runtime/kernels/reference/matmul.h"
#include "runtime/kernels/reference/post_ops_apply.h"

namespace ferrite {
namespace {

bool all_zero(const std::vector<int64_t>& v) {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 0; });
}

// The post-ops of batch item `bi` as an epilogue over its C[i, j]: each operand's batch
// offset applied, its last two strides as the row and column strides.
Epilogue item_epilogue(const ExternCall& call, const ExternBuffer* inputs, const MatMulArgs& m,
                       int64_t bi) {
  Epilogue e;
  e.ops = call.post_ops.data();
  e.op_count = call.post_ops.size();
  e.operands.resize(e.op_count);
  for (size_t k = 0; k < e.op_count; ++k) {
    const PostOp& p = call.post_ops[k];
    if (!post_op_is_binary(p.kind)) continue;
    const TensorRef& t = call.inputs[static_cast<size_t>(p.input)];
    const size_t rank = t.shape.size();
    int64_t offset = t.offset, rest = bi;
    for (size_t d = m.batch.size(); d-- > 0;) {
      offset += rest % m.batch[d] * t.strides[d];
      rest /= m.batch[d];
    }
    e.operands[k] = {static_cast<const float*>(inputs[p.input].data) + offset, t.strides[rank - 2],
                     t.strides[rank - 1]};
  }
  return e;
}

class PortableMatMul : public PreparedExtern {
 public:
  PortableMatMul(const ExternCall& call, const std::vector<ExternBuffer>& constants, int threads)
      : call_(call), threads_(std::max(threads, 1)), ws_(static_cast<size_t>(threads_)) {
    if (constants.size() >= 2 && constants[1].data) pack_weight(constants[1]);
  }

  void run(const ExternBuffer* inputs, const ExternBuffer* outputs) override {
    const MatMulArgs m = parse_matmul(call_, inputs, outputs);
    check_post_ops(call_, inputs, outputs);
    if (m.m == 0 || m.n == 0) return;
    const int64_t batches = m.batch_count();
    if (m.k == 0) {  // an empty sum: C = 0, and A and B have no elements to point at
      for (int64_t bi = 0; bi < batches; ++bi) {
        int64_t oa, ob, oc;
        m.batch_offsets(bi, &oa, &ob, &oc);
        for (int64_t i = 0; i < m.m; ++i)
          for (int64_t j = 0; j < m.n; ++j)
            m.c[oc + i * m.lc.row_stride + j * m.lc.col_stride] = 0.0f;
      }
      return apply_post_ops(call_, inputs, outputs);
    }
    const PackedOperand* packed_b = shared_b(m, batches);
    std::vector<Epilogue> epilogues;
    if (!call_.post_ops.empty())
      for (int64_t bi = 0; bi < batches; ++bi)
        epilogues.push_back(item_epilogue(call_, inputs, m, bi));
    auto item = [&](int64_t bi) {
      int64_t oa, ob, oc;
      m.batch_offsets(bi, &oa, &ob, &oc);
      GemmF32 g;
      g.a = m.a + oa;
      g.a_rs = m.la.row_stride;
      g.a_cs = m.la.col_stride;
      g.b = m.b + ob;
      g.b_rs = m.lb.row_stride;
      g.b_cs = m.lb.col_stride;
      g.b_packed = packed_b;
      g.c = m.c + oc;
      g.c_rs = m.lc.row_stride;
      g.c_cs = m.lc.col_stride;
      g.m = m.m;
      g.n = m.n;
      g.k = m.k;
      g.alpha = m.alpha;
      g.epilogue = epilogues.empty() ? nullptr : &epilogues[static_cast<size_t>(bi)];
      return g;
    };
    if (threads_ > 1 && batches >= threads_) {
      // Whole batch items per thread, each on its own workspace (reserved first: nothing may
      // throw inside the parallel region).
      for (GemmWorkspace& w : ws_) gemm_f32_reserve(item(0), 1, &w);
      parallel_parts(threads_, threads_, [&](int64_t part) {
        for (int64_t bi = batches * part / threads_; bi < batches * (part + 1) / threads_; ++bi)
          gemm_f32(item(bi), 1, &ws_[static_cast<size_t>(part)]);
      });
    } else {
      for (int64_t bi = 0; bi < batches; ++bi) gemm_f32(item(bi), threads_, &ws_[0]);
    }
  }

 private:
  // A constant B that is one matrix for every batch item (batch strides 0) is packed now,
  // once; a bad view is left for run to report, as the reference would.
  void pack_weight(const ExternBuffer& buffer) {
    if (call_.inputs.size() < 2) return;
    const TensorRef& rb = call_.inputs[1];
    const size_t rank = rb.shape.size();
    try {
      if (rank < 2) return;
      check_f32_view("MatMul", "B", rb, buffer, rank);
    } catch (const Error&) {
      return;
    }
    if (!all_zero(std::vector<int64_t>(rb.strides.begin(), rb.strides.end() - 2))) return;
    weight_ = static_cast<const float*>(buffer.data);
    gemm_f32_pack_b(weight_ + rb.offset, rb.strides[rank - 2], rb.strides[rank - 1],
                    rb.shape[rank - 2], rb.shape[rank - 1], &packed_weight_);
  }

  // B packed for every batch item, when it is one matrix for all: the weight packed at
  // prepare (again if the dispatch target changed since), or packed now for this run when
  // several items share it and the GEMM would pack it anyway.
  const PackedOperand* shared_b(const MatMulArgs& m, int64_t batches) {
    if (!all_zero(m.lb.batch_strides)) return nullptr;
    const float* b = m.b + m.lb.offset;
    if (weight_ && m.b == weight_) {
      if (!gemm_f32_packed_usable(&packed_weight_, m.k, m.n))
        gemm_f32_pack_b(b, m.lb.row_stride, m.lb.col_stride, m.k, m.n, &packed_weight_);
      return &packed_weight_;
    }
    const bool read_in_place = m.lb.col_stride == 1 && m.m <= 2 * gemm_f32_geometry().mr;
    if (batches < 2 || read_in_place) return nullptr;
    gemm_f32_pack_b(b, m.lb.row_stride, m.lb.col_stride, m.k, m.n, &packed_shared_);
    return &packed_shared_;
  }

  const ExternCall& call_;
  int threads_;
  std::vector<GemmWorkspace> ws_;  // one per thread
  const float* weight_ = nullptr;  // B's buffer when it is a plan constant
  PackedOperand packed_weight_, packed_shared_;
};

}  // namespace

std::unique_ptr<PreparedExtern> prepare_portable_matmul(const ExternCall& call,
                                                        const std::vector<ExternBuffer>& constants,
                                                        int threads) {
  return std::make_unique<PortableMatMul>(call, constants, threads);
}

void portable_matmul(const ExternCall& call, const ExternBuffer* inputs,
                     const ExternBuffer* outputs) {
  PortableMatMul(call, {}, 1).run(inputs, outputs);
}

}  // namespace ferrite
