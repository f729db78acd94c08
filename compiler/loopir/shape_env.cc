#include "compiler/loopir/shape_env.h"

#include "compiler/loopir/simplify.h"

namespace ferrite {

ShapeEnv ShapeEnv::for_inputs(const std::vector<TensorType>& declared,
                              const std::vector<TensorType>& fed) {
  if (declared.size() != fed.size())
    fail("symbolic compile: ", declared.size(), " inputs declared, ", fed.size(), " fed");
  ShapeEnv env;
  for (size_t i = 0; i < declared.size(); ++i) {
    const TensorType& d = declared[i];
    const std::vector<int64_t>& shape = fed[i].shape;
    if (!d.rank_known || d.shape.size() != shape.size())
      fail("symbolic compile: input ", i, " is fed rank ", shape.size());
    std::vector<Index> sizes;
    for (size_t k = 0; k < shape.size(); ++k) {
      if (d.shape[k] >= 0) {
        if (shape[k] != d.shape[k])
          fail("symbolic compile: input ", i, " dim ", k, " is ", d.shape[k], ", fed ", shape[k]);
        sizes.push_back(ix_const(shape[k]));
        continue;
      }
      if (shape[k] < kMinSize || shape[k] > kMaxSize)
        fail("symbolic compile: input ", i, " dim ", k, " is fed ", shape[k]);
      const std::string name = k < d.dim_names.size() ? d.dim_names[k] : "";
      int found = -1;
      for (size_t s = 0; s < env.symbols.size() && !name.empty(); ++s)
        if (env.symbols[s].name == name) found = static_cast<int>(s);
      if (found >= 0 && env.symbols[static_cast<size_t>(found)].hint != shape[k])
        fail("symbolic compile: dim '", name, "' is fed two sizes");
      if (found < 0) {
        found = static_cast<int>(env.symbols.size());
        env.symbols.push_back(
            ShapeSymbol{name, static_cast<int>(i), static_cast<int>(k), shape[k]});
      }
      sizes.push_back(ix_sym(found));
    }
    env.input_sizes.push_back(std::move(sizes));
  }
  return env;
}

bool ShapeEnv::values_for(const std::vector<std::vector<int64_t>>& shapes,
                          std::vector<int64_t>* values) const {
  if (shapes.size() != input_sizes.size()) return false;
  values->assign(symbols.size(), -1);
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (shapes[i].size() != input_sizes[i].size()) return false;
    for (size_t k = 0; k < shapes[i].size(); ++k) {
      const IndexNode& e = *input_sizes[i][k];
      const int64_t n = shapes[i][k];
      if (e.kind == IndexKind::Const) {
        if (n != e.c) return false;
        continue;
      }
      if (n < kMinSize || n > kMaxSize) return false;
      int64_t& v = (*values)[static_cast<size_t>(e.id)];
      if (v >= 0 && v != n) return false;
      v = n;
    }
  }
  return true;
}

std::vector<int64_t> ShapeEnv::hints() const {
  std::vector<int64_t> h;
  for (const ShapeSymbol& s : symbols) h.push_back(s.hint);
  return h;
}

Index sym_mul(const Index& a, const Index& b) {
  if (b->kind == IndexKind::Const) return ix_mul(a, b->c);
  if (a->kind == IndexKind::Const) return ix_mul(b, a->c);
  return ix_binary(IndexKind::Mul, a, b);
}

std::vector<Index> sym_contiguous_strides(const std::vector<Index>& size) {
  std::vector<Index> strides(size.size());
  Index s = ix_const(1);
  for (size_t d = size.size(); d-- > 0;) {
    strides[d] = s;
    s = sym_mul(s, size[d]);
  }
  return strides;
}

std::vector<Index> sym_consts(const std::vector<int64_t>& values) {
  std::vector<Index> out;
  for (int64_t v : values) out.push_back(ix_const(v));
  return out;
}

bool sym_equal(const Index& a, const Index& b) {
  return index_equal(*a, *b);
}

bool sym_is_const(const Index& a, int64_t c) {
  return a->kind == IndexKind::Const && a->c == c;
}

}  // namespace ferrite
