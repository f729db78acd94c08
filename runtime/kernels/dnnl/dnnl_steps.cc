#include "runtime/kernels/dnnl/dnnl_steps.h"

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "compiler/plan/error.h"
#include "runtime/kernels/dnnl/dnnl_one_thread.h"
#include "runtime/kernels/portable/thread_budget.h"
#include "runtime/kernels/portable/thread_pool.h"

namespace ferrite {
namespace onednn {

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

ThreadScope::ThreadScope(int threads) : saved_(omp_get_max_threads()) {
  omp_set_num_threads(std::max(threads, 1));
}

ThreadScope::~ThreadScope() {
  omp_set_num_threads(saved_);
}

Dims dense_strides(const Dims& dims, const std::vector<int>& order) {
  Dims strides(dims.size(), 1);
  int64_t stride = 1;
  for (size_t i = order.size(); i-- > 0;) {
    strides[static_cast<size_t>(order[i])] = stride;
    stride *= std::max<int64_t>(dims[static_cast<size_t>(order[i])], 1);
  }
  return strides;
}

std::vector<int> row_major_order(size_t n) {
  std::vector<int> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<int>(i);
  return order;
}

std::vector<int> channels_last_order(size_t n) {
  std::vector<int> order{0};
  for (size_t i = 2; i < n; ++i) order.push_back(static_cast<int>(i));
  if (n > 1) order.push_back(1);
  return order;
}

bool same_layout(const Dims& dims, const Dims& a, const Dims& b) {
  for (size_t d = 0; d < dims.size(); ++d)
    if (dims[d] != 1 && a[d] != b[d]) return false;
  return true;
}

dnnl::memory::desc f32_desc(const Dims& dims, const Dims& strides) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

bool plain_strides(const dnnl::memory::desc& d, Dims* strides) {
  if (d.data.format_kind != dnnl_blocked || d.data.format_desc.blocking.inner_nblks != 0)
    return false;
  const auto& s = d.data.format_desc.blocking.strides;
  strides->assign(s, s + d.data.ndims);
  return true;
}

bool worth_using(const std::string& impl, bool is_conv, bool binary_post_ops) {
  if (impl.find("ref") != std::string::npos) return false;
  if (!is_conv && impl.rfind("gemm:jit", 0) == 0) return false;
  return !(is_conv && binary_post_ops && impl.find("gemm") != std::string::npos);
}

namespace {

void append_dims(std::string* s, const char* name, const dnnl_dim_t* d, int n) {
  *s += str_cat(" ", name);
  for (int i = 0; i < n; ++i) *s += str_cat(i ? "," : "=", d[i]);
}

}  // namespace

std::string desc_layout(const dnnl::memory::desc& d) {
  const dnnl_memory_desc_t& m = d.data;
  std::string s = str_cat("onednn ", DNNL_VERSION_MAJOR, ".", DNNL_VERSION_MINOR, ".",
                          DNNL_VERSION_PATCH, " type ", static_cast<int>(m.data_type));
  append_dims(&s, "dims", m.dims, m.ndims);
  append_dims(&s, "padded", m.padded_dims, m.ndims);
  append_dims(&s, "offsets", m.padded_offsets, m.ndims);
  s += str_cat(" offset0 ", m.offset0, " kind ", static_cast<int>(m.format_kind));
  if (m.format_kind == dnnl_blocked) {
    const dnnl_blocking_desc_t& b = m.format_desc.blocking;
    append_dims(&s, "strides", b.strides, m.ndims);
    append_dims(&s, "blocks", b.inner_blks, b.inner_nblks);
    append_dims(&s, "block_dims", b.inner_idxs, b.inner_nblks);
  } else if (m.format_kind == dnnl_format_kind_wino) {
    const dnnl_wino_desc_t& w = m.format_desc.wino_desc;
    s += str_cat(" wino ", static_cast<int>(w.wino_format), " r ", w.r, " alpha ", w.alpha, " ic ",
                 w.ic, " oc ", w.oc, " blocks ", w.ic_block, ",", w.oc_block, ",", w.ic2_block, ",",
                 w.oc2_block, " scale ", static_cast<double>(w.adj_scale), " size ", w.size);
  } else {
    return "";
  }
  s += str_cat(" extra ", m.extra.flags, " bytes ", d.get_size());
  return s;
}

dnnl::primitive_attr user_scratchpad_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

dnnl::memory DnnlSteps::bind(const dnnl::memory::desc& d, bool output, size_t index,
                             int64_t offset) {
  dnnl::memory m(d, cpu_engine(), DNNL_MEMORY_NONE);
  const auto size = static_cast<int64_t>(dnnl::memory::data_type_size(d.data_type()));
  bindings_.push_back(Binding{m, output, index, offset * size});
  return m;
}

dnnl::memory DnnlSteps::own(const dnnl::memory::desc& d) {
  owned_.emplace_back(d, cpu_engine());
  return owned_.back();
}

dnnl::memory DnnlSteps::scratch(const dnnl::memory::desc& d) {
  dnnl::memory m(d, cpu_engine(), DNNL_MEMORY_NONE);
  scratch_.push_back(Scratch{m, 0});
  return m;
}

namespace {

// The view's own descriptor, for reorders: a dim of extent 1 is never stepped, so its stride
// is free; a positive one keeps every stride valid for oneDNN.
dnnl::memory::desc view_desc(const View& v) {
  Dims strides = v.strides;
  for (size_t d = 0; d < strides.size(); ++d)
    if (v.dims[d] == 1) strides[d] = 1;
  return dnnl::memory::desc(v.dims, v.type, strides);
}

}  // namespace

dnnl::memory DnnlSteps::input(const View& v, const dnnl::memory::desc& want, size_t index,
                              const ExternBuffer* constant) {
  Dims want_strides;
  if (want.data_type() == v.type && plain_strides(want, &want_strides) &&
      same_layout(v.dims, v.strides, want_strides))
    return bind(want, false, index, v.offset);
  if (constant) {
    const std::string layout = desc_layout(want);
    dnnl::memory copy = packed_constant(v, want, index, *constant, layout);
    copied_.push_back(index);
    packed_out_.push_back(Packed{index, layout, copy});
    return copy;
  }
  dnnl::memory copy = scratch(want);
  add_reorder(bind(view_desc(v), false, index, v.offset), copy);
  return copy;
}

dnnl::memory DnnlSteps::output(const View& v, const dnnl::memory::desc& want, size_t index,
                               dnnl::memory* copy_back) {
  *copy_back = dnnl::memory();
  Dims want_strides;
  if (want.data_type() == v.type && plain_strides(want, &want_strides) &&
      same_layout(v.dims, v.strides, want_strides))
    return bind(want, true, index, v.offset);
  *copy_back = bind(view_desc(v), true, index, v.offset);
  return scratch(want);
}

dnnl::memory DnnlSteps::packed_constant(const View& v, const dnnl::memory::desc& want, size_t index,
                                        const ExternBuffer& constant, const std::string& layout) {
  PackedStore* store = packed_ ? packed_->store : nullptr;
  if (!store || layout.empty() || !constant.data) {
    dnnl::memory copy = own(want);
    pack(v, constant, index, layout, copy);
    return copy;
  }
  PackedSource source{constant.data, constant.dtype, constant.elements,
                      v.dims,        v.strides,      v.offset};
  const std::string key = PackedStore::key(layout, source);
  std::shared_ptr<const PackedBytes> bytes = store->find<PackedBytes>(key);
  if (!bytes) {
    auto fresh = std::make_shared<PackedBytes>();
    fresh->size = want.get_size();
    fresh->bytes = aligned_alloc_bytes(fresh->size);
    pack(v, constant, index, layout, dnnl::memory(want, cpu_engine(), fresh->bytes.get()));
    store->insert(key, fresh, fresh->size);
    bytes = std::move(fresh);
  }
  shared_.push_back(bytes);
  // oneDNN only reads weights: the store's bytes are never written after they are packed.
  return dnnl::memory(want, cpu_engine(), const_cast<uint8_t*>(bytes->bytes.get()));
}

void DnnlSteps::pack(const View& v, const ExternBuffer& constant, size_t index,
                     const std::string& layout, const dnnl::memory& to) {
  if (adopt(index, layout, to)) return;
  // Held only packed, in another layout (another machine's, or the portable backend's):
  // oneDNN declines the call, and the backend's fallback may take the packed form.
  if (!constant.data) throw dnnl::error(dnnl_invalid_arguments, "packed layout differs");
  uint8_t* base = static_cast<uint8_t*>(constant.data) +
                  v.offset * static_cast<int64_t>(dnnl::memory::data_type_size(v.type));
  dnnl::memory from(view_desc(v), cpu_engine(), base);
  dnnl::memory dst = to;  // a handle: execute takes non-const ones
  dnnl::reorder(from, dst).execute(stream_, from, dst);
  stream_.wait();
}

bool DnnlSteps::adopt(size_t index, const std::string& layout, const dnnl::memory& to) {
  if (!packed_ || layout.empty()) return false;
  const size_t bytes = to.get_desc().get_size();
  for (const PackedInput& p : packed_->plan) {
    if (p.input != index || p.layout != layout || p.size != bytes) continue;
    std::memcpy(to.get_data_handle(), p.data, bytes);
    ++adopted_;
    return true;
  }
  return false;
}

std::vector<PackedConstant> DnnlSteps::packed_inputs() const {
  std::vector<PackedConstant> out;
  for (const Packed& p : packed_out_) {
    if (p.layout.empty()) continue;
    const uint8_t* data = static_cast<const uint8_t*>(p.memory.get_data_handle());
    PackedConstant c;
    c.input = static_cast<int32_t>(p.index);
    c.layout = p.layout;
    c.bytes.assign(data, data + p.memory.get_desc().get_size());
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<size_t> DnnlSteps::constants_copied() const {
  std::vector<size_t> out;
  for (size_t index : copied_) {
    bool read = false;
    for (const Binding& b : bindings_) read = read || (!b.output && b.index == index);
    if (!read && std::find(out.begin(), out.end(), index) == out.end()) out.push_back(index);
  }
  return out;
}

void DnnlSteps::add_copy(const View& v, size_t index, const dnnl::memory& to) {
  add_reorder(bind(view_desc(v), false, index, v.offset), to);
}

void DnnlSteps::add(const dnnl::primitive& p, const dnnl::memory::desc& scratchpad, Args args) {
  steps_.push_back(Step{p, scratchpad, std::move(args), dnnl::primitive(), Args()});
}

void DnnlSteps::add_reorder(const dnnl::memory& from, const dnnl::memory& to) {
  dnnl::reorder::primitive_desc pd(cpu_engine(), from.get_desc(), cpu_engine(), to.get_desc(),
                                   user_scratchpad_attr());
  add(dnnl::reorder(pd), pd.scratchpad_desc(), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
}

namespace {

constexpr size_t kAlign = 64;

size_t aligned(size_t bytes) {
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

}  // namespace

void DnnlSteps::finish() {
  packed_ = nullptr;  // the caller's list lives only through prepare
  // The copies one after another, then the scratchpad, which the steps share (they run one
  // at a time).
  size_t bytes = 0;
  for (Scratch& s : scratch_) {
    s.offset = bytes;
    bytes += aligned(s.memory.get_desc().get_size());
  }
  size_t scratchpad = 0;
  for (const Step& s : steps_) scratchpad = std::max(scratchpad, s.scratchpad.get_size());
  for (Step& s : steps_) {
    if (s.scratchpad.get_size() == 0) continue;
    dnnl::memory m(s.scratchpad, cpu_engine(), DNNL_MEMORY_NONE);
    s.args[DNNL_ARG_SCRATCHPAD] = m;
    scratch_.push_back(Scratch{m, bytes});
  }
  scratchpad_at_ = bytes;
  scratchpad_room_ = aligned(scratchpad);
  scratch_bytes_ = bytes + scratchpad_room_;
}

void DnnlSteps::bind_scratch(void* arena) {
  arena_ = static_cast<uint8_t*>(arena);
  for (Scratch& s : scratch_) s.memory.set_data_handle(arena_ + s.offset);
  bound_ = true;
}

size_t DnnlSteps::one_thread_steps() const {
  size_t n = 0;
  for (const Step& s : steps_) n += s.one ? 1 : 0;
  return n;
}

void DnnlSteps::make_one_thread() {
  one_made_ = true;
  ThreadScope scope(1);
  for (Step& s : steps_) {
    dnnl::memory::desc pad;
    dnnl::primitive one;
    try {
      one = remake_primitive(s.primitive, &pad);
    } catch (const dnnl::error&) {
      continue;  // this step keeps its threads
    }
    if (!one || pad.get_size() > scratchpad_room_) continue;
    s.one_args = s.args;
    s.one_args.erase(DNNL_ARG_SCRATCHPAD);
    if (pad.get_size() > 0) {
      dnnl::memory m(pad, cpu_engine(), DNNL_MEMORY_NONE);
      if (arena_) m.set_data_handle(arena_ + scratchpad_at_);
      s.one_args[DNNL_ARG_SCRATCHPAD] = m;
      scratch_.push_back(Scratch{m, scratchpad_at_});
    }
    s.one = one;
  }
}

void DnnlSteps::run(const ExternBuffer* inputs, const ExternBuffer* outputs) {
  if (!bound_ && scratch_bytes_ > 0) {
    own_arena_ = aligned_alloc_bytes(scratch_bytes_);
    bind_scratch(own_arena_.get());
  }
  for (Binding& b : bindings_) {
    const ExternBuffer& buf = b.output ? outputs[b.index] : inputs[b.index];
    b.memory.set_data_handle(static_cast<uint8_t*>(buf.data) + b.offset);
  }
  // Idle pool workers would take the cores oneDNN's OpenMP threads are about to use.
  pool_rest();
  const bool one = threads_ > 1 && budget_threads(threads_) == 1;
  if (one && !one_made_) make_one_thread();
  ThreadScope scope(one ? 1 : threads_);
  ParallelStepClock clock(one ? 1 : threads_);
  for (Step& s : steps_) {
    if (one && s.one) {
      s.one.execute(stream_, s.one_args);
    } else {
      s.primitive.execute(stream_, s.args);
    }
  }
  stream_.wait();
}

void SteppedExtern::run(const ExternBuffer* inputs, const ExternBuffer* outputs) {
  check(inputs, outputs);  // the shared parsers: the same checks and messages everywhere
  try {
    steps_.run(inputs, outputs);
  } catch (const dnnl::error& e) {
    fail(extern_op_name(call_.op), ": oneDNN: ", e.what());
  }
}

}  // namespace onednn
}  // namespace ferrite
