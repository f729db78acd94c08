// Index expressions of a plan from elsewhere may hold any constants: their affine forms and
// values wrap modulo 2^64 (no undefined behaviour, which the sanitizer build would stop on)
// and agree with each other at every point.
#include "compiler/plan/index_expr.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace ferrite {
namespace {

int64_t at(const AffineIndex& f, const std::vector<int64_t>& vars) {
  uint64_t v = static_cast<uint64_t>(f.offset);
  for (size_t i = 0; i < vars.size(); ++i)
    v += static_cast<uint64_t>(f.coeff[i]) * static_cast<uint64_t>(vars[i]);
  return static_cast<int64_t>(v);
}

TEST(IndexExprTest, AffineFormsWrapLikeEvaluation) {
  const int64_t big = std::numeric_limits<int64_t>::max() - 5, huge = int64_t{1} << 62;
  const std::vector<Index> exprs = {
      // (i0 * 2^62) * 4 + i1 * (2^63 - 6) * 3 + (2^63 - 6) * 7
      ix_binary(IndexKind::Add,
                ix_binary(IndexKind::Mul, ix_binary(IndexKind::Mul, ix_var(0), ix_const(huge)),
                          ix_const(4)),
                ix_binary(IndexKind::Add,
                          ix_binary(IndexKind::Mul, ix_const(3),
                                    ix_binary(IndexKind::Mul, ix_var(1), ix_const(big))),
                          ix_binary(IndexKind::Mul, ix_const(big), ix_const(7)))),
      ix_binary(IndexKind::Mul, ix_binary(IndexKind::Add, ix_var(1), ix_const(big)),
                ix_const(std::numeric_limits<int64_t>::min())),
  };
  for (const Index& e : exprs) {
    AffineIndex f;
    ASSERT_TRUE(as_affine(*e, 2, &f)) << index_to_string(*e);
    for (int64_t i0 : {0, 1, 3})
      for (int64_t i1 : {0, 1, 5}) {
        const std::vector<int64_t> vars = {i0, i1};
        EXPECT_EQ(at(f, vars), eval_index(*e, vars.data(), nullptr)) << index_to_string(*e);
      }
  }
}

}  // namespace
}  // namespace ferrite
