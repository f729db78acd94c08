// Resource limits (resource_limits.h): sizes, defaults and the checks' messages.
#include "compiler/plan/resource_limits.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

#ifdef __EMSCRIPTEN__
#include <emscripten/heap.h>
#else
#include <sys/resource.h>
#include <unistd.h>
#endif

namespace ferrite {
namespace {

constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();

int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? kNoLimit : r;
}

// "12.1 GiB"-style text for a message.
std::string readable(int64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  std::string s = str_cat(std::round(v * 10) / 10);
  return s + " " + units[u];
}

// The memory this process may use: physical memory, or less under RLIMIT_AS.
int64_t memory_available_to_process() {
#ifdef __EMSCRIPTEN__
  return static_cast<int64_t>(emscripten_get_heap_max());
#else
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  int64_t bytes = pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : int64_t{1} << 32;
  struct rlimit as;
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY &&
      as.rlim_cur < static_cast<rlim_t>(bytes))
    bytes = static_cast<int64_t>(as.rlim_cur);
  return bytes;
#endif
}

// The environment variable `name` parsed by `parse`, or `fallback` when it is unset or empty.
template <class F>
int64_t from_environment(const char* name, int64_t fallback, F parse) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  return parse(std::string(v));
}

// "N bytes", with " (X GiB)" past 1 KiB.
std::string bytes_text(int64_t bytes) {
  const std::string n = bytes == kNoLimit ? "more than 2^63" : str_cat(bytes);
  return bytes < 1024 ? n + " bytes" : n + " bytes (" + readable(bytes) + ")";
}

}  // namespace

int64_t parse_memory_size(const std::string& text, const std::string& what) {
  std::string t;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) t += static_cast<char>(std::toupper(c));
  if (t == "NONE" || t == "UNLIMITED") return kNoLimit;
  const char* begin = t.c_str();
  char* end = nullptr;
  const double number = std::strtod(begin, &end);
  std::string unit(end);
  if (unit.size() >= 2 && unit.compare(unit.size() - 2, 2, "IB") == 0) {
    unit.erase(unit.size() - 2);
  } else if (!unit.empty() && unit.back() == 'B') {
    unit.pop_back();
  }
  const std::string units = "KMGTPE";
  double scale = 1;
  if (unit.size() == 1 && units.find(unit[0]) != std::string::npos) {
    scale = std::ldexp(1.0, 10 * static_cast<int>(units.find(unit[0]) + 1));
  } else if (!unit.empty()) {
    end = nullptr;
  }
  const double bytes = number * scale;
  if (end == begin || !end || !std::isfinite(bytes) || bytes < 1)
    fail(what, ": '", text, "' is not a memory size (bytes, or with K, M, G or T, or 'none')");
  return bytes >= 9.2e18 ? kNoLimit : static_cast<int64_t>(bytes);
}

int64_t default_memory_limit() {
  return from_environment(
      "FERRITE_MEMORY_LIMIT", memory_available_to_process() / 4 * 3,
      [](const std::string& v) { return parse_memory_size(v, "FERRITE_MEMORY_LIMIT"); });
}

int64_t memory_limit_or_default(int64_t bytes) {
  return bytes > 0 ? bytes : default_memory_limit();
}

int64_t default_max_unrolled_nodes() {
  return from_environment(
      "FERRITE_MAX_UNROLLED_NODES", kDefaultMaxUnrolledNodes, [](const std::string& v) {
        char* end = nullptr;
        const long long n = std::strtoll(v.c_str(), &end, 10);
        if (end == v.c_str() || *end != '\0' || n < 1)
          fail("FERRITE_MAX_UNROLLED_NODES: '", v, "' is not a positive number of nodes");
        return static_cast<int64_t>(n);
      });
}

int64_t max_unrolled_nodes_or_default(int64_t nodes) {
  return nodes > 0 ? nodes : default_max_unrolled_nodes();
}

int64_t PlanMemory::total() const {
  return saturating_add(saturating_add(pool, constants), outputs);
}

PlanMemory plan_memory(const Plan& plan) {
  PlanMemory m;
  m.pool = std::max<int64_t>(plan.pool_bytes, 0);
  for (const ConstantBytes& c : plan.constants)
    m.constants = saturating_add(m.constants, static_cast<int64_t>(c.size()));
  for (const PackedConstant& p : plan.packed)
    m.constants = saturating_add(m.constants, static_cast<int64_t>(p.bytes.size()));
  for (int32_t id : plan.outputs) {
    if (id < 0 || static_cast<size_t>(id) >= plan.buffers.size()) continue;  // validate_plan's
    int64_t bytes = static_cast<int64_t>(dtype_size(plan.buffers[id].dtype));
    for (int64_t d : plan.buffers[id].shape)
      if (d < 0 || __builtin_mul_overflow(bytes, d, &bytes)) bytes = kNoLimit;
    m.outputs = saturating_add(m.outputs, bytes);
  }
  return m;
}

void check_memory_limit(int64_t bytes, int64_t limit, const std::string& what) {
  if (bytes <= limit) return;
  throw LimitError(str_cat(what, " needs ", bytes_text(bytes), ", more than the memory limit of ",
                           bytes_text(limit),
                           "; set it with --memory-limit or FERRITE_MEMORY_LIMIT"));
}

void check_plan_memory(const Plan& plan, int64_t limit, int64_t extra) {
  const PlanMemory m = plan_memory(plan);
  const int64_t total = saturating_add(m.total(), extra);
  if (total <= limit) return;
  std::string parts = str_cat("intermediates ", readable(m.pool), ", constants ",
                              readable(m.constants), ", outputs ", readable(m.outputs));
  if (extra > 0) parts += str_cat(", scratch ", readable(extra));
  check_memory_limit(total, limit, str_cat("the model (", parts, ")"));
}

size_t checked_size(int64_t bytes, const std::string& what) {
  if (bytes < 0 || static_cast<uint64_t>(bytes) > std::numeric_limits<size_t>::max())
    throw LimitError(str_cat(what, ": ", bytes, " bytes do not fit this machine's address space"));
  return static_cast<size_t>(bytes);
}

}  // namespace ferrite
