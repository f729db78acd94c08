// com.microsoft MatMulNBits: Y = A @ dequantize(B)^T (+ bias), B's [N, K] weights in blocks
// of block_size along K, each block with a float scale and a zero point (2-, 4- or 8-bit
// codes packed low bits first, blob_size = block_size * bits / 8 bytes per block; zero
// points packed the same way per row of blocks, or float, default 2^(bits - 1)).
// B, scales and zero points are the model's weights: they are decoded at compile time into
// the MatMul extern's float32 operand [K, N], which the backends prepack as any weight (the
// float copy costs 32 / bits times B's bytes; a GEMM that unpacks the codes in its packing
// is not built yet).
#include <cmath>
#include <string>

#include "compiler/loopir/checked_int.h"
#include "compiler/lower/quant_common.h"
#include "compiler/plan/resource_limits.h"

namespace ferrite {
namespace {

struct NBits {
  int64_t k = 0, n = 0, bits = 4, block = 0, blocks = 0, blob = 0;
};

NBits nbits_attrs(const LowerCtx& c) {
  NBits a;
  a.k = c.node.attr_int("K", -1);
  a.n = c.node.attr_int("N", -1);
  a.bits = c.node.attr_int("bits", 4);
  a.block = c.node.attr_int("block_size", -1);
  if (a.bits != 2 && a.bits != 4 && a.bits != 8) c.unsupported("bits ", a.bits, " (2, 4, 8)");
  if (a.k < 1 || a.n < 1) c.error("K and N must be positive, got ", a.k, " and ", a.n);
  if (a.block < 16 || (a.block & (a.block - 1)) != 0)
    c.error("block_size must be a power of 2 of at least 16, got ", a.block);
  a.blocks = (a.k - 1) / a.block + 1;
  a.blob = a.block * a.bits / 8;
  const int64_t bytes = checked_product({a.k, a.n, 4}, "MatMulNBits weights");
  check_memory_limit(bytes, c.gl.memory_limit,
                     str_cat(c.origin(), ": the decoded weights [", a.k, ", ", a.n, "]"));
  return a;
}

// The code at position `i` of packed bytes (low bits first).
int64_t code_at(const uint8_t* bytes, int64_t i, int64_t bits) {
  const int64_t per_byte = 8 / bits;
  const int shift = static_cast<int>((i % per_byte) * bits);
  return (bytes[i / per_byte] >> shift) & ((1 << bits) - 1);
}

std::shared_ptr<const TensorData> expect_const(const LowerCtx& c, size_t i, DType t,
                                               int64_t elements, const char* what) {
  std::shared_ptr<const TensorData> d = c.const_data(i);
  if (d->dtype != t || d->elements() != elements)
    c.error(what, " '", c.node.inputs[i]->name, "' must be ", dtype_name(t), " with ", elements,
            " elements, got ", dtype_name(d->dtype), shape_text(d->shape));
  return d;
}

// W [K, N] float32: (code - zero point) * scale of each weight.
std::shared_ptr<TensorData> decode_weights(const LowerCtx& c, const NBits& a) {
  const auto b = expect_const(c, 1, DType::U8, a.n * a.blocks * a.blob, "B");
  const auto scales = expect_const(c, 2, DType::F32, a.n * a.blocks, "scales");
  std::shared_ptr<const TensorData> zp;
  bool float_zp = false;
  if (c.has(3)) {
    zp = c.const_data(3);
    float_zp = zp->dtype == DType::F32;
    const int64_t packed = a.n * ((a.blocks * a.bits + 7) / 8);
    if (float_zp ? zp->elements() != a.n * a.blocks
                 : zp->dtype != DType::U8 || zp->elements() != packed)
      c.error("zero_points must be uint8 with ", packed, " elements (packed) or float32 with ",
              a.n * a.blocks, ", got ", dtype_name(zp->dtype), shape_text(zp->shape));
  }
  if (c.has(4)) c.unsupported("g_idx (deprecated; act-order weights)");
  auto w = std::make_shared<TensorData>();
  w->dtype = DType::F32;
  w->shape = {a.k, a.n};
  w->bytes.assign(static_cast<size_t>(a.k * a.n) * sizeof(float), 0);
  float* out = reinterpret_cast<float*>(w->bytes.mutable_data());
  const uint8_t* codes = b->as<uint8_t>();
  const float* s = scales->as<float>();
  const int64_t zp_row = (a.blocks * a.bits + 7) / 8;
  const double default_zp = static_cast<double>(int64_t{1} << (a.bits - 1));
  for (int64_t n = 0; n < a.n; ++n) {
    for (int64_t blk = 0; blk < a.blocks; ++blk) {
      const int64_t sb = n * a.blocks + blk;
      double z = default_zp;
      if (zp && float_zp) z = zp->as<float>()[sb];
      if (zp && !float_zp)
        z = static_cast<double>(code_at(zp->as<uint8_t>() + n * zp_row, blk, a.bits));
      const uint8_t* blob = codes + sb * a.blob;
      for (int64_t j = 0; j < a.block && blk * a.block + j < a.k; ++j) {
        const auto q = static_cast<float>(code_at(blob, j, a.bits));
        out[(blk * a.block + j) * a.n + n] = (q - static_cast<float>(z)) * s[sb];
      }
    }
  }
  return w;
}

std::vector<TensorBoxPtr> lower_matmul_nbits(LowerCtx& c) {
  const TensorBoxPtr& x = c.input(0);
  if (x->dtype != DType::F32) c.unsupported("MatMulNBits on ", dtype_name(x->dtype));
  const NBits a = nbits_attrs(c);
  if (x->size.empty() || x->size.back() != a.k)
    c.error("A ", shape_text(x->size), " must end in K = ", a.k);
  const TensorBoxPtr w = constant_box(c.gl, decode_weights(c, a), c.origin() + " weights");
  TensorBoxPtr bias;
  if (c.has(5)) {
    bias = c.input(5);
    if (bias->dtype != DType::F32 || bias->size != std::vector<int64_t>{a.n})
      c.error("bias must be float32 [", a.n, "], got ", dtype_name(bias->dtype),
              shape_text(bias->size));
  }
  EpiloguePost post;
  if (bias) {
    post = [&c, bias](const TensorBoxPtr& y) {
      return make_pointwise(
          c, {y, bias}, DType::F32,
          [](KernelBuilder& b, const std::vector<V>& v) { return b.binary(Op::Add, v[0], v[1]); });
    };
  }
  return {matmul_extern(c, x, w, 1.0, post)};
}

}  // namespace

void register_matmul_nbits_ops(LoweringTable& t) {
  t.add(std::string(kMicrosoftDomain) + ".MatMulNBits", lower_matmul_nbits);
}

}  // namespace ferrite
