// The JIT's vector math routines (jit/vec_math.h) against <cmath> evaluated in double, on every
// ISA this CPU runs: a sweep over the whole f32 range, special values, pow's operand grid and
// random pairs, dst == src, and the registers a routine must leave alone. The error bounds
// asserted here are the ones documented in vec_math.h. The disabled tests measure them over
// all 2^32 inputs (about 8 minutes), 64M pow pairs and the speed:
//   unit_tests --gtest_also_run_disabled_tests --gtest_filter='VecMath.DISABLED_*'
#include "jit/vec_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "jit/const_pool.h"
#include "jit/cpu_isa.h"
#include "jit/vec_context.h"

namespace ferrite {
namespace testing {
namespace {

using jit::Isa;

enum class MathOp { Exp, Log, Tanh, Sigmoid, Erf, Pow };

struct OpInfo {
  MathOp op;
  const char* name;
  double bound;  // max error in ulp, as documented in vec_math.h
};

const OpInfo kOps[] = {{MathOp::Exp, "exp", 1.25},  {MathOp::Log, "log", 1.25},
                       {MathOp::Tanh, "tanh", 2.6}, {MathOp::Sigmoid, "sigmoid", 2.5},
                       {MathOp::Erf, "erf", 1.5},   {MathOp::Pow, "pow", 1.0}};
const OpInfo& kPow = kOps[5];

std::vector<Isa> host_isas() {
  std::vector<Isa> isas;
  for (Isa isa : {Isa::Avx512, Isa::Avx2})
    if (jit::host_supports(isa)) isas.push_back(isa);
  return isas;
}

double reference(MathOp op, float x, float y) {
  const double a = x, b = y;
  switch (op) {
    case MathOp::Exp:
      return std::exp(a);
    case MathOp::Log:
      return std::log(a);
    case MathOp::Tanh:
      return std::tanh(a);
    case MathOp::Sigmoid: {
      if (a >= 0) return 1 / (1 + std::exp(-a));
      const double e = std::exp(a);
      return e / (1 + e);
    }
    case MathOp::Erf:
      return std::erf(a);
    case MathOp::Pow:
      return std::pow(a, b);
  }
  return 0;
}

// The reference's own f32 result (compiler/plan/scalar_ops.cc), for special values.
float reference_f32(MathOp op, float x, float y) {
  switch (op) {
    case MathOp::Exp:
      return std::exp(x);
    case MathOp::Log:
      return std::log(x);
    case MathOp::Tanh:
      return std::tanh(x);
    case MathOp::Sigmoid:
      return static_cast<float>(reference(op, x, y));
    case MathOp::Erf:
      return std::erf(x);
    case MathOp::Pow:
      return std::pow(x, y);
  }
  return 0;
}

constexpr double kWrong = 1e30;

// |got - ref| in units of the last place of f32 numbers next to ref (subnormal spacing below
// FLT_MIN; an infinite result counts as 2^128). NaN must meet NaN, and a result that is exactly
// zero or infinite must be met exactly, sign included; so must the sign of an underflow to 0.
double ulp_error(float got, double ref) {
  if (std::isnan(ref) || std::isnan(got)) return std::isnan(ref) && std::isnan(got) ? 0 : kWrong;
  if (ref == 0 || std::isinf(ref))
    return got == ref && std::signbit(got) == std::signbit(ref) ? 0 : kWrong;
  if (got == 0 && std::signbit(got) != std::signbit(ref)) return kWrong;
  if (std::isinf(got) && got == static_cast<float>(ref)) return 0;
  const double g = std::isinf(got) ? std::copysign(0x1p128, got) : got;
  int e;
  std::frexp(ref, &e);
  const double ulp = std::ldexp(1.0, std::min(std::max(e - 1, -126), 127) - 23);
  return std::fabs(g - ref) / ulp;
}

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

void emit_op(jit::VecContext& ctx, MathOp op, int dst, int a, int b) {
  switch (op) {
    case MathOp::Exp:
      return jit::emit_exp(ctx, dst, a);
    case MathOp::Log:
      return jit::emit_log(ctx, dst, a);
    case MathOp::Tanh:
      return jit::emit_tanh(ctx, dst, a);
    case MathOp::Sigmoid:
      return jit::emit_sigmoid(ctx, dst, a);
    case MathOp::Erf:
      return jit::emit_erf(ctx, dst, a);
    case MathOp::Pow:
      return jit::emit_pow(ctx, dst, a, b);
  }
}

struct Regs {
  int a, b, dst;
  std::vector<int> scratch;
};

Regs default_regs(bool in_place) {
  return {0, 1, in_place ? 0 : 2, {3, 4, 5, 6}};
}

// void f(const float* a, const float* b, float* out, int64_t n): out[i] = op(a[i], b[i]) for
// i < n, n a positive multiple of the lane count.
class MathKernel : public Xbyak::CodeGenerator {
 public:
  MathKernel(Isa isa, MathOp op, const Regs& r) : Xbyak::CodeGenerator(16384) {
    jit::ConstPool pool(this, isa == Isa::Avx512 ? 64 : 32);
    jit::VecContext ctx{*this, isa, pool, r.scratch};
    Xbyak::Label loop;
    xor_(rax, rax);
    L(loop);
    vmovups(ctx.vec(r.a), ptr[rdi + rax * 4]);
    if (op == MathOp::Pow) vmovups(ctx.vec(r.b), ptr[rsi + rax * 4]);
    emit_op(ctx, op, r.dst, r.a, r.b);
    vmovups(ptr[rdx + rax * 4], ctx.vec(r.dst));
    add(rax, ctx.lanes());
    cmp(rax, rcx);
    jl(loop);
    vzeroupper();
    ret();
    pool.emit();
    ready();
  }

  void run(const float* a, const float* b, float* out, size_t n) const {
    getCode<void (*)(const float*, const float*, float*, int64_t)>()(a, b, out,
                                                                     static_cast<int64_t>(n));
  }
  std::vector<float> run(const std::vector<float>& a, const std::vector<float>& b) const {
    std::vector<float> out(a.size());
    run(a.data(), b.data(), out.data(), a.size());
    return out;
  }
};

// Pads to a multiple of 16 lanes (both ISAs) by repeating the last element.
void pad(std::vector<float>& v) {
  while (v.empty() || v.size() % 16) v.push_back(v.empty() ? 0.0f : v.back());
}

// The largest error of one routine on one ISA, and where.
struct Worst {
  double err = 0;
  float a = 0, b = 0, got = 0;
  double ref = 0;
  int64_t count = 0, over = 0;  // evaluated, over the bound

  void add(double bound, float x, float y, float r, double want) {
    const double e = ulp_error(r, want);
    ++count;
    if (e > bound) ++over;
    if (e > err) {
      err = e;
      a = x;
      b = y;
      got = r;
      ref = want;
    }
  }
  std::string str(bool binary) const {
    char at[64], buf[256];
    if (binary)
      std::snprintf(at, sizeof at, "(%.9g, %.9g)", a, b);
    else
      std::snprintf(at, sizeof at, "%.9g (0x%08x)", a, bits(a));
    std::snprintf(buf, sizeof buf, "%lld values, max %.3f ulp at %s: got %.9g, want %.12g",
                  static_cast<long long>(count), err, at, got, ref);
    return buf;
  }
};

// Runs one unary routine on every host ISA over batches of inputs.
class UnaryCheck {
 public:
  explicit UnaryCheck(const OpInfo& op) : op_(op) {
    for (Isa isa : host_isas())
      isas_.push_back({isa, std::make_unique<MathKernel>(isa, op.op, default_regs(false)), {}});
  }
  // x.size() must be a multiple of 16.
  void add(const std::vector<float>& x) {
    ref_.resize(x.size());
    got_.resize(x.size());
    for (size_t i = 0; i < x.size(); ++i) ref_[i] = reference(op_.op, x[i], 0);
    for (PerIsa& p : isas_) {
      p.kernel->run(x.data(), x.data(), got_.data(), x.size());
      for (size_t i = 0; i < x.size(); ++i) p.worst.add(op_.bound, x[i], 0, got_[i], ref_[i]);
    }
  }
  void expect_within_bound(const char* what) const {
    for (const PerIsa& p : isas_) {
      std::printf("[ vec_math ] %-7s %-6s %s: %s\n", op_.name, jit::isa_name(p.isa), what,
                  p.worst.str(false).c_str());
      EXPECT_LE(p.worst.err, op_.bound)
          << op_.name << " " << jit::isa_name(p.isa) << ": " << p.worst.str(false);
    }
  }

 private:
  struct PerIsa {
    Isa isa;
    std::unique_ptr<MathKernel> kernel;
    Worst worst;
  };
  const OpInfo& op_;
  std::vector<PerIsa> isas_;
  std::vector<double> ref_;
  std::vector<float> got_;
};

// Every 4099th f32 bit pattern (both signs, NaNs included), plus every 1031st one in [-10, 10]
// where most of the routines change shape: about 3.2M inputs.
TEST(VecMath, SweepUnary) {
  std::vector<float> x;
  for (uint64_t u = 0; u < (1ull << 32); u += 4099)
    x.push_back(from_bits(static_cast<uint32_t>(u)));
  for (uint32_t u = 0; u <= bits(10.0f); u += 1031) {
    x.push_back(from_bits(u));
    x.push_back(from_bits(u | 0x80000000u));
  }
  pad(x);
  for (const OpInfo& op : kOps) {
    if (op.op == MathOp::Pow) continue;
    UnaryCheck check(op);
    check.add(x);
    check.expect_within_bound("sweep");
  }
}

TEST(VecMath, DISABLED_ExhaustiveUnary) {
  for (const OpInfo& op : kOps) {
    if (op.op == MathOp::Pow) continue;
    UnaryCheck check(op);
    std::vector<float> x(1 << 20);
    for (uint64_t base = 0; base < (1ull << 32); base += x.size()) {
      for (size_t i = 0; i < x.size(); ++i) x[i] = from_bits(static_cast<uint32_t>(base + i));
      check.add(x);
    }
    check.expect_within_bound("all inputs");
  }
}

std::vector<float> special_inputs() {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  const float snan = from_bits(0x7F800001u), nan_payload = from_bits(0x7FC12345u);
  const float above1 = std::nextafter(1.0f, 2.0f), below1 = std::nextafter(1.0f, 0.0f);
  std::vector<float> v = {0, inf, nan, snan, nan_payload, FLT_MIN, FLT_TRUE_MIN, 1e-40f, 5.9e-39f,
                          FLT_MAX, 1e-30f, 1e-20f, 1e-7f, 1, above1, below1, 0.75f, 1.5f, 0.5f,
                          0.25f, 2, 3, 10,
                          // exp: overflow, the last normal and the underflow thresholds
                          88.7228394f, 88.7228317f, 88.72284f, 89, 100, -87.33654f, -87.3365479f,
                          -103.972084f, -103.97209f, -104, -110, -150, 0.34657359f, 0.3466f,
                          // tanh and erf: saturation; erf's interval boundaries
                          8.5f, 9.01f, 9.1f, 20, 3.9192059f, 3.92f, 3.99999976f, 4, 5, 0.125f,
                          0.375f, 1.25f, 1.75f, 2.75f, 3.75f};
  const size_t n = v.size();
  for (size_t i = 0; i < n; ++i) v.push_back(-v[i]);
  pad(v);
  return v;
}

// Special results must be the reference's exactly: NaN, +-inf, +-0, and tanh and erf's
// saturation to +-1.
TEST(VecMath, SpecialValues) {
  const std::vector<float> x = special_inputs();
  for (const OpInfo& op : kOps) {
    if (op.op == MathOp::Pow) continue;
    for (Isa isa : host_isas()) {
      const std::vector<float> got = MathKernel(isa, op.op, default_regs(false)).run(x, x);
      Worst w;
      for (size_t i = 0; i < x.size(); ++i) {
        w.add(op.bound, x[i], 0, got[i], reference(op.op, x[i], 0));
        const float want = reference_f32(op.op, x[i], 0);
        const bool saturated = (op.op == MathOp::Tanh && std::fabs(x[i]) >= 9.1f) ||
                               (op.op == MathOp::Erf && std::fabs(x[i]) >= 4.0f);
        if (!std::isnan(want) && !std::isinf(want) && want != 0 && !saturated) continue;
        const bool same = std::isnan(want) ? std::isnan(got[i]) : bits(got[i]) == bits(want);
        EXPECT_TRUE(same) << op.name << " " << jit::isa_name(isa) << "(" << x[i] << ") = " << got[i]
                          << ", want " << want;
      }
      EXPECT_LE(w.err, op.bound) << op.name << " " << jit::isa_name(isa) << ": " << w.str(false);
    }
  }
}

// pow's special and interesting operand pairs (C99 Annex F cases included).
void pow_grid(std::vector<float>& a, std::vector<float>& b) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  const float above1 = std::nextafter(1.0f, 2.0f), below1 = std::nextafter(1.0f, 0.0f);
  const std::vector<float> bases = {// zeros, +-1 and its neighbours, small integers
                                    0, -0.0f, 1, -1, above1, below1, -below1, 2, -2, 3, -3, 7, 10,
                                    -10, 0.5f, -0.5f, 1.5f, -2.5f, 0.1f, 1e10f, 1e-10f,
                                    // extremes
                                    inf, -inf, nan, FLT_MIN, -FLT_MIN, 1e-40f, -1e-40f,
                                    FLT_TRUE_MIN, FLT_MAX, -FLT_MAX};
  const std::vector<float> exps = {
      // small integers and half-integers
      0, -0.0f, 1, -1, 2, -2, 3, -3, 7, 33, -33, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, 0.1f,
      // the largest odd integer, even ones from 2^24 on, |b| >= 2^31
      16777215, 16777218, 2147483648.0f, -2147483648.0f, 1e10f, -1e10f,
      // results near overflow and underflow
      100, -100, 127, 128, -126, -149, -150,
      // extremes
      inf, -inf, nan, 1e-30f, FLT_TRUE_MIN, FLT_MAX, -FLT_MAX};
  for (float x : bases)
    for (float y : exps) {
      a.push_back(x);
      b.push_back(y);
    }
}

// Random pairs whose results span the normal and subnormal ranges.
void pow_random(std::vector<float>& a, std::vector<float>& b, size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<uint32_t> finite(1, 0x7F7FFFFFu);
  std::uniform_real_distribution<double> target(-160.0, 130.0), near1(-1e-3, 1e-3);
  std::uniform_int_distribution<int> ints(1, 300);
  for (size_t i = 0; i < n; ++i) {
    float x = from_bits(finite(rng)), y;
    switch (i % 5) {
      case 0:  // log2 of the result uniform over the f32 range
        y = static_cast<float>(target(rng) / std::log2(static_cast<double>(x)));
        break;
      case 1:  // negative base, integral exponent
        y = static_cast<float>(ints(rng) * (rng() & 1 ? 1 : -1));
        x = -static_cast<float>(std::exp2(target(rng) / y));
        break;
      case 2:  // base near 1, large exponent
        x = static_cast<float>(1 + near1(rng) * std::exp2(-static_cast<double>(rng() % 16)));
        y = static_cast<float>(target(rng) / std::log2(static_cast<double>(x)));
        break;
      case 3:  // subnormal base
        x = from_bits(1 + rng() % 0x7FFFFF);
        y = static_cast<float>(target(rng) / std::log2(static_cast<double>(x)));
        break;
      default:  // anything
        y = from_bits(finite(rng) | (rng() & 0x80000000u));
        if (rng() & 1) x = -x;
        break;
    }
    if (!std::isfinite(y)) y = 1.0f;
    a.push_back(x);
    b.push_back(y);
  }
  while (a.size() % 16) {
    a.push_back(2.0f);
    b.push_back(2.0f);
  }
}

void check_pow(const std::vector<float>& a, const std::vector<float>& b, size_t exact_below,
               const char* what) {
  for (Isa isa : host_isas()) {
    const std::vector<float> got = MathKernel(isa, MathOp::Pow, default_regs(false)).run(a, b);
    Worst w;
    for (size_t i = 0; i < a.size(); ++i) {
      w.add(kPow.bound, a[i], b[i], got[i], std::pow(double(a[i]), double(b[i])));
      const float want = std::pow(a[i], b[i]);
      if (i >= exact_below || (std::isfinite(want) && want != 0)) continue;
      const bool same = std::isnan(want) ? std::isnan(got[i]) : bits(got[i]) == bits(want);
      EXPECT_TRUE(same) << "pow " << jit::isa_name(isa) << "(" << a[i] << ", " << b[i]
                        << ") = " << got[i] << ", want " << want;
    }
    std::printf("[ vec_math ] pow     %-6s %s: %s\n", jit::isa_name(isa), what,
                w.str(true).c_str());
    EXPECT_LE(w.err, kPow.bound) << "pow " << jit::isa_name(isa) << ": " << w.str(true);
  }
}

TEST(VecMath, Pow) {
  std::vector<float> a, b;
  pow_grid(a, b);
  const size_t grid = a.size();
  pow_random(a, b, 1 << 20, 12345);
  check_pow(a, b, grid, "grid and random pairs");
}

TEST(VecMath, DISABLED_PowManyRandomPairs) {
  for (unsigned seed = 1; seed <= 16; ++seed) {
    std::vector<float> a, b;
    pow_random(a, b, 1 << 22, seed);
    check_pow(a, b, 0, "random pairs");
  }
}

// dst == src: the same results as with distinct registers (pow requires dst != a, b).
TEST(VecMath, InPlace) {
  const std::vector<float> x = special_inputs();
  for (const OpInfo& op : kOps) {
    if (op.op == MathOp::Pow) continue;
    for (Isa isa : host_isas()) {
      const std::vector<float> want = MathKernel(isa, op.op, default_regs(false)).run(x, x);
      const std::vector<float> got = MathKernel(isa, op.op, default_regs(true)).run(x, x);
      for (size_t i = 0; i < x.size(); ++i)
        EXPECT_EQ(bits(got[i]), bits(want[i]))
            << op.name << " " << jit::isa_name(isa) << " in place at " << x[i];
    }
  }
}

// void f(const float* canaries, const float* a, const float* b, float* regs_out): every vector
// register preloaded with a canary, one vector through the routine, all registers stored.
class CanaryKernel : public Xbyak::CodeGenerator {
 public:
  CanaryKernel(Isa isa, MathOp op, const Regs& r, int nregs) : Xbyak::CodeGenerator(16384) {
    jit::ConstPool pool(this, isa == Isa::Avx512 ? 64 : 32);
    jit::VecContext ctx{*this, isa, pool, r.scratch};
    const int bytes = ctx.lanes() * 4;
    for (int i = 0; i < nregs; ++i) vmovups(ctx.vec(i), ptr[rdi + i * bytes]);
    vmovups(ctx.vec(r.a), ptr[rsi]);
    if (op == MathOp::Pow) vmovups(ctx.vec(r.b), ptr[rdx]);
    emit_op(ctx, op, r.dst, r.a, r.b);
    for (int i = 0; i < nregs; ++i) vmovups(ptr[rcx + i * bytes], ctx.vec(i));
    vzeroupper();
    ret();
    pool.emit();
    ready();
  }
};

// Only dst and the scratch registers change; the result does not depend on which registers
// the routine is given (under AVX-512 they include registers above 15: EVEX-only encodings).
TEST(VecMath, TouchesOnlyDstAndScratch) {
  for (Isa isa : host_isas()) {
    const int lanes = jit::isa_lanes(isa), nregs = isa == Isa::Avx512 ? 32 : 16;
    const Regs r =
        isa == Isa::Avx512 ? Regs{17, 30, 5, {0, 16, 23, 31}} : Regs{7, 15, 2, {0, 9, 11, 14}};
    std::vector<float> canary(nregs * lanes), a(lanes), b(lanes);
    for (size_t i = 0; i < canary.size(); ++i) canary[i] = 1000.0f + i;
    for (int i = 0; i < lanes; ++i) {
      a[i] = 0.3f * (i - 5);
      b[i] = 1.5f + i;
    }
    for (const OpInfo& op : kOps) {
      std::vector<float> out(canary.size());
      CanaryKernel(isa, op.op, r, nregs)
          .getCode<void (*)(const float*, const float*, const float*, float*)>()(
              canary.data(), a.data(), b.data(), out.data());
      std::vector<float> pa = a, pb = b;
      pad(pa);
      pad(pb);
      const std::vector<float> want = MathKernel(isa, op.op, default_regs(false)).run(pa, pb);
      for (int reg = 0; reg < nregs; ++reg) {
        if (std::find(r.scratch.begin(), r.scratch.end(), reg) != r.scratch.end()) continue;
        for (int l = 0; l < lanes; ++l) {
          float expect = canary[reg * lanes + l];
          if (reg == r.a) expect = a[l];
          if (reg == r.b && op.op == MathOp::Pow) expect = b[l];
          if (reg == r.dst) expect = want[l];
          EXPECT_EQ(bits(out[reg * lanes + l]), bits(expect))
              << op.name << " " << jit::isa_name(isa) << " register " << reg << " lane " << l;
        }
      }
    }
  }
}

// The length of the VEX-encoded instruction at p, or 0 for anything else (EVEX starts with
// 0x62) and for opmask instructions. Enough for the instructions the routines emit: all have a
// ModRM byte; an immediate follows in map 0F3A and after the 0F opcodes 70-73 and C2-C6.
size_t vex_length(const uint8_t* p) {
  size_t i;
  int map;
  if (p[0] == 0xC5) {
    map = 1;
    i = 2;
  } else if (p[0] == 0xC4) {
    map = p[1] & 0x1F;
    i = 3;
  } else {
    return 0;
  }
  const uint8_t op = p[i++], modrm = p[i++];
  const bool opmask = (map == 1 && ((op >= 0x41 && op <= 0x4B) || (op >= 0x90 && op <= 0x99))) ||
                      (map == 3 && op >= 0x30 && op <= 0x33);
  if (opmask) return 0;
  const int mod = modrm >> 6, rm = modrm & 7;
  if (mod != 3 && rm == 4) {  // SIB; base 101 under mod 00 means a disp32
    const uint8_t sib = p[i++];
    if (mod == 0 && (sib & 7) == 5) i += 4;
  }
  if (mod == 0 && rm == 5) i += 4;  // RIP-relative
  if (mod == 1) i += 1;
  if (mod == 2) i += 4;
  const bool imm8 =
      map == 3 || (map == 1 && ((op >= 0x70 && op <= 0x73) || (op >= 0xC2 && op <= 0xC6)));
  return i + (imm8 ? 1 : 0);
}

// Whether code[0, size) is a sequence of whole VEX instructions.
bool vex_only(const uint8_t* code, size_t size) {
  size_t at = 0;
  while (at < size) {
    const size_t len = vex_length(code + at);
    if (len == 0) return false;
    at += len;
  }
  return at == size;
}

// The AVX2 routines must run on CPUs without AVX-512, which the machines running these tests
// may not be: no EVEX encoding (zmm, ymm16+, AVX-512-only instructions), no opmask register.
// (The AVX-512 routines fail the same check, which keeps the check honest.)
TEST(VecMath, Avx2CodeIsVexOnly) {
  for (const OpInfo& op : kOps)
    for (Isa isa : {Isa::Avx2, Isa::Avx512}) {
      Xbyak::CodeGenerator code(16384);
      jit::ConstPool pool(&code, isa == Isa::Avx512 ? 64 : 32);
      jit::VecContext ctx{code, isa, pool, {3, 4, 5, 6}};
      emit_op(ctx, op.op, 2, 0, 1);
      EXPECT_EQ(vex_only(code.getCode(), code.getSize()), isa == Isa::Avx2)
          << op.name << " " << jit::isa_name(isa);
      pool.emit();
    }
}

// ns per element over 1M elements (4 MB in, 4 MB out: memory traffic included) and over 4K
// elements repeated (in L1: the routine's own cost).
TEST(VecMath, DISABLED_Speed) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> any(-8.0f, 8.0f), pos(0.01f, 100.0f);
  for (size_t n : {size_t{1} << 20, size_t{4096}}) {
    std::vector<float> x(n), y(n), out(n);
    const int reps = static_cast<int>((size_t{1} << 26) / n);
    for (Isa isa : host_isas())
      for (const OpInfo& op : kOps) {
        const bool positive = op.op == MathOp::Log || op.op == MathOp::Pow;
        for (size_t i = 0; i < n; ++i) {
          x[i] = positive ? pos(rng) : any(rng);
          y[i] = any(rng);
        }
        MathKernel k(isa, op.op, default_regs(false));
        double best = 1e30;
        for (int trial = 0; trial < 5; ++trial) {
          const auto t0 = std::chrono::steady_clock::now();
          for (int rep = 0; rep < reps; ++rep) k.run(x.data(), y.data(), out.data(), n);
          const auto t1 = std::chrono::steady_clock::now();
          best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count() /
                                    (static_cast<double>(n) * reps));
        }
        std::printf("[ vec_math ] %-7s %-6s n=%-8zu %.3f ns/element\n", op.name, jit::isa_name(isa),
                    n, best);
      }
  }
}

}  // namespace
}  // namespace testing
}  // namespace ferrite
