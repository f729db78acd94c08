// Resource limits: how much memory one compiled model may hold, and how many nodes the
// compiler may unroll (Loop, Scan, RNN steps), so that a model whose shapes declare an
// intermediate of hundreds of GB, or a loop of a million iterations, gets a clear error
// before anything is allocated or minutes are spent — never an out-of-memory kill, a
// sanitizer's abort on an oversized allocation, or a 32-bit size that wraps in wasm. In
// the plan layer because both sides check: the compiler once it has planned the memory,
// the runtime again when it loads a plan (plans are untrusted input).
//
// Set per engine (EngineOptions: session.memory_limit, compile.memory_limit and
// compile.max_unrolled_nodes; the CLI's --memory-limit and --max-unrolled-nodes) or for
// every door at once by the environment variables FERRITE_MEMORY_LIMIT and
// FERRITE_MAX_UNROLLED_NODES, which give the defaults.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/plan/error.h"
#include "compiler/plan/plan.h"

namespace ferrite {

// A model needs more than a limit allows.
class LimitError : public Error {
 public:
  explicit LimitError(const std::string& message) : Error(message) {}
};

// "1073741824", "512M", "8G", "1.5T" (K, M, G, T: powers of 1024; a trailing "B" or "iB" is
// allowed), or "none" (no limit). Throws ferrite::Error naming `what` otherwise.
int64_t parse_memory_size(const std::string& text, const std::string& what);

// FERRITE_MEMORY_LIMIT when set, else 3/4 of the physical memory, or of the address space
// the process may use (RLIMIT_AS, `ulimit -v`) where that is smaller; in wasm, 3/4 of the
// largest heap the module may grow to. Throws naming the variable when it does not parse.
int64_t default_memory_limit();
// `bytes` when positive, else default_memory_limit().
int64_t memory_limit_or_default(int64_t bytes);

// The most nodes that unrolling may lower in one compile: FERRITE_MAX_UNROLLED_NODES when
// set, else kDefaultMaxUnrolledNodes. 50,000 keeps a compile within seconds: a Scan of
// 32,768 steps (65,538 nodes) took 5.9 s natively, one of 65,536 steps 16 s (mostly in
// fusion), which the fuzz campaign of issue 25 reported as a hang.
constexpr int64_t kDefaultMaxUnrolledNodes = 50000;
int64_t default_max_unrolled_nodes();
int64_t max_unrolled_nodes_or_default(int64_t nodes);

// What a session of `plan` holds besides its extern scratch: the pool of intermediates, the
// constants (as the plan carries them, packed forms included) and one run's outputs. Sums
// saturate at INT64_MAX.
struct PlanMemory {
  int64_t pool = 0, constants = 0, outputs = 0;
  int64_t total() const;
};
PlanMemory plan_memory(const Plan& plan);

// Throws LimitError unless `bytes` <= `limit`: "<what> needs N bytes (X GiB), more than the
// memory limit of L bytes (Y GiB); set it with --memory-limit or FERRITE_MEMORY_LIMIT".
void check_memory_limit(int64_t bytes, int64_t limit, const std::string& what);
// check_memory_limit of plan_memory(plan) plus `extra`, with its parts in the message.
void check_plan_memory(const Plan& plan, int64_t limit, int64_t extra = 0);

// `bytes` as a size_t, for an allocation; throws where it does not fit (32-bit wasm).
size_t checked_size(int64_t bytes, const std::string& what);

}  // namespace ferrite
