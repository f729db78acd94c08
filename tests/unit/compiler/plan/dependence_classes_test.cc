// dependence_classes: each value's mask is the union of the classes of all it depends on,
// checked against masks worked out by hand for a two-loop reduction kernel.
#include "compiler/plan/dependence_classes.h"

#include <gtest/gtest.h>

#include "tests/unit/runtime/kernel_builder.h"

namespace ferrite {
namespace {

using testing::Affine;
using testing::KernelBuilder;

TEST(DependenceClasses, UnionOfWhatEachValueReads) {
  // ranges [3, 5 | 7]: outer i0, i1; reduction i2. Softmax-like: a max in the first loop,
  // read by the second; a gather through a checked index; the post phase scales.
  KernelBuilder b({3, 5, 7}, 1);
  const int x = b.arg(DType::F32, 3 * 5 * 7), ids = b.arg(DType::I64, 7),
            y = b.arg(DType::F32, 3 * 5, true);
  const int v = b.load(x, Affine({{0, 35}, {1, 7}, {2, 1}}));  // i0 i1 i2, load
  const int m = b.reduce(ReduceKind::Max, v);                  // outer, reduced
  b.end_loop();
  const int c = b.constant(ScalarType::F32, 2);                            // nothing
  const int id = b.check_index(b.load(ids, Affine({{2, 1}})), 7, "g");     // i2, load, check
  const int g = b.load(x, testing::Add(Affine({{0, 35}}), ix_value(id)));  // i0, i2, ...
  const int e = b.binary(Op::Sub, g, m);
  const int s = b.reduce(ReduceKind::Sum, e);
  b.post();
  const int i1 = b.loop_var(1);
  const int out = b.binary(Op::Mul, s, c);
  b.store(y, Affine({{0, 5}, {1, 1}}), out);
  const Kernel k = b.build();

  DependenceClasses cl;
  cl.var = {1, 2, 4};
  cl.reduce_result = 8;
  cl.load = 16;
  cl.check = 32;
  cl.seed.assign(k.code.size(), 0);
  cl.seed[static_cast<size_t>(c)] = 64;
  const std::vector<ClassMask> m_ = dependence_classes(k, cl);
  EXPECT_EQ(m_[v], 1 | 2 | 4 | 16);
  EXPECT_EQ(m_[m], 1 | 2 | 8);  // the reduction's i2 is summed away
  EXPECT_EQ(m_[c], 64);
  EXPECT_EQ(m_[id], 4 | 16 | 32);
  EXPECT_EQ(m_[g], 1 | 4 | 16 | 32);
  EXPECT_EQ(m_[e], 1 | 2 | 4 | 8 | 16 | 32);
  EXPECT_EQ(m_[s], 1 | 2 | 8);
  EXPECT_EQ(m_[i1], 2);
  EXPECT_EQ(m_[out], 1 | 2 | 8 | 64);
  EXPECT_EQ(m_.back(), 1 | 2 | 8 | 64);  // the store: its value's and its index's
  EXPECT_EQ(index_classes(*k.code[g].index, cl, m_), 1 | 4 | 16 | 32);
}

}  // namespace
}  // namespace ferrite
