// Loads and stores of the block interpreter. An affine access whose first and last lane
// are in bounds is a contiguous copy (stride 1), or a strided gather/scatter; anything
// else (div/mod or indirect indices, masked blocks that leave the buffer) computes each
// lane's index and checks it, so no lane ever touches memory outside its arg. Masked-out
// lanes are neither checked nor loaded (they read as 0).
#include <cstring>
#include <type_traits>

#include "compiler/plan/wrapping.h"
#include "runtime/kernels/portable/block_executor.h"
#include "runtime/kernels/portable/block_lanes.h"

namespace ferrite {
namespace portable {
namespace {

// floordiv/mod as index_expr.h defines them, made total (x / -1 cannot overflow here).
int64_t safe_floordiv(int64_t a, int64_t b) {
  if (b == -1) return wrap_mul(a, -1);
  return floordiv64(a, b);
}
int64_t safe_mod(int64_t a, int64_t b) {
  return b == -1 ? 0 : mod64(a, b);
}

bool block_in_bounds(int64_t start, int64_t stride, int len, int64_t elements) {
  int64_t span, last;
  if (__builtin_mul_overflow(stride, static_cast<int64_t>(len - 1), &span) ||
      __builtin_add_overflow(start, span, &last))
    return false;
  return start >= 0 && start < elements && last >= 0 && last < elements;
}

template <class F>
void binary_step(int64_t* a, const int64_t* b, int n, F f) {
  for (int l = 0; l < n; ++l) a[l] = f(a[l], b[l]);
}

}  // namespace

bool BlockExecutor::affine_start(const AffineIndex& f, int64_t* start, int64_t* stride) const {
  const int lane = p_.lane_var;
  int64_t s = f.offset, t;
  for (size_t v = 0; v < f.coeff.size(); ++v) {
    if (static_cast<int>(v) == lane || f.coeff[v] == 0) continue;
    if (__builtin_mul_overflow(f.coeff[v], vars_[v], &t) || __builtin_add_overflow(s, t, &s))
      return false;
  }
  *stride = lane >= 0 ? f.coeff[lane] : 0;
  if (__builtin_mul_overflow(*stride, j0_, &t) || __builtin_add_overflow(s, t, &s)) return false;
  *start = s;
  return true;
}

const int64_t* BlockExecutor::lane_indices(const LaneIndex& li) {
  int64_t* stack = reinterpret_cast<int64_t*>(idx_.get());
  if (li.affine) {  // only reached when the fast path could not prove the block in bounds
    const int lane = p_.lane_var;
    int64_t base = li.form.offset;
    for (size_t v = 0; v < li.form.coeff.size(); ++v)
      if (static_cast<int>(v) != lane) base = wrap_add(base, wrap_mul(li.form.coeff[v], vars_[v]));
    const int64_t stride = lane >= 0 ? li.form.coeff[lane] : 0;
    for (int l = 0; l < len_; ++l) stack[l] = wrap_add(base, wrap_mul(stride, j0_ + l));
    return stack;
  }
  int sp = 0;
  for (const IndexStep& s : li.steps) {
    int64_t* top = stack + static_cast<size_t>(sp) * kBlock;
    switch (s.kind) {
      case IndexStep::Const:
        std::fill_n(top, len_, s.c);
        break;
      case IndexStep::Uniform:
        std::fill_n(top, len_, eval_index(*s.node, vars_.data(), uival_.data()));
        break;
      case IndexStep::LaneVar:
        for (int l = 0; l < len_; ++l) top[l] = j0_ + l;
        break;
      case IndexStep::Value:
        std::memcpy(top, slot<int64_t>(s.id), len_ * sizeof(int64_t));
        break;
      default: {
        int64_t* a = top - 2 * kBlock;
        const int64_t* b = top - kBlock;
        if (s.kind == IndexStep::Add) binary_step(a, b, len_, wrap_add);
        if (s.kind == IndexStep::Mul) binary_step(a, b, len_, wrap_mul);
        if (s.kind == IndexStep::FloorDiv) binary_step(a, b, len_, safe_floordiv);
        if (s.kind == IndexStep::Mod) binary_step(a, b, len_, safe_mod);
        sp -= 2;  // two operands become one result
      }
    }
    ++sp;
  }
  return stack;
}

void BlockExecutor::lane_load(int i) {
  const Instr& in = p_.k.code[i];
  const KernelArg& arg = p_.k.args[in.arg];
  const LaneIndex& li = p_.indices[p_.info[i].index];
  const int32_t* mask = in.mask >= 0 ? slot<int32_t>(in.mask) : nullptr;
  const void* base = args_[in.arg];
  void* out = slot<void>(i);
  int64_t start = 0, stride = 0;
  if (li.affine && affine_start(li.form, &start, &stride) &&
      block_in_bounds(start, stride, len_, arg.elements)) {
    with_storage(arg.dtype, [&](auto tag) {
      using S = Storage<decltype(tag)::value>;
      const auto* src = static_cast<const typename S::Mem*>(base) + start;
      auto* dst = static_cast<typename S::Lane*>(out);
      if (stride == 1 && std::is_same<typename S::Mem, typename S::Lane>::value) {
        std::memcpy(dst, src, len_ * sizeof(*dst));
      } else if (stride == 1) {  // a widening loop the compiler vectorizes
        for (int l = 0; l < len_; ++l) dst[l] = S::load(src[l]);
      } else {
        for (int l = 0; l < len_; ++l) dst[l] = S::load(src[l * stride]);
      }
      if (mask)  // a select, not a branch per lane
        for (int l = 0; l < len_; ++l) dst[l] = mask[l] ? dst[l] : typename S::Lane{0};
    });
    return;
  }
  const int64_t* idx = lane_indices(li);
  with_storage(arg.dtype, [&](auto tag) {
    using S = Storage<decltype(tag)::value>;
    const auto* src = static_cast<const typename S::Mem*>(base);
    auto* dst = static_cast<typename S::Lane*>(out);
    for (int l = 0; l < len_; ++l) {
      if (mask && !mask[l]) {
        dst[l] = 0;
        continue;
      }
      if (idx[l] < 0 || idx[l] >= arg.elements) out_of_bounds(in, idx[l]);
      dst[l] = S::load(src[idx[l]]);
    }
  });
}

void BlockExecutor::lane_store(int i) {
  const Instr& in = p_.k.code[i];
  const KernelArg& arg = p_.k.args[in.arg];
  const LaneIndex& li = p_.indices[p_.info[i].index];
  void* base = args_[in.arg];
  const void* value = slot<void>(in.a);
  int64_t start = 0, stride = 0;
  if (li.affine && affine_start(li.form, &start, &stride) &&
      block_in_bounds(start, stride, len_, arg.elements)) {
    with_storage(arg.dtype, [&](auto tag) {
      using S = Storage<decltype(tag)::value>;
      auto* dst = static_cast<typename S::Mem*>(base) + start;
      const auto* src = static_cast<const typename S::Lane*>(value);
      if (stride == 1 && std::is_same<typename S::Mem, typename S::Lane>::value) {
        std::memcpy(dst, src, len_ * sizeof(*src));
      } else if (stride == 1) {  // a narrowing loop the compiler vectorizes
        for (int l = 0; l < len_; ++l) dst[l] = S::store(src[l]);
      } else {
        for (int l = 0; l < len_; ++l) dst[l * stride] = S::store(src[l]);
      }
    });
    return;
  }
  const int64_t* idx = lane_indices(li);
  with_storage(arg.dtype, [&](auto tag) {
    using S = Storage<decltype(tag)::value>;
    auto* dst = static_cast<typename S::Mem*>(base);
    const auto* src = static_cast<const typename S::Lane*>(value);
    for (int l = 0; l < len_; ++l) {
      if (idx[l] < 0 || idx[l] >= arg.elements) out_of_bounds(in, idx[l]);
      dst[idx[l]] = S::store(src[l]);
    }
  });
}

}  // namespace portable
}  // namespace ferrite
