// What the JIT decides about a Kernel before it emits code: which dimension is vectorized,
// which loops run as scalar odometers, where each instruction is computed (loop-invariant
// code is placed at the outermost loop where its inputs are known), how each memory access
// walks the vector lanes, and whether the kernel is one the code generator handles at all
// (analyze_kernel returns the reason when not, and the backend runs that kernel on the
// portable interpreter instead).
//
// Loop nest per mode (S = scalar odometer, V = vector loop over the vector dim in chunks of
// `lanes`, the last chunk masked):
//   Pointwise   Entry; S(outer dims but the last) { Row; V(last dim) { Vec } }
//   LanesInner  Entry; S(outer dims) { Row; for each inner loop L { Hoist(L); init
//               accumulators; S(reduce dims but the last) { Step(L); V(last dim) { Vec(L) } }
//               horizontal reduce } Post }
//   LanesOuter  Entry; S(outer dims but the last) { Row; V(last outer dim) { Chunk; for each
//               inner loop L { Hoist(L); init; S(all reduce dims) { Step(L) } } Post } }
// Values computed in Entry, Row, and in LanesInner's Hoist/Step/Post are the same in every
// lane ("uniform"); the others vary along the lanes. Uniform values are kept as one scalar
// (lane 0) in memory and broadcast where a vector needs them.
//
// Value representation: F32 in 32-bit lanes; Bool as 32-bit lane masks (all ones / zero);
// I64 values that vary along the lanes must have a proven range inside int32 (loop
// variables, ArgMax results, checked indices...) and are kept as int32 lanes (int64 storage
// read along the lanes: see Wide); uniform I64 values are int64 scalars computed in
// general-purpose registers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/plan/kernel.h"
#include "compiler/plan/linear_index.h"
#include "jit/cpu_isa.h"

namespace ferrite {
namespace jit {

enum class Mode : uint8_t { Pointwise, LanesInner, LanesOuter };
enum class Where : uint8_t { Entry, Row, Chunk, Hoist, Step, Vec, Post };
const char* where_name(Where w);

// A closed interval of int64 values; `known` false means any int64.
struct Range {
  bool known = false;
  int64_t lo = 0, hi = 0;
};

// One Load or Store. Its element index is form.offset + sum(coeff[v] * var_v) +
// sum(factor * term); the scalar-variable part (offset and outer/reduce scalar variables)
// is kept up to date by the loops in a pointer per access, the vector variable's part is
// added per chunk, the uniform terms (uniform I64 values, or div/mod/products of uniform
// operands) where the access runs, and the lane-varying terms (lane_varying: see
// vector_terms) per lane.
struct Access {
  int instr = -1;
  int arg = -1;
  int esize = 0;                    // bytes per element of the arg
  LinearForm form;                  // over the kernel's variables
  int64_t vec_coeff = 0;            // form.coeff[vec_var] (0 when the access is uniform)
  bool uses_reduce_scalar = false;  // some reduce scalar variable has a nonzero coefficient
  // A gather (32-bit loads only): some terms vary along the lanes. Each is a Value that
  // varies along the lanes (int32 lanes), or a product, floor division or remainder whose
  // operands involve the vector variable or such Values, e.g. x[h / 2, w / 2] with lanes
  // along w (nearest upsampling), DepthToSpace, reshapes of transposed views. Their part of
  // the offset is computed per lane in int32 lanes (the lanes' vector variable is rbx +
  // lane; emitter_lane_index.cc), the rest of the form gives the base pointer. The analysis
  // proved every form and term inside int32, each divisor a positive int32 constant (which
  // replaced the divisor's form), the lane offsets in bytes inside int32, and the index
  // inside the arg (no masked reads through such terms).
  bool vector_terms = false;
  // A masked Load whose index is proven inside the arg only where its mask is true (the
  // contract: masked-off points do not touch memory): the reads themselves are masked.
  bool masked_reads = false;
  // A masked Load whose index the analysis could not prove inside the arg where its mask
  // holds (a corrupt or hand-made plan: the compiler's masks give proofs, mask_bounds.h):
  // before the read, the addresses of the lanes it reads are checked against the arg's
  // (JitCall::bounds), and one outside ends the kernel with an error (emitter_bounds.cc).
  bool checked = false;
};

// How a lane-varying Load of int64 storage is kept (Layout::wide).
//   Narrow: saturated to int32 lanes. Admitted when every use is the operand of a vector
//           CheckIndex, whose verdict saturation cannot change (its bound fits int32).
//   Copy:   never in registers; each Store of it copies the 64-bit elements from the
//           Load's address (every use is such a Store).
//   Float:  converted to f32 lanes as it is loaded (every use is a Cast to F32, which then
//           only moves it).
// and for a lane-varying Cast F32 -> I64:
//   Convert: the value keeps the f32 lanes; each of its uses, a Store to int64 storage,
//            converts them to int64 as the reference (truncation, NaN -> 0, saturation).
enum class Wide : uint8_t { None, Narrow, Copy, Float, Convert };

struct Layout {
  Kernel k;  // after merge_loop_dims
  Isa isa = Isa::None;
  int lanes = 0;
  Mode mode = Mode::Pointwise;
  int vec_var = -1;
  std::vector<int> outer_scalar;   // variables of the row odometer, outermost first
  std::vector<int> reduce_scalar;  // variables of the step odometer, outermost first
  std::vector<Where> where;        // per instruction
  std::vector<bool> uniform;       // per instruction
  std::vector<int> loop;           // per instruction: inner loop (body), num_loops (post)
  std::vector<Range> range;        // per I64 instruction: proven range
  std::vector<int> access;         // per instruction: index into accesses, or -1
  std::vector<Wide> wide;          // per instruction: lane-varying int64 loads
  std::vector<Access> accesses;

  bool varying(Where w) const;
  int num_loops() const { return k.num_loops(); }
};

// Fills `out` and returns "" when the code generator can compile `validated` for `isa`,
// else a short reason ("op Sin", "varying I64 value %12 of unknown range", ...).
std::string analyze_kernel(const Kernel& validated, Isa isa, Layout* out);

// Whether a term (or form) of an access's index differs between the lanes of a vector
// access: a Value that varies along the lanes, the vector variable, or a product / quotient
// / remainder of such forms.
bool lane_varying(const Layout& L, const LinearTerm& t);
bool lane_varying(const Layout& L, const LinearForm& f);

// Loop dimensions of the row odometer at most (JitCall::row_vars has room for as many).
constexpr size_t kMaxRowVars = 16;

// Vector registers the per-lane evaluation of a lane-varying term may use at once.
constexpr int kLaneIndexRegs = 5;

// Pow(x, c) for c in {-1, 1, 2, 3} is computed by multiplications (emitter_values.cc), exactly
// as the reference's std::pow for those exponents up to one rounding per multiplication.
bool small_integer_exponent(const Instr& exponent);

}  // namespace jit
}  // namespace ferrite
