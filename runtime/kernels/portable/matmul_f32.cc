#include "runtime/kernels/portable/matmul_f32.h"

#include <algorithm>

#include "compiler/plan/error.h"
#include "runtime/following_epilogue.h"
#include "runtime/kernels/portable/epilogue.h"
#include "runtime/kernels/portable/gemm_f32.h"
#include "runtime/kernels/portable/parallel.h"
#include "runtime/kernels/portable/shared_panels.h"
#include "runtime/kernels/reference/matmul.h"
#include "runtime/kernels/reference/operand_checks.h"
#include "runtime/kernels/reference/post_ops_apply.h"

namespace ferrite {
namespace {

bool all_zero(const std::vector<int64_t>& v) {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 0; });
}

// Fills `e` with the post-ops of batch item `bi` as an epilogue over its C[i, j]: each
// operand's batch offset applied, its last two strides as the row and column strides.
void fill_epilogue(const ExternCall& call, const ExternBuffer* inputs, const MatMulArgs& m,
                   int64_t bi, Epilogue* e) {
  e->ops = call.post_ops.data();
  e->op_count = call.post_ops.size();
  e->operands.resize(e->op_count);
  for (size_t k = 0; k < e->op_count; ++k) {
    const PostOp& p = call.post_ops[k];
    if (!post_op_is_binary(p.kind)) continue;
    const TensorRef& t = call.inputs[static_cast<size_t>(p.input)];
    const size_t rank = t.shape.size();
    int64_t offset = t.offset, rest = bi;
    for (size_t d = m.batch.size(); d-- > 0;) {
      offset += rest % m.batch[d] * t.strides[d];
      rest /= m.batch[d];
    }
    e->operands[k] = {static_cast<const float*>(inputs[p.input].data) + offset, t.strides[rank - 2],
                      t.strides[rank - 1]};
  }
}

// The dims a run will see, from the call alone (zeros for a call run() will reject).
struct Dims {
  int64_t m = 0, k = 0, n = 0, batches = 0;
  bool b_shared = false, b_unit_cols = false;
};

Dims dims_of(const ExternCall& call) {
  Dims d;
  if (op_input_count(call) != 2) return d;
  const TensorRef &a = call.inputs[0], &b = call.inputs[1];
  const size_t rank = a.shape.size();
  if (rank < 2 || b.shape.size() != rank || b.strides.size() != rank) return d;
  d.m = a.shape[rank - 2];
  d.k = a.shape[rank - 1];
  d.n = b.shape[rank - 1];
  d.batches = 1;
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (a.shape[i] < 0 || __builtin_mul_overflow(d.batches, a.shape[i], &d.batches)) return {};
  }
  d.b_shared = all_zero(std::vector<int64_t>(b.strides.begin(), b.strides.end() - 2));
  d.b_unit_cols = b.strides[rank - 1] == 1;
  return d;
}

class PortableMatMul : public PreparedExtern {
 public:
  PortableMatMul(const ExternCall& call, const std::vector<ExternBuffer>& constants,
                 const std::vector<PackedInput>& packed, int threads, PackedStore* store)
      : call_(call), threads_(std::max(threads, 1)) {
    const Dims d = dims_of(call);
    row_grouped_ = d.m == 1;
    if (is_constant_input(constants, 1)) pack_weight(constants[1], packed, store);
    if (!call.post_ops.empty() && d.batches > 0) {
      epilogues_.resize(static_cast<size_t>(d.batches));
      for (Epilogue& e : epilogues_) e.operands.resize(call.post_ops.size());
    }
    scratch_floats_ = layout(d, nullptr).floats();
  }

  // A packed B is never read again.
  std::vector<size_t> constants_copied() const override {
    return w_packed_ ? std::vector<size_t>{1} : std::vector<size_t>{};
  }

  std::vector<PackedConstant> packed_inputs() const override {
    if (!w_packed_) return {};
    PackedConstant c;
    c.input = 1;
    const std::vector<PackedOperand>& w = w_packs();
    c.layout = gemm_f32_packed_layout(kWhat, 'B', w[0].rows, w[0].cols, 1, row_grouped_);
    c.bytes = gemm_f32_packed_bytes(w, 'B');
    return {std::move(c)};
  }
  size_t packed_inputs_adopted() const override { return adopted_; }

  size_t scratch_bytes() const override { return scratch_floats_ * sizeof(float); }
  void bind_scratch(void* scratch) override { scratch_.bind(scratch, scratch_bytes()); }

  void run(const ExternBuffer* inputs, const ExternBuffer* outputs) override {
    const MatMulArgs m = parse_matmul(call_, inputs, outputs);
    check_post_ops(call_, inputs, outputs);
    if (m.m == 0 || m.n == 0) return;
    const int64_t batches = m.batch_count();
    if (m.k == 0) return zero_product(m, batches, inputs, outputs);
    Dims d;
    d.m = m.m;
    d.k = m.k;
    d.n = m.n;
    d.batches = batches;
    d.b_shared = all_zero(m.lb.batch_strides);
    d.b_unit_cols = m.lb.col_stride == 1;
    Offsets at;
    const ScratchLayout l = layout(d, &at);
    float* scratch = scratch_.get(l.floats());
    const PackedOperand* packed_b = shared_b(m, at.shared_b ? scratch + at.shared_b_at : nullptr);
    if (!call_.post_ops.empty()) {
      epilogues_.resize(static_cast<size_t>(batches));
      for (int64_t bi = 0; bi < batches; ++bi)
        fill_epilogue(call_, inputs, m, bi, &epilogues_[static_cast<size_t>(bi)]);
    }
    auto item = [&](int64_t bi) {
      int64_t oa, ob, oc;
      m.batch_offsets(bi, &oa, &ob, &oc);
      GemmF32 g;
      g.a = m.a + oa;
      g.a_rs = m.la.row_stride;
      g.a_cs = m.la.col_stride;
      g.b = m.b ? m.b + ob : nullptr;  // null: freed, packed_b is used
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
      g.epilogue = epilogues_.empty() ? nullptr : &epilogues_[static_cast<size_t>(bi)];
      return g;
    };
    float* gemm_scratch = scratch + at.gemm_at;
    if (at.per_item) {  // whole batch items per thread, each in its own part of the scratch
      parallel_parts(threads_, threads_, [&](int64_t part) {
        float* mine = gemm_scratch + static_cast<size_t>(part) * at.gemm_slot;
        for (int64_t bi = batches * part / threads_; bi < batches * (part + 1) / threads_; ++bi)
          gemm_f32(item(bi), 1, mine);
      });
    } else {
      for (int64_t bi = 0; bi < batches; ++bi) gemm_f32(item(bi), threads_, gemm_scratch);
    }
  }

 private:
  // Where run() puts things in its scratch.
  struct Offsets {
    bool shared_b = false;  // B packed once per run for every batch item
    size_t shared_b_at = 0;
    bool per_item = false;  // threads take whole batch items
    size_t gemm_at = 0, gemm_slot = 0;
  };

  ScratchLayout layout(const Dims& d, Offsets* out) const {
    Offsets at;
    ScratchLayout l;
    if (d.batches <= 0 || d.m <= 0 || d.n <= 0 || d.k <= 0) return l;
    // A shared B is packed per run unless it is the packed weight or few rows read it in place.
    const bool read_in_place = d.b_unit_cols && d.m <= gemm_f32_geometry().in_place_b_max_m;
    at.shared_b = d.b_shared && d.batches >= 2 && !w_packed_ && !read_in_place;
    if (at.shared_b) at.shared_b_at = l.add(gemm_f32_packed_b_floats(d.k, d.n));
    GemmF32 g;
    g.m = d.m;
    g.n = d.n;
    g.k = d.k;
    at.per_item = threads_ > 1 && d.batches >= threads_;
    at.gemm_slot = gemm_f32_scratch_floats(g, at.per_item ? 1 : threads_);
    at.gemm_at = l.add(at.gemm_slot * static_cast<size_t>(at.per_item ? threads_ : 1));
    if (out) *out = at;
    return l;
  }

  // An empty sum: C = 0 (A and B have no elements to point at), then the post-ops.
  void zero_product(const MatMulArgs& m, int64_t batches, const ExternBuffer* inputs,
                    const ExternBuffer* outputs) {
    for (int64_t bi = 0; bi < batches; ++bi) {
      int64_t oa, ob, oc;
      m.batch_offsets(bi, &oa, &ob, &oc);
      for (int64_t i = 0; i < m.m; ++i)
        for (int64_t j = 0; j < m.n; ++j)
          m.c[oc + i * m.lc.row_stride + j * m.lc.col_stride] = 0.0f;
    }
    apply_post_ops(call_, inputs, outputs);
  }

  // A constant B that is one matrix for every batch item (batch strides 0) is packed now,
  // once; a bad view is left for run to report, as the reference would.
  void pack_weight(const ExternBuffer& buffer, const std::vector<PackedInput>& packed,
                   PackedStore* store) {
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
    const int64_t k = rb.shape[rank - 2], n = rb.shape[rank - 1];
    for (const PackedInput& p : packed) {
      if (p.input == 1 && gemm_f32_adopt_packed(p.layout, p.data, p.size, kWhat, 'B', k, n,
                                                &packed_weight_, row_grouped_)) {
        adopted_ = 1;
        w_packed_ = true;
        weight_ = static_cast<const float*>(buffer.data);
        return;
      }
    }
    if (!buffer.data) {  // held only packed, for another target: the Session reports it
      return;
    }
    weight_ = static_cast<const float*>(buffer.data);
    w_packed_ = true;
    std::string key;  // in the store the model's sessions share, when there is one
    if (store) {
      key = panels_key(gemm_f32_packed_layout(kWhat, 'B', k, n, 1, row_grouped_), buffer, rb);
      if ((shared_weight_ = store->find<std::vector<PackedOperand>>(key))) return;
    }
    gemm_f32_pack_b(weight_ + rb.offset, rb.strides[rank - 2], rb.strides[rank - 1], k, n,
                    &packed_weight_[0], nullptr, row_grouped_);
    if (store)
      shared_weight_ = share_panels(store, key, &packed_weight_, gemm_f32_packed_b_floats(k, n));
  }

  // The packed B: its own, or the store's.
  const std::vector<PackedOperand>& w_packs() const {
    return shared_weight_ ? *shared_weight_ : packed_weight_;
  }

  // B packed for every batch item, when it is one matrix for all: the weight packed at
  // prepare (again if the dispatch target changed since), or packed now into `dst` when the
  // layout reserved room for that.
  const PackedOperand* shared_b(const MatMulArgs& m, float* dst) {
    if (!all_zero(m.lb.batch_strides)) return nullptr;
    // A null B is the constant the Session freed after prepare (constants_copied).
    if (w_packed_ && (m.b == weight_ || !m.b)) {
      if (!gemm_f32_packed_usable(&w_packs()[0], m.k, m.n)) {
        if (!m.b) fail("MatMul: B was freed after packing for another SIMD target");
        shared_weight_.reset();  // never written: packed again into its own (shared_panels.h)
        gemm_f32_pack_b(m.b + m.lb.offset, m.lb.row_stride, m.lb.col_stride, m.k, m.n,
                        &packed_weight_[0], nullptr, row_grouped_);
      }
      return &w_packs()[0];
    }
    const float* b = m.b + m.lb.offset;
    if (!dst) return nullptr;
    gemm_f32_pack_b(b, m.lb.row_stride, m.lb.col_stride, m.k, m.n, &packed_shared_, dst);
    return &packed_shared_;
  }

  const ExternCall& call_;
  int threads_;
  const float* weight_ = nullptr;  // B's buffer when it is a plan constant (null: packed only)
  bool w_packed_ = false;          // packed_weight_ holds B
  bool row_grouped_ = false;       // packed for one-row products (PackedOperand::row_grouped)
  static constexpr const char* kWhat = "matmul";
  std::vector<PackedOperand> packed_weight_ = std::vector<PackedOperand>(1);
  SharedPanels shared_weight_;  // or the store's (w_packs)
  size_t adopted_ = 0;
  PackedOperand packed_shared_;
  std::vector<Epilogue> epilogues_;  // one per batch item, refilled each run
  size_t scratch_floats_ = 0;
  Scratch scratch_;
};

}  // namespace

std::unique_ptr<PreparedExtern> prepare_portable_matmul(const ExternCall& call,
                                                        const std::vector<ExternBuffer>& constants,
                                                        const std::vector<PackedInput>& packed,
                                                        int threads, PackedStore* store) {
  check_chain_epilogue(call);
  return std::make_unique<PortableMatMul>(call, constants, packed, threads, store);
}

bool portable_matmul_streams_weights(const ExternCall& call,
                                     const std::vector<ExternBuffer>& constants) {
  const Dims d = dims_of(call);
  return d.m == 1 && d.k > 0 && d.b_shared && is_constant_input(constants, 1);
}

}  // namespace ferrite
