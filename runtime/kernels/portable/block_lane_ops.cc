// Lane-wise value ops of the block interpreter. f32 goes through the Highway loops of
// simd_f32.h; i64 add/sub/mul/max/min, comparisons and bool logic are plain loops the compiler
// vectorizes; the rest (f64, casts, rare integer ops) applies scalar_ops lane by lane, which keeps
// them identical to the reference by construction.
#include <algorithm>
#include <limits>

#include "compiler/plan/interpret.h"
#include "runtime/kernels/portable/block_executor.h"
#include "runtime/kernels/portable/block_lanes.h"
#include "runtime/kernels/portable/simd_f32.h"

namespace ferrite {
namespace portable {
namespace {

bool vector_reduce(ReduceKind k) {
  return k == ReduceKind::Sum || k == ReduceKind::Prod || k == ReduceKind::Max ||
         k == ReduceKind::Min;
}

bool arg_reduce(ReduceKind k) {
  return k == ReduceKind::ArgMax || k == ReduceKind::ArgMin;
}

Op reduce_op(ReduceKind k) {
  switch (k) {
    case ReduceKind::Sum:
      return Op::Add;
    case ReduceKind::Prod:
      return Op::Mul;
    case ReduceKind::Max:
      return Op::Max;
    default:
      return Op::Min;
  }
}

uint64_t u(int64_t v) {
  return static_cast<uint64_t>(v);
}

// r[l] = f(a[l]) over two lane types chosen at run time.
template <class F>
void map_scalar1(ScalarType ta, ScalarType tr, const void* a, void* r, int n, F f) {
  with_lane_type(ta, [&](auto at) {
    with_lane_type(tr, [&](auto rt) {
      using A = decltype(at);
      using R = decltype(rt);
      const A* pa = static_cast<const A*>(a);
      R* pr = static_cast<R*>(r);
      for (int l = 0; l < n; ++l) unpack(f(pack(pa[l])), &pr[l]);
    });
  });
}

template <class F>
void map_scalar2(ScalarType ta, ScalarType tr, const void* a, const void* b, void* r, int n, F f) {
  with_lane_type(ta, [&](auto at) {
    with_lane_type(tr, [&](auto rt) {
      using A = decltype(at);
      using R = decltype(rt);
      const A* pa = static_cast<const A*>(a);
      const A* pb = static_cast<const A*>(b);
      R* pr = static_cast<R*>(r);
      for (int l = 0; l < n; ++l) unpack(f(pack(pa[l]), pack(pb[l])), &pr[l]);
    });
  });
}

// Integer and bool fast paths; false when op needs the generic path.
bool int_binary(Op op, const int64_t* a, const int64_t* b, void* out, int n) {
  int64_t* o = static_cast<int64_t*>(out);
  int32_t* ob = static_cast<int32_t*>(out);
  switch (op) {
    case Op::Add:
      for (int l = 0; l < n; ++l) o[l] = static_cast<int64_t>(u(a[l]) + u(b[l]));
      break;
    case Op::Sub:
      for (int l = 0; l < n; ++l) o[l] = static_cast<int64_t>(u(a[l]) - u(b[l]));
      break;
    case Op::Mul:
      for (int l = 0; l < n; ++l) o[l] = static_cast<int64_t>(u(a[l]) * u(b[l]));
      break;
    case Op::Max:  // integer pools (scalar_ops: a > b ? a : b)
      for (int l = 0; l < n; ++l) o[l] = a[l] > b[l] ? a[l] : b[l];
      break;
    case Op::Min:
      for (int l = 0; l < n; ++l) o[l] = a[l] < b[l] ? a[l] : b[l];
      break;
    case Op::Eq:
      for (int l = 0; l < n; ++l) ob[l] = a[l] == b[l];
      break;
    case Op::Lt:
      for (int l = 0; l < n; ++l) ob[l] = a[l] < b[l];
      break;
    case Op::Le:
      for (int l = 0; l < n; ++l) ob[l] = a[l] <= b[l];
      break;
    case Op::Gt:
      for (int l = 0; l < n; ++l) ob[l] = a[l] > b[l];
      break;
    case Op::Ge:
      for (int l = 0; l < n; ++l) ob[l] = a[l] >= b[l];
      break;
    case Op::BitAnd:
      for (int l = 0; l < n; ++l) o[l] = static_cast<int64_t>(u(a[l]) & u(b[l]));
      break;
    case Op::BitOr:
      for (int l = 0; l < n; ++l) o[l] = static_cast<int64_t>(u(a[l]) | u(b[l]));
      break;
    case Op::BitXor:
      for (int l = 0; l < n; ++l) o[l] = static_cast<int64_t>(u(a[l]) ^ u(b[l]));
      break;
    case Op::Shl:  // counts of 64 or more (or negative) give 0, as scalar_ops
      for (int l = 0; l < n; ++l)
        o[l] = u(b[l]) >= 64 ? 0 : static_cast<int64_t>(u(a[l]) << u(b[l]));
      break;
    case Op::Shr:
      for (int l = 0; l < n; ++l)
        o[l] = u(b[l]) >= 64 ? 0 : static_cast<int64_t>(u(a[l]) >> u(b[l]));
      break;
    default:
      return false;
  }
  return true;
}

bool bool_binary(Op op, const int32_t* a, const int32_t* b, int32_t* o, int n) {
  switch (op) {
    case Op::And:
      for (int l = 0; l < n; ++l) o[l] = a[l] & b[l];
      break;
    case Op::Or:
      for (int l = 0; l < n; ++l) o[l] = a[l] | b[l];
      break;
    case Op::Xor:
      for (int l = 0; l < n; ++l) o[l] = a[l] ^ b[l];
      break;
    default:
      return false;
  }
  return true;
}

}  // namespace

void BlockExecutor::eval_lane(int i) {
  const Instr& in = p_.k.code[i];
  switch (in.op) {
    case Op::Load:
      return lane_load(i);
    case Op::Store:
      return lane_store(i);
    case Op::LoopVar: {
      int64_t* o = slot<int64_t>(i);
      for (int l = 0; l < len_; ++l) o[l] = j0_ + l;
      return;
    }
    case Op::Cast:
      return lane_cast(i);
    case Op::CheckIndex:
      return lane_check(i);
    case Op::Where:
      return lane_where(i);
    case Op::Reduce:
      return lane_reduce(i);
    case Op::Const:
      return broadcast(i);  // not reached: Consts are Const level
    default:
      break;
  }
  if (op_arity(in.op) == 1) {
    lane_unary(i);
  } else {
    lane_binary(i);
  }
}

void BlockExecutor::lane_unary(int i) {
  const Instr& in = p_.k.code[i];
  const ScalarType t = p_.k.code[in.a].type;
  const size_t n = static_cast<size_t>(len_);
  if (t == ScalarType::F32) {
    if (in.op == Op::IsNaN || in.op == Op::IsInf) {
      simd::classify_f32(in.op, slot<float>(in.a), slot<int32_t>(i), n);
    } else {
      simd::unary_f32(in.op, slot<float>(in.a), slot<float>(i), n);
    }
    return;
  }
  if (t == ScalarType::Bool) {  // Not
    const int32_t* a = slot<int32_t>(in.a);
    int32_t* o = slot<int32_t>(i);
    for (int l = 0; l < len_; ++l) o[l] = a[l] ^ 1;
    return;
  }
  const Op op = in.op;
  map_scalar1(t, in.type, slot<void>(in.a), slot<void>(i), len_,
              [&](Scalar x) { return eval_unary(op, t, x); });
}

void BlockExecutor::lane_binary(int i) {
  const Instr& in = p_.k.code[i];
  const ScalarType t = p_.k.code[in.a].type;
  if (t == ScalarType::F32) {
    const size_t n = static_cast<size_t>(len_);
    if (op_is_compare(in.op)) {
      simd::compare_f32(in.op, slot<float>(in.a), slot<float>(in.b), slot<int32_t>(i), n);
    } else {
      simd::binary_f32(in.op, slot<float>(in.a), slot<float>(in.b), slot<float>(i), n);
    }
    return;
  }
  if (t == ScalarType::I64 &&
      int_binary(in.op, slot<int64_t>(in.a), slot<int64_t>(in.b), slot<void>(i), len_))
    return;
  if (t == ScalarType::Bool &&
      bool_binary(in.op, slot<int32_t>(in.a), slot<int32_t>(in.b), slot<int32_t>(i), len_))
    return;
  const Op op = in.op;
  map_scalar2(t, in.type, slot<void>(in.a), slot<void>(in.b), slot<void>(i), len_,
              [&](Scalar x, Scalar y) { return eval_binary(op, t, x, y); });
}

void BlockExecutor::lane_cast(int i) {
  const Instr& in = p_.k.code[i];
  const ScalarType from = p_.k.code[in.a].type, to = in.type;
  if (from == ScalarType::Bool && to == ScalarType::F32) {  // masks turned into numbers
    const int32_t* a = slot<int32_t>(in.a);
    float* o = slot<float>(i);
    for (int l = 0; l < len_; ++l) o[l] = a[l] ? 1.0f : 0.0f;
    return;
  }
  if (from == ScalarType::I64 && to == ScalarType::F32) {  // iota and index arithmetic
    const int64_t* a = slot<int64_t>(in.a);
    float* o = slot<float>(i);
    // A block of values inside int32 (8-bit data, indices) converts through int32 lanes,
    // which every SIMD target converts (int64 to float has no instruction before AVX-512).
    uint64_t outside = 0;
    for (int l = 0; l < len_; ++l) outside |= (u(a[l]) + 0x80000000u) >> 32;
    if (outside == 0) {
      for (int l = 0; l < len_; ++l) o[l] = static_cast<float>(static_cast<int32_t>(a[l]));
    } else {
      for (int l = 0; l < len_; ++l) o[l] = static_cast<float>(a[l]);
    }
    return;
  }
  if (from == ScalarType::F32 && to == ScalarType::I64) {  // quantizations
    // eval_cast's float_to_i64: NaN 0, saturated at +-2^63 (exact in float).
    const float* a = slot<float>(in.a);
    int64_t* o = slot<int64_t>(i);
    constexpr float kTwo63 = 9223372036854775808.0f, kTwo31 = 2147483648.0f;
    // A block inside int32 (no NaN: it fails the comparisons) converts through int32 lanes.
    int inside = 1;
    for (int l = 0; l < len_; ++l) inside &= (a[l] >= -kTwo31) & (a[l] < kTwo31);
    if (inside) {
      for (int l = 0; l < len_; ++l) o[l] = static_cast<int32_t>(a[l]);
      return;
    }
    for (int l = 0; l < len_; ++l) {
      const float x = a[l];
      o[l] = x != x        ? 0
             : x >= kTwo63 ? std::numeric_limits<int64_t>::max()
             : x < -kTwo63 ? std::numeric_limits<int64_t>::min()
                           : static_cast<int64_t>(x);
    }
    return;
  }
  map_scalar1(from, to, slot<void>(in.a), slot<void>(i), len_,
              [&](Scalar x) { return eval_cast(from, to, x); });
}

void BlockExecutor::lane_where(int i) {
  const Instr& in = p_.k.code[i];
  const int32_t* c = slot<int32_t>(in.a);
  if (in.type == ScalarType::F32) {
    simd::where_f32(c, slot<float>(in.b), slot<float>(in.c), slot<float>(i),
                    static_cast<size_t>(len_));
    return;
  }
  with_lane_type(in.type, [&](auto tag) {
    using T = decltype(tag);
    const T* a = slot<T>(in.b);
    const T* b = slot<T>(in.c);
    T* o = slot<T>(i);
    for (int l = 0; l < len_; ++l) o[l] = c[l] ? a[l] : b[l];
  });
}

void BlockExecutor::lane_check(int i) {
  const Instr& in = p_.k.code[i];
  const int64_t* a = slot<int64_t>(in.a);
  const int32_t* mask = in.mask >= 0 ? slot<int32_t>(in.mask) : nullptr;
  int64_t* o = slot<int64_t>(i);
  const int64_t n = in.iimm;
  for (int l = 0; l < len_; ++l) {
    if (mask && !mask[l]) {
      o[l] = 0;  // masked lanes are not checked (as in the reference)
      continue;
    }
    const int64_t v = a[l];
    if (v < -n || v >= n) fail_check_index(p_.k, in, v);
    o[l] = v < 0 ? v + n : v;
  }
}

bool BlockExecutor::pairwise(int i) const {
  const Instr& in = p_.k.code[i];
  const ScalarType t = p_.k.code[in.a].type;
  return in.reduce == ReduceKind::Sum && (t == ScalarType::F32 || t == ScalarType::F64);
}

void BlockExecutor::init_reduces(const std::vector<int>& reduces) {
  // reduce_f32 adds a block in 4 chains of n / (4 * lanes) vectors, folded with 2 more adds.
  const size_t lanes = simd::acc_lanes_used();
  leaf_blocks_ =
      std::max<int64_t>(1, kPairwiseLeaf / (p_.block / static_cast<int64_t>(4 * lanes) + 2));
  blocks_to_leaf_ = leaf_blocks_;
  for (int i : reduces) {
    const Instr& in = p_.k.code[i];
    const ScalarType t = p_.k.code[in.a].type;
    const Scalar id = reduce_identity(in.reduce, t);
    const bool fast = t == ScalarType::F32 && vector_reduce(in.reduce);
    if (pairwise(i)) {
      const size_t width = p_.lanes_outer ? static_cast<size_t>(len_) : fast ? lanes : 1;
      (t == ScalarType::F32 ? sum32_[i].reset(width) : sum64_[i].reset(width));
    }
    if (!p_.lanes_outer) {
      if (fast) {
        partials_[i].assign(simd::kAccLanes, id.f32);
      } else {
        acc_[i] = id;
        best_[i] = 0;
      }
      continue;
    }
    const bool arg = arg_reduce(in.reduce);
    with_lane_type(t, [&](auto tag) {
      using T = decltype(tag);
      T v;
      unpack(id, &v);
      std::fill_n(slot_at<T>(arg ? p_.info[i].acc_slot : p_.info[i].slot), fill_, v);
    });
    if (arg) std::fill_n(slot<int64_t>(i), fill_, int64_t{0});
  }
}

void BlockExecutor::push_block_leaves(const std::vector<int>& reduces) {
  blocks_to_leaf_ = leaf_blocks_;
  for (int i : reduces) {
    if (pairwise(i) && p_.k.code[i].type == ScalarType::F32) sum32_[i].push(partials_[i].data());
  }
}

void BlockExecutor::push_outer_leaves(const std::vector<int>& reduces, bool finish) {
  for (int i : reduces) {
    if (!pairwise(i)) continue;
    if (p_.k.code[i].type == ScalarType::F32) {
      finish ? sum32_[i].finish(slot<float>(i)) : sum32_[i].push(slot<float>(i));
    } else {
      finish ? sum64_[i].finish(slot<double>(i)) : sum64_[i].push(slot<double>(i));
    }
  }
}

void BlockExecutor::finish_reduces(const std::vector<int>& reduces) {
  for (int i : reduces) {
    const Instr& in = p_.k.code[i];
    const ScalarType t = p_.k.code[in.a].type;
    if (pairwise(i) && t == ScalarType::F32) {
      sum32_[i].finish(partials_[i].data());
    } else if (pairwise(i)) {
      double v = acc_[i].f64;
      sum64_[i].finish(&v);
      acc_[i] = scalar_f64(v);
    }
    Scalar r = acc_[i];
    if (arg_reduce(in.reduce)) {
      r = scalar_i64(best_[i]);
    } else if (t == ScalarType::F32 && vector_reduce(in.reduce)) {
      r = scalar_f32(simd::reduce_f32_finish(in.reduce, partials_[i].data()));
    }
    uval_[i] = r;
    uival_[i] = in.type == ScalarType::I64 ? r.i64 : 0;
    if (p_.info[i].broadcast) broadcast(i);
  }
}

void BlockExecutor::lane_reduce(int i) {
  const Instr& in = p_.k.code[i];
  const ScalarType t = p_.k.code[in.a].type;
  const ReduceKind kind = in.reduce;
  const bool fast = t == ScalarType::F32 && vector_reduce(kind);
  if (!p_.lanes_outer) {
    if (fast) {
      simd::reduce_f32(kind, slot<float>(in.a), static_cast<size_t>(len_), partials_[i].data());
      return;
    }
    const bool pairwise_f64 = pairwise(i);  // an f64 Sum: leaves as the reference's
    with_lane_type(t, [&](auto tag) {
      const auto* x = slot<decltype(tag)>(in.a);
      for (int l = 0; l < len_; ++l) {
        acc_[i] = reduce_step(kind, t, acc_[i], pack(x[l]), reduce_index_ + l, &best_[i]);
        if (pairwise_f64 && (reduce_index_ + l + 1) % kPairwiseLeaf == 0) {
          double v = acc_[i].f64;
          sum64_[i].push(&v);
          acc_[i] = scalar_f64(v);
        }
      }
    });
    return;
  }
  if (fast) {
    float* acc = slot<float>(i);
    simd::binary_f32(reduce_op(kind), acc, slot<float>(in.a), acc, static_cast<size_t>(len_));
    return;
  }
  const bool arg = arg_reduce(kind);
  int64_t* best = arg ? slot<int64_t>(i) : nullptr;
  with_lane_type(t, [&](auto tag) {
    using T = decltype(tag);
    const T* x = slot<T>(in.a);
    T* acc = slot_at<T>(arg ? p_.info[i].acc_slot : p_.info[i].slot);
    int64_t unused = 0;
    for (int l = 0; l < len_; ++l) {
      const Scalar r =
          reduce_step(kind, t, pack(acc[l]), pack(x[l]), reduce_index_, best ? &best[l] : &unused);
      unpack(r, &acc[l]);
    }
  });
}

}  // namespace portable
}  // namespace ferrite
