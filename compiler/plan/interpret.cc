#include "compiler/plan/interpret.h"

#include <algorithm>
#include <vector>

#include "compiler/plan/error.h"
#include "compiler/plan/pairwise_sum.h"
#include "compiler/plan/scalar_ops.h"

namespace ferrite {
namespace {

class Interpreter {
 public:
  Interpreter(const Kernel& k, void* const* args)
      : k_(k),
        args_(args),
        vals_(k.code.size()),
        ivals_(k.code.size(), 0),
        best_(k.code.size(), 0),
        vars_(k.ranges.size(), 0),
        sum32_(k.code.size()),
        sum64_(k.code.size()),
        prod64_(k.code.size(), 1) {}

  void run() {
    const int outer = k_.num_outer();
    for (int d = 0; d < outer; ++d) {
      if (k_.ranges[d] == 0) return;
    }
    std::fill(vars_.begin(), vars_.end(), 0);
    do {
      run_outer_point();
    } while (next(0, outer));
  }

 private:
  // Odometer over dims [lo, hi); false when it wraps around.
  bool next(int lo, int hi) {
    for (int d = hi - 1; d >= lo; --d) {
      if (++vars_[d] < k_.ranges[d]) return true;
      vars_[d] = 0;
    }
    return false;
  }

  void run_outer_point() {
    for (int L = 0; L < k_.num_loops(); ++L) run_inner_loop(k_.loop_begin(L), k_.loop_end(L));
    for (int i = k_.post_begin; i < static_cast<int>(k_.code.size()); ++i) exec(i);
  }

  // A float Sum adds its elements pairwise (pairwise_sum.h): leaves of kPairwiseLeaf.
  bool pairwise(const Instr& in) const {
    const ScalarType t = k_.code[in.a].type;
    return in.reduce == ReduceKind::Sum && (t == ScalarType::F32 || t == ScalarType::F64);
  }
  // A float32 Prod multiplies in float64 and rounds once, when its loop ends: the exact
  // product as far as float64's range reaches. A float32 product's partial products leave
  // float32's range (or lose bits as subnormals) in an order of its own: 2160 factors of
  // 0.86 stop at the smallest subnormals in one order and become 0 in another, and a
  // quotient of two such products is then 1 or NaN by the order alone.
  bool wide_product(const Instr& in) const {
    return in.reduce == ReduceKind::Prod && k_.code[in.a].type == ScalarType::F32;
  }
  void push_leaf(int i, bool finish) {
    if (k_.code[i].type == ScalarType::F32) {
      float v = vals_[i].f32;
      finish ? sum32_[i].finish(&v) : sum32_[i].push(&v);
      vals_[i] = scalar_f32(v);
    } else {
      double v = vals_[i].f64;
      finish ? sum64_[i].finish(&v) : sum64_[i].push(&v);
      vals_[i] = scalar_f64(v);
    }
  }

  // One inner loop [begin, end) over every point of the reduction dims, then its Reduce
  // results are final (later loops and the post phase read them).
  void run_inner_loop(int begin, int end) {
    const int outer = k_.num_outer(), total = static_cast<int>(k_.ranges.size());
    for (int i = begin; i < end; ++i) {
      const Instr& in = k_.code[i];
      if (in.op == Op::Reduce) {
        vals_[i] = reduce_identity(in.reduce, k_.code[in.a].type);
        best_[i] = 0;
        sum32_[i].reset(1);
        sum64_[i].reset(1);
        prod64_[i] = 1;
      }
    }
    bool empty = false;
    for (int d = outer; d < total; ++d) {
      empty |= k_.ranges[d] == 0;
      vars_[d] = 0;
    }
    // Body Consts hold for later loops and the post phase (kernel.h) even when the loop
    // has no points to run.
    if (empty) {
      for (int i = begin; i < end; ++i)
        if (k_.code[i].op == Op::Const) exec(i);
    } else {
      int64_t rindex = 0;
      do {
        for (int i = begin; i < end; ++i) {
          const Instr& in = k_.code[i];
          if (in.op == Op::Reduce && wide_product(in)) {
            prod64_[i] *= static_cast<double>(vals_[in.a].f32);
          } else if (in.op == Op::Reduce) {
            vals_[i] = reduce_step(in.reduce, k_.code[in.a].type, vals_[i], vals_[in.a], rindex,
                                   &best_[i]);
            if ((rindex + 1) % kPairwiseLeaf == 0 && pairwise(in)) push_leaf(i, false);
          } else {
            exec(i);
          }
        }
        ++rindex;
      } while (total > outer && next(outer, total));
    }
    for (int i = begin; i < end; ++i) {
      const Instr& in = k_.code[i];
      if (in.op != Op::Reduce) continue;
      if (in.reduce == ReduceKind::ArgMax || in.reduce == ReduceKind::ArgMin) {
        vals_[i] = scalar_i64(best_[i]);
      } else if (pairwise(in)) {
        push_leaf(i, true);
      } else if (wide_product(in)) {
        vals_[i] = scalar_f32(static_cast<float>(prod64_[i]));
      }
      ivals_[i] = vals_[i].i64;
    }
  }

  int64_t checked_index(const Instr& in) {
    int64_t idx = eval_index(*in.index, vars_.data(), ivals_.data());
    if (idx < 0 || idx >= k_.args[in.arg].elements) {
      fail("kernel '", k_.name, "': ", op_name(in.op), " of arg ", in.arg, " at element ", idx,
           " is outside its ", k_.args[in.arg].elements, " elements");
    }
    return idx;
  }

  void exec(int i) {
    const Instr& in = k_.code[i];
    Scalar r = scalar_i64(0);
    switch (in.op) {
      case Op::Load:
        if (in.mask < 0 || vals_[in.mask].b) {
          r = load_element(k_.args[in.arg].dtype, args_[in.arg], checked_index(in));
        } else {
          r = make_const(in.type, 0, 0);
        }
        break;
      case Op::Store:
        store_element(k_.args[in.arg].dtype, args_[in.arg], checked_index(in), in.type,
                      vals_[in.a]);
        return;
      case Op::LoopVar:
        r = scalar_i64(vars_[in.arg]);
        break;
      case Op::Reduce:
        fail("internal: Reduce executed outside the reduction loop");
      default:
        r = eval_instr(k_, in, vals_.data());
    }
    vals_[i] = r;
    ivals_[i] = in.type == ScalarType::I64 ? r.i64 : 0;
  }

  const Kernel& k_;
  void* const* args_;
  std::vector<Scalar> vals_;
  std::vector<int64_t> ivals_;
  std::vector<int64_t> best_;  // ArgMax/ArgMin: index of the best value so far
  std::vector<int64_t> vars_;
  std::vector<PairwiseSum<float>> sum32_;   // per float32 Sum
  std::vector<PairwiseSum<double>> sum64_;  // per float64 Sum
  std::vector<double> prod64_;              // per float32 Prod (wide_product)
};

}  // namespace

void interpret_kernel(const Kernel& k, void* const* args) {
  Interpreter(k, args).run();
}

namespace {

// The nodes eval_index visits in `ix`, counting at most `cap`.
int64_t index_nodes(const Index& ix, int64_t cap) {
  int64_t n = 0;
  std::vector<const IndexNode*> stack;
  if (ix) stack.push_back(ix.get());
  while (!stack.empty() && n < cap) {
    const IndexNode* node = stack.back();
    stack.pop_back();
    ++n;
    if (node->a) stack.push_back(node->a.get());
    if (node->b) stack.push_back(node->b.get());
  }
  return n;
}

}  // namespace

double interpret_work(const Kernel& k) {
  constexpr int64_t kIndexCap = 4096;
  double per_point = 0;
  for (const Instr& in : k.code)
    per_point += 1.0 + static_cast<double>(index_nodes(in.index, kIndexCap));
  double points = 1;
  for (int64_t r : k.ranges) points *= static_cast<double>(std::max<int64_t>(r, 0));
  return points * per_point;
}

void fail_check_index(const Kernel& k, const Instr& in, int64_t v) {
  fail(k.messages[in.arg], ": index ", v, " out of range [", -in.iimm, ", ", in.iimm, ")");
}

Scalar eval_instr(const Kernel& k, const Instr& in, const Scalar* vals) {
  switch (in.op) {
    case Op::Const:
      return make_const(in.type, in.fimm, in.iimm);
    case Op::Cast:
      return eval_cast(k.code[in.a].type, in.type, vals[in.a]);
    case Op::CheckIndex: {
      if (in.mask >= 0 && !vals[in.mask].b) return scalar_i64(0);
      const int64_t v = vals[in.a].i64, n = in.iimm;
      if (v < -n || v >= n) fail_check_index(k, in, v);
      return scalar_i64(v < 0 ? v + n : v);
    }
    case Op::Where:
      return vals[in.a].b ? vals[in.b] : vals[in.c];
    case Op::Load:
    case Op::Store:
    case Op::LoopVar:
    case Op::Reduce:
      fail("kernel '", k.name, "': internal: ", op_name(in.op), " is not a value op");
    default:
      if (op_arity(in.op) == 1) return eval_unary(in.op, k.code[in.a].type, vals[in.a]);
      return eval_binary(in.op, k.code[in.a].type, vals[in.a], vals[in.b]);
  }
}

}  // namespace ferrite
