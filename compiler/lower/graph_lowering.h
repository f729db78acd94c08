// GraphLowering (Inductor's GraphLowering.run): walks the graph in topological order, maps
// each Value to a TensorBox by calling the op's lowering, and applies the realize policy
// after every node. The result is the loop-IR program: buffers, and the computed buffers
// and extern calls in execution order. Constant subgraphs (shape arithmetic, weight
// transposes) are evaluated at compile time with the reference interpreter.
#pragma once

#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/loopir/ir.h"
#include "compiler/loopir/shape_env.h"
#include "compiler/plan/epilogue.h"
#include "compiler/plan/resource_limits.h"

namespace ferrite {

struct ExternOperand {
  Buffer* buffer = nullptr;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  int64_t offset = 0;
  // Symbolic shape, strides and offset (loopir/shape_env.h), set together, or none.
  std::vector<Index> sym_shape, sym_strides;
  Index sym_offset;
};

struct ExternNode {
  ExternOp op = ExternOp::MatMul;
  std::map<std::string, int64_t> ints;
  std::map<std::string, double> floats;
  std::vector<ExternOperand> inputs;
  std::vector<Buffer*> outputs;
  std::string origin;
  EpilogueBody epilogue;  // MatMul/Conv/ConvTranspose/SegmentReduce (plan/epilogue.h)
  // Per output (or empty: all dense): the extern sees output i as buffer dims permuted,
  // its dim d being the buffer's dim output_perms[i][d] (channels-last storage of an NCHW
  // result: buffer [N, H, W, C], perm {0, 3, 1, 2}).
  std::vector<std::vector<int>> output_perms;
  // Set by a lowering whose call holds no size but in its operands' and outputs' sym sizes
  // (its ints and floats are the same for every value of the symbols).
  bool symbolic = false;
};

// One step of the program. A computed buffer's kernel is traced when the buffer is
// realized, so it reads exactly the buffers realized before it (producers realized later
// stay inlined in it, as in Inductor, where loaders are captured at lowering time).
// The item runs only when the bool scalar `cond` holds `value` at run time (an If branch).
struct LoweredGuard {
  Buffer* cond = nullptr;
  bool value = true;
};

struct LoweredItem {
  Buffer* computed = nullptr;  // a buffer computed by `kernel`
  int extern_index = -1;       // or an extern call
  Kernel kernel;
  std::vector<Buffer*> args;  // the kernel's args
  // A symbolic compile's kernel: its loop ranges over the symbols (its indices may hold Sym
  // leaves; kernel.ranges are the hints).
  std::optional<std::vector<Index>> sym_ranges;
  std::vector<LoweredGuard> guards;
};

struct LoweredProgram {
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<ExternNode> externs;
  std::vector<LoweredItem> order;
  std::vector<Buffer*> inputs;   // one per graph input
  std::vector<Buffer*> outputs;  // one per graph output, each its own buffer
  // The symbols the program's sym sizes are over (a symbolic compile's), or none, and the
  // assumptions the lowerings made about them.
  std::vector<ShapeSymbol> symbols;
  std::vector<SymGuard> guards;
  // The symbols' values (int64 [symbols.size()]), when a kernel reads one (a Range from a
  // run-time size, a concatenation's offset): the plan holds it as a constant its instances
  // write (FormulaField::SymbolValues); while lowering it is an Input, never folded.
  Buffer* symbol_values = nullptr;
};

// A listing of the program: each buffer in execution order with its origin and definition.
std::string lowered_program_to_string(const LoweredProgram& prog);

class GraphLowering {
 public:
  // input_values: see compile_graph (compile.h).
  GraphLowering(const Graph& g, const std::vector<TensorType>& input_types,
                const std::vector<std::shared_ptr<const TensorData>>& input_values = {});
  // Compiles symbolically over `shapes`' symbols (input_types are their hints): values,
  // buffers and calls carry sym sizes, and what cannot throws NotSymbolicError.
  void set_shape_env(const ShapeEnv* shapes) { shapes_ = shapes; }
  bool symbolic() const { return shapes_ != nullptr; }
  // A formula's value at the symbols' hints (a symbolic compile's).
  int64_t hint(const Index& formula) const;
  // The buffer of the symbols' values that kernels load (LoweredProgram::symbol_values).
  Buffer* symbol_values();
  // Records that the plan holds only while lo <= formula <= hi (a guard; `why` names the
  // node). Where it does not hold at the hints, the compile is not symbolic.
  void assume(const Index& formula, int64_t lo, int64_t hi, const std::string& why);
  LoweredProgram run();

  // For lowerings ---------------------------------------------------------------------
  Buffer* new_buffer(const std::string& name, DType dtype, std::vector<int64_t> size,
                     BufferOrigin origin);
  // Realizes the storage under `t` (Inductor's StorageBox.realize).
  void realize(const TensorBoxPtr& t);
  // Realizes the unrealized storage under `t` as a part of `owner` (an Assembled buffer):
  // its kernel writes elements [offset, offset + t's elements) of owner, in place.
  void realize_into(const TensorBoxPtr& t, Buffer* owner, int64_t offset);
  // How many nodes (and graph outputs) read `v`.
  int uses(const Value* v) const;
  // `t` as a strided view of a realized buffer; copies into a fresh buffer when the view is
  // not expressible as strides.
  ExternOperand extern_operand(const TensorBoxPtr& t);
  // The same as a box: `t` realized, or a realized copy of it.
  TensorBoxPtr realize_strided(const TensorBoxPtr& t);
  // Adds the call to the program; its index in LoweredProgram::externs.
  size_t add_extern(ExternNode node);
  ExternNode& extern_node(size_t index) { return prog_.externs[index]; }
  // Items in the program so far (a lowering that must know whether another realized one).
  size_t program_size() const { return prog_.order.size(); }
  // t (a pointwise value [N, C, spatial...]) realized stored [N, spatial..., C], as a view in
  // logical order.
  TensorBoxPtr realize_channels_last(const TensorBoxPtr& t);
  // A value of fewer channels than this is stored in logical order even in a channels-last
  // region: its channels-last store strides by the channel count, which a vector backend
  // takes only along the few channels (an image's 3: 3 of 16 lanes, 0.38 ms to quantize
  // mobilenet's input against ~0.02 stored in order), and the convolution reading it reorders
  // it itself (oneDNN) or gathers its windows channels-last anyway (the portable backend).
  static constexpr int64_t kMinChannelsLast = 8;
  // The contents of `t` when it is a compile-time constant (folding it if it can), or null.
  std::shared_ptr<const TensorData> constant_data(const TensorBoxPtr& t);

  // Lowers the nodes of `body` (an If branch, a Loop or Scan body) inline: its inputs bound
  // to `args`, its captures to the values of the same name in the enclosing graphs.
  // Returns its outputs, unrealized. Throws naming `owner` on arity mismatches.
  std::vector<TensorBoxPtr> lower_subgraph(const Graph& body, const std::vector<TensorBoxPtr>& args,
                                           const Node& owner);
  // Realizes the values `body` captures, so that guarded code never realizes (and so
  // conditionally computes) a value that unguarded code reads later.
  void realize_captures(const Graph& body);
  // Whether this compile is the one specialized on input values (the engine's second try,
  // given the small inputs' values, null for the others): a value still not constant then
  // is computed at run time, and the node needing it runs on its own (NeedsCutError).
  bool values_asked() const;
  // Every kernel and extern added between push_guard and pop_guard runs only when `cond`
  // (a bool scalar, realized here) holds `value`.
  void push_guard(const TensorBoxPtr& cond, bool value);
  void pop_guard();
  // The unrolling budget (CompileOptions::max_unrolled_nodes) and what the unrolling
  // lowerings (Loop, Scan, recurrent ops) have charged to it (lower/unroll_budget.h).
  int64_t max_unrolled_nodes = kDefaultMaxUnrolledNodes;
  int64_t unrolled_nodes = 0;
  // The memory limit (CompileOptions::memory_limit, resolved), for a lowering that builds a
  // constant as large as an output dim (Resize's tap tables) before the plan is checked.
  int64_t memory_limit = std::numeric_limits<int64_t>::max();

 private:
  struct TraceStats {
    int reads = 0;
    int compute = 0;
    bool all_constant = true;
    int height = 0;  // of the walks nested in its inlined definition
  };
  TraceStats trace(const TensorBoxPtr& t);
  void lower_node(const Node& n);
  TensorBoxPtr bound_view(const TensorBoxPtr& t);
  TensorBoxPtr box_for(const Value* v);
  const Value* resolve_capture(const Value* v) const;
  // Realizes `t` (the value v of node n) when the policy says so (narrow types, values read
  // often or expensive to recompute): in channels-last order when n has ferrite_store, or
  // is a convolution marked channels-last whose output is computed (QLinearConv's
  // requantization; graph/layout_attr.h), or a value of the epilogue of such a convolution
  // (a half one's, whose narrow values are realized). Returns the box that stands for v.
  TensorBoxPtr apply_realize_policy(const Node& n, const Value* v, const TensorBoxPtr& t);
  TensorBoxPtr try_fold(const TensorBoxPtr& t);
  bool fold_buffer(Buffer* buf);
  // Whether `b` can never become a compile-time constant: an input, an extern's result,
  // assembled storage, or a computed buffer that reads one (whatever is realized later,
  // its kernel reads such a buffer or one computed from it), so fold_buffer need not
  // rebuild its kernel for every view of it that is lowered.
  bool never_constant(const Buffer* b) const;
  void note_args(Buffer* buf, const std::vector<Buffer*>& args);
  Buffer* realize_output(const TensorBoxPtr& t, int index);

  const Graph& g_;
  const ShapeEnv* shapes_ = nullptr;
  std::vector<TensorType> input_types_;
  std::vector<std::shared_ptr<const TensorData>> input_values_;
  bool values_asked_ = false;  // input_values were given (some maybe null)
  LoweredProgram prog_;
  std::map<const Value*, TensorBoxPtr> env_;
  std::map<const Value*, int> uses_;
  std::vector<const Graph*> scopes_;  // the graph being lowered, innermost last
  std::vector<const Node*> owners_;   // the node of each subgraph in scopes_ (after the first)
  std::vector<LoweredGuard> guards_;
  int next_buffer_ = 0;
  int next_kernel_ = 0;
  std::unique_ptr<KernelBuilder> tracer_;         // trace's memoizing builder
  std::unordered_set<const Buffer*> unfoldable_;  // see never_constant
  double fold_work_ = 0;                          // of the large folds so far (fold_buffer)
};

}  // namespace ferrite
