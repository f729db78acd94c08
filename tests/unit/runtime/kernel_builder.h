// Test helper: builds Kernels by hand (the scheduler's job in the product) and runs them on
// a named backend, so backend tests read as the computation they check.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/plan/kernel.h"
#include "compiler/plan/scalar_ops.h"
#include "runtime/backend.h"
#include "runtime/kernels/portable/simd_f32.h"
#include "runtime/tensor.h"
#include "tests/unit/compiler/plan/test_plans.h"

namespace ferrite {
namespace testing {

inline Index V(int var) {
  return ix_var(var);
}
inline Index C(int64_t c) {
  return ix_const(c);
}
inline Index Add(Index a, Index b) {
  return ix_binary(IndexKind::Add, a, b);
}
inline Index Mul(Index a, Index b) {
  return ix_binary(IndexKind::Mul, a, b);
}
inline Index Div(Index a, Index b) {
  return ix_binary(IndexKind::FloorDiv, a, b);
}
inline Index Mod(Index a, Index b) {
  return ix_binary(IndexKind::Mod, a, b);
}
// offset + sum(stride_v * var_v) over the listed (var, stride) pairs.
inline Index Affine(std::vector<std::pair<int, int64_t>> terms, int64_t offset = 0) {
  Index e = C(offset);
  for (auto& t : terms) e = Add(e, Mul(V(t.first), C(t.second)));
  return e;
}

class KernelBuilder {
 public:
  explicit KernelBuilder(std::vector<int64_t> ranges, int num_reduce = 0) {
    k_.name = "test";
    k_.ranges = std::move(ranges);
    k_.num_reduce = num_reduce;
  }

  int arg(DType dtype, int64_t elements, bool output = false) {
    k_.args.push_back(KernelArg{dtype, elements, output});
    return static_cast<int>(k_.args.size()) - 1;
  }
  ScalarType type(int id) const { return k_.code[id].type; }

  int load(int arg, Index index, int mask = -1) {
    Instr in = make(Op::Load, compute_type(k_.args[arg].dtype));
    in.arg = arg;
    in.index = std::move(index);
    in.mask = mask;
    return emit(in);
  }
  void store(int arg, Index index, int value) {
    Instr in = make(Op::Store, type(value), value);
    in.arg = arg;
    in.index = std::move(index);
    emit(in);
  }
  int constant(ScalarType t, double v) {
    Instr in = make(Op::Const, t);
    in.fimm = v;
    in.iimm = static_cast<int64_t>(v);
    return emit(in);
  }
  int unary(Op op, int a) { return emit(make(op, op_result_type(op, type(a)), a)); }
  int binary(Op op, int a, int b) { return emit(make(op, op_result_type(op, type(a)), a, b)); }
  int where(int c, int a, int b) { return emit(make(Op::Where, type(a), c, a, b)); }
  int cast(ScalarType t, int a) { return emit(make(Op::Cast, t, a)); }
  int loop_var(int v) {
    Instr in = make(Op::LoopVar, ScalarType::I64);
    in.arg = v;
    return emit(in);
  }
  int check_index(int a, int64_t n, const std::string& message, int mask = -1) {
    Instr in = make(Op::CheckIndex, ScalarType::I64, a);
    in.iimm = n;
    in.mask = mask;
    in.arg = static_cast<int>(k_.messages.size());
    k_.messages.push_back(message);
    return emit(in);
  }
  int reduce(ReduceKind kind, int a) {
    const bool arg = kind == ReduceKind::ArgMax || kind == ReduceKind::ArgMin;
    Instr in = make(Op::Reduce, arg ? ScalarType::I64 : type(a), a);
    in.reduce = kind;
    return emit(in);
  }
  // Ends the current inner loop of a reduction kernel's body: what follows runs in the next
  // loop, once this one went over every reduction point (Kernel::loop_ends).
  void end_loop() { k_.loop_ends.push_back(static_cast<int32_t>(k_.code.size())); }
  // Starts the post phase (reduction kernels), ending the last inner loop.
  void post() {
    k_.post_begin = static_cast<int>(k_.code.size());
    if (!k_.loop_ends.empty()) k_.loop_ends.push_back(k_.post_begin);
  }

  Kernel build() {
    if (k_.num_reduce == 0) k_.post_begin = static_cast<int>(k_.code.size());
    validate_kernel(k_);
    return k_;
  }

 private:
  static Instr make(Op op, ScalarType t, int a = -1, int b = -1, int c = -1) {
    return plan_test::instr(op, t, a, b, c);
  }
  int emit(const Instr& in) {
    k_.code.push_back(in);
    return static_cast<int>(k_.code.size()) - 1;
  }

  Kernel k_;
};

// Runs f() once per SIMD target this build has and this CPU runs (portable backend
// dispatch pinned to it), then restores the default.
template <class F>
void for_each_simd_target(F f) {
  for (const std::string& target : simd::available_targets()) {
    SCOPED_TRACE("target " + target);
    simd::pin_target(target);
    f();
  }
  simd::pin_target("");
}

// A 1-D tensor holding `values` converted to `dtype` (as store_element does).
template <class T>
Tensor make_tensor(DType dtype, const std::vector<T>& values) {
  Tensor t(dtype, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) {
    Scalar s;
    ScalarType from;
    if (std::is_same<T, float>::value) {
      s = scalar_f32(static_cast<float>(values[i]));
      from = ScalarType::F32;
    } else if (std::is_same<T, double>::value) {
      s = scalar_f64(static_cast<double>(values[i]));
      from = ScalarType::F64;
    } else {
      s = scalar_i64(static_cast<int64_t>(values[i]));
      from = ScalarType::I64;
    }
    store_element(dtype, t.data(), static_cast<int64_t>(i), from, s);
  }
  return t;
}

inline Tensor zeros(DType dtype, int64_t n) {
  return Tensor(dtype, {n});
}

// A vector of move-only tensors (an initializer list would need copies).
template <class... T>
std::vector<Tensor> tensors(T&&... ts) {
  std::vector<Tensor> v;
  v.reserve(sizeof...(ts));
  (v.push_back(std::forward<T>(ts)), ...);
  return v;
}

inline Tensor copy_of(const Tensor& t) {
  return Tensor(t.dtype(), t.shape(), t.data());
}

// Runs `k` on `backend` over copies of `buffers` (one per kernel arg); returns them.
inline std::vector<Tensor> run_kernel(const std::string& backend, const Kernel& k,
                                      const std::vector<Tensor>& buffers) {
  std::vector<Tensor> out;
  std::vector<void*> args;
  for (const Tensor& t : buffers) out.push_back(copy_of(t));
  for (Tensor& t : out) args.push_back(t.data());
  make_backend(backend)->prepare(k)->run(args.data());
  return out;
}

inline float f32_at(const Tensor& t, int64_t i) {
  return load_element(t.dtype(), t.data(), i).f32;
}

// Element-wise comparison of two f32 tensors: NaN matches NaN, infinities must match,
// otherwise |a - b| <= max(abs_tol, ulps * 2^-23 * max(|a|, |b|)).
inline void expect_close(const Tensor& want, const Tensor& got, double ulps, double abs_tol,
                         const std::string& what) {
  ASSERT_EQ(want.elements(), got.elements()) << what;
  int reported = 0;
  for (int64_t i = 0; i < want.elements() && reported < 5; ++i) {
    const double a = f32_at(want, i), b = f32_at(got, i);
    bool ok;
    if (std::isnan(a) || std::isnan(b)) {
      ok = std::isnan(a) && std::isnan(b);
    } else if (std::isinf(a) || std::isinf(b)) {
      ok = a == b;
    } else {
      const double tol =
          std::max(abs_tol, ulps * std::ldexp(1.0, -23) * std::max(std::fabs(a), std::fabs(b)));
      ok = std::fabs(a - b) <= tol;
    }
    if (!ok) {
      ++reported;
      ADD_FAILURE() << what << ": element " << i << " want " << a << " got " << b;
    }
  }
}

// Byte-exact equality (integer, bool, f64 kernels are exact on every backend).
inline void expect_same_bytes(const Tensor& want, const Tensor& got, const std::string& what) {
  ASSERT_EQ(want.nbytes(), got.nbytes()) << what;
  EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.nbytes())) << what;
}

}  // namespace testing
}  // namespace ferrite
