// Random kernels for the loop normalisation tests: loads and stores through random chains
// of views (permute, slice, broadcast, reshape: tests/unit/support/random_views.h) over
// random shapes with size-1 dims, simplified as the kernel builder does, with pointwise
// bodies, reductions (one or two inner loops, body stores), gathers, masked loads, LoopVars,
// and stores that may hit one element twice or read what another point writes.
// run_reference runs a kernel on the reference interpreter.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/loopir/simplify.h"
#include "compiler/plan/interpret.h"
#include "compiler/plan/kernel.h"
#include "compiler/plan/scalar_ops.h"
#include "tests/unit/support/random_views.h"

namespace ferrite {
namespace loopnorm_test {

using Bytes = std::vector<std::vector<uint8_t>>;
using test_support::dense_index;
using test_support::elements;
using test_support::View;

class RandomKernels {
 public:
  explicit RandomKernels(uint32_t seed) : rng_(seed) {}

  Kernel make() {
    k_ = Kernel();
    k_.name = "random";
    const int outer = pick(0, 3), reduce = chance(0.4) ? pick(1, 2) : 0;
    do {
      k_.ranges.clear();
      for (int d = 0; d < outer + reduce; ++d) k_.ranges.push_back(pick_range());
    } while (elements(k_.ranges) > 1024);
    k_.num_reduce = reduce;
    reduce == 0 ? pointwise() : reduction();
    validate_kernel(k_);
    return k_;
  }

  // Random contents for every arg (gather index args hold in-range indices).
  Bytes inputs(const Kernel& k) {
    Bytes b(k.args.size());
    for (size_t a = 0; a < k.args.size(); ++a) {
      const KernelArg& arg = k.args[a];
      b[a].assign(static_cast<size_t>(arg.elements) * dtype_size(arg.dtype), 0);
      const bool ties = chance(0.3);
      for (int64_t i = 0; i < arg.elements; ++i) {
        Scalar s;
        ScalarType from;
        if (arg.dtype == DType::I64) {
          s = scalar_i64(pick(-gather_n_, gather_n_ - 1));
          from = ScalarType::I64;
        } else {
          const double mag = std::ldexp(1.0, pick(-8, 8));
          s = scalar_f32(ties ? static_cast<float>(pick(-2, 2)) : static_cast<float>(unit() * mag));
          from = ScalarType::F32;
        }
        store_element(arg.dtype, b[a].data(), i, from, s);
      }
    }
    return b;
  }

  bool chance(double p) { return rng_.chance(p); }
  int pick(int lo, int hi) { return rng_.pick(lo, hi); }

 private:
  double unit() { return 2 * rng_.unit() - 1; }
  int64_t pick_range() {
    static const int64_t kRanges[] = {1, 1, 2, 3, 4, 4, 6, 8, 12, 16};
    return kRanges[pick(0, 9)];
  }

  int add_arg(DType dtype, int64_t elements, bool output) {
    k_.args.push_back(KernelArg{dtype, elements, output});
    return static_cast<int>(k_.args.size()) - 1;
  }
  int emit(Instr in) {
    k_.code.push_back(std::move(in));
    return static_cast<int>(k_.code.size()) - 1;
  }
  int op(Op o, ScalarType t, int a, int b = -1) {
    Instr in;
    in.op = o;
    in.type = t;
    in.a = a;
    in.b = b;
    return emit(in);
  }
  int constant(ScalarType t, double v) {
    Instr in;
    in.op = Op::Const;
    in.type = t;
    in.fimm = v;
    in.iimm = static_cast<int64_t>(v);
    return emit(in);
  }
  int loop_var(int d) {
    Instr in;
    in.op = Op::LoopVar;
    in.type = ScalarType::I64;
    in.arg = d;
    return emit(in);
  }
  int access(Op o, int arg, const Index& index, int value = -1, int mask = -1) {
    Instr in;
    in.op = o;
    in.type = o == Op::Store ? k_.code[value].type : compute_type(k_.args[arg].dtype);
    in.arg = arg;
    in.a = value;
    in.mask = mask;
    in.index = IndexSimplifier(k_.ranges).simplify(index);
    return emit(in);
  }

  // The identity view over dims [0, n).
  View dims_view(int n) const { return test_support::dims_view(k_.ranges, n); }

  void step(View* v, bool allow_broadcast, int kind = -1) {
    test_support::view_step(rng_, v, allow_broadcast, kind);
  }

  Index random_index(const View& v, bool allow_broadcast, int64_t* size) {
    return test_support::random_view_index(rng_, v, allow_broadcast, size);
  }

  // A value loaded through a random view of all dims (gathered, masked, or a LoopVar).
  int random_value(int dims) {
    const int kind = pick(0, 9);
    if (kind == 0) return op(Op::Cast, ScalarType::F32, loop_var(pick(0, dims - 1)));
    int64_t size;
    Index index = random_index(dims_view(dims), true, &size);
    if (kind == 1) {  // gather: data[checked(idx[view]) * 3 + i_last]
      const int idx_arg = add_arg(DType::I64, size, false);
      const int idx = access(Op::Load, idx_arg, index);
      Instr check;
      check.op = Op::CheckIndex;
      check.type = ScalarType::I64;
      check.a = idx;
      check.iimm = gather_n_;
      check.arg = static_cast<int>(k_.messages.size());
      k_.messages.push_back("gather");
      const int checked = emit(check);
      const int d = pick(0, dims - 1);
      const int data = add_arg(DType::F32, gather_n_ * 3 + k_.ranges[d], false);
      return access(Op::Load, data, ix_add(ix_mul(ix_value(checked), 3), ix_var(d)));
    }
    const bool i64 = kind == 2;
    const int arg = add_arg(i64 ? DType::I64 : DType::F32, size, false);
    int mask = -1;
    if (kind == 3) {  // a pad or concat: only points below a bound read memory
      const int d = pick(0, dims - 1);
      mask = op(Op::Lt, ScalarType::Bool, loop_var(d),
                constant(ScalarType::I64, static_cast<double>(pick(0, k_.ranges[d]))));
    }
    const int v = access(Op::Load, arg, index, -1, mask);
    return i64 ? op(Op::Cast, ScalarType::F32, v) : v;
  }

  int combine(int dims, int terms) {
    int v = random_value(dims);
    static const Op kOps[] = {Op::Add, Op::Mul, Op::Sub};
    for (int t = 1; t < terms; ++t)
      v = op(kOps[pick(0, 2)], ScalarType::F32, v, random_value(dims));
    return v;
  }

  // A store of v through a view of the first `dims` dims: usually one element per point;
  // sometimes a broadcast (points share elements), sometimes after reading the same arg
  // (in place, or shifted: reading what a neighbour writes).
  void random_store(int dims, int v) {
    int64_t size;
    const Index index = random_index(dims_view(dims), chance(0.15), &size);
    const DType dtype = k_.code[v].type == ScalarType::I64 ? DType::I64 : DType::F32;
    const int out = add_arg(dtype, size + 1, true);
    if (dtype == DType::F32 && chance(0.15)) {
      const int old = access(Op::Load, out, ix_add(index, ix_const(pick(0, 1))));
      v = op(Op::Add, ScalarType::F32, v, old);
    }
    access(Op::Store, out, index, v);
  }

  void pointwise() {
    if (k_.ranges.empty()) k_.ranges.push_back(pick_range());
    const int dims = static_cast<int>(k_.ranges.size());
    if (chance(0.3)) {  // a plain transpose: out[view] = in[permuted view]
      View in = dims_view(dims), out = in;
      step(&in, false, 0);
      const int a = add_arg(DType::F32, elements(k_.ranges), false);
      const int b = add_arg(DType::F32, elements(k_.ranges), true);
      access(Op::Store, b, dense_index(out, 0), access(Op::Load, a, dense_index(in, 0)));
    } else {
      random_store(dims, combine(dims, pick(1, 3)));
    }
    k_.post_begin = static_cast<int>(k_.code.size());
  }

  int reduce(ReduceKind kind, int v) {
    Instr in;
    in.op = Op::Reduce;
    in.reduce = kind;
    in.type = kind == ReduceKind::ArgMax || kind == ReduceKind::ArgMin ? ScalarType::I64
                                                                       : ScalarType::F32;
    in.a = v;
    return emit(in);
  }

  void reduction() {
    const int dims = static_cast<int>(k_.ranges.size()), outer = k_.num_outer();
    const ReduceKind kind = static_cast<ReduceKind>(pick(0, 5));
    int r;
    if (chance(0.3)) {  // two inner loops: max, then the sum of x - max (stored too)
      const int m = reduce(ReduceKind::Max, combine(dims, 1));
      k_.loop_ends.push_back(static_cast<int>(k_.code.size()));
      const int centered = op(Op::Sub, ScalarType::F32, combine(dims, pick(1, 2)), m);
      if (chance(0.5)) random_store(dims, centered);
      r = reduce(ReduceKind::Sum, centered);
      k_.loop_ends.push_back(static_cast<int>(k_.code.size()));
    } else {
      r = reduce(kind, combine(dims, pick(1, 3)));
    }
    k_.post_begin = static_cast<int>(k_.code.size());
    if (k_.code[r].type == ScalarType::F32 && chance(0.5))
      r = op(Op::Mul, ScalarType::F32, r, constant(ScalarType::F32, 0.5));
    random_store(outer, r);
  }

  test_support::Rng rng_;
  Kernel k_;
  const int gather_n_ = 5;
};

// Runs k on the reference interpreter over a copy of `in`; the args after the run, or the
// error message.
inline Bytes run_reference(const Kernel& k, const Bytes& in, std::string* error) {
  Bytes out = in;
  std::vector<void*> args;
  for (auto& b : out) args.push_back(b.data());
  try {
    interpret_kernel(k, args.data());
  } catch (const std::exception& e) {
    *error = e.what();
  }
  return out;
}

}  // namespace loopnorm_test
}  // namespace ferrite
