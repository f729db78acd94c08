// What the fuzz targets feed the code under test: small concrete types for a graph's declared
// inputs (symbolic dims set small), a compiled plan for them, generated input tensors, and
// the size budget that keeps a run on a tiny input tiny. Also the targets' one rule on
// errors: a ferrite::Error is the expected outcome of bad input; anything else a target lets
// escape (another exception type reaches std::terminate at its throw site, with the stack
// libFuzzer prints), as does every crash, hang and sanitizer report.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "compiler/compile.h"
#include "compiler/graph/graph.h"
#include "compiler/plan/plan.h"
#include "runtime/tensor.h"

namespace ferrite::fuzz {

constexpr int64_t kRunBudgetBytes = 4 << 20;

// One type per graph input: the declared dtype and dims, each symbolic or unknown dim set
// to 1, 2 or 3 (by its name, so that inputs sharing a name share the value; unnamed: 1),
// an input of unknown rank a scalar. Throws ferrite::Error where the Engine never compiles:
// an element type it cannot hold (Engine::init refuses the model), or an input of more
// than 2^40 bytes (no tensor of that shape can be fed).
std::vector<TensorType> small_input_types(const Graph& g);

// Generated values for those types (as `ferrite run` makes them: floats in [-1,1), ints in
// [0,4)); throws ferrite::Error for a dtype that has no values (strings, undefined) and for
// inputs of more than kRunBudgetBytes in all.
std::vector<Tensor> generated_inputs(const std::vector<TensorType>& types);
std::vector<Tensor> generated_inputs(const Plan& plan);

// compile_graph for `types`; when the plan needs input values (NeedsInputValueError), again
// with `values` (the generated inputs), as the Engine does.
Plan compile_for(const Graph& g, const std::vector<TensorType>& types,
                 const std::vector<Tensor>& values, const CompileOptions& options);

// Compile options varied by the input's size (deterministic per input): channels-last
// convolutions (what the jit engine asks for) on half the inputs, fusion off on one in eight;
// and a memory limit of kCompileMemoryLimit. The targets run only plans within
// kRunBudgetBytes; a larger plan is compiled through every stage and then refused by the
// limit, and a compile that would build constants past it (Resize's tap tables, as long as
// an output dim) is refused before it builds them: under the fuzz build's instrumentation
// each byte of a constant costs a traced loop iteration in every copy, so tables of 512 MB
// (a Resize to [1, 1, 16777219, 3]) took 19 s to compile, 0.9 s natively.
constexpr int64_t kCompileMemoryLimit = int64_t{256} << 20;
CompileOptions options_for(size_t input_size);

// Whether running `plan` stays small: every buffer's bytes, the pool and the constants
// together at most kRunBudgetBytes (no overflow), and its estimated work (estimated_work)
// at most kRunBudgetWork, so that a run on all three backends takes well under a second
// under ASan, not the fuzzer's 10 s or the machine's memory. Larger plans are legitimate;
// the run targets skip them (a window of 2^31 points over a tiny input too: the compile
// targets and the regression tests catch those).
bool fits_budget(const Plan& plan);
constexpr double kRunBudgetWork = 2e7;

// Scalar operations a run takes, roughly: per kernel step its iteration points times its
// instructions; per extern its output elements times the inner dimension (MatMul's K, a
// convolution's weights per output channel), or its operands' elements for the others.
double estimated_work(const Plan& plan);

// Registers the build's backends (jit natively) once; the names, reference first.
const std::vector<std::string>& fuzz_backends();

}  // namespace ferrite::fuzz
