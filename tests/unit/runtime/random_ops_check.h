// Runs the random kernels of random_ops_kernels.h on the reference and on a backend and
// compares them (random_ops_bounds.h: the tolerance rule); counts what the kernels a test
// ran exercised.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/plan/interpret.h"
#include "runtime/backend.h"
#include "tests/unit/runtime/random_ops_kernels.h"

namespace ferrite {
namespace random_ops {

inline std::vector<void*> pointers(Bytes& b) {
  std::vector<void*> p;
  for (auto& v : b) p.push_back(v.data());
  return p;
}

// Runs k on the reference over a copy of `in`: the args after the run, or the error.
inline Bytes run_reference(const Kernel& k, const Bytes& in, std::string* error) {
  Bytes out = in;
  try {
    interpret_kernel(k, pointers(out).data());
  } catch (const std::exception& e) {
    *error = e.what();
  }
  return out;
}

// Runs k on a backend over a copy of `in` whose args sit between guard bytes: the args
// after the run, or the error; *overrun names an arg whose guards the run overwrote (a
// vector store past a tail, say).
inline Bytes run_backend(const KernelBackend& backend, const Kernel& k, const Bytes& in,
                         std::string* error, std::string* overrun = nullptr) {
  constexpr size_t kGuard = 64;
  constexpr uint8_t kPattern = 0xA5;
  Bytes guarded(in.size());
  std::vector<void*> args;
  for (size_t a = 0; a < in.size(); ++a) {
    guarded[a].assign(kGuard + in[a].size() + kGuard, kPattern);
    std::copy(in[a].begin(), in[a].end(), guarded[a].begin() + kGuard);
    args.push_back(guarded[a].data() + kGuard);
  }
  try {
    backend.prepare(k)->run(args.data());
  } catch (const std::exception& e) {
    *error = e.what();
  }
  Bytes out(in.size());
  for (size_t a = 0; a < in.size(); ++a) {
    const std::vector<uint8_t>& g = guarded[a];
    out[a].assign(g.begin() + kGuard, g.end() - kGuard);
    const bool intact =
        std::all_of(g.begin(), g.begin() + kGuard, [](uint8_t b) { return b == kPattern; }) &&
        std::all_of(g.end() - kGuard, g.end(), [](uint8_t b) { return b == kPattern; });
    if (!intact && overrun && overrun->empty()) *overrun = "arg " + std::to_string(a);
  }
  return out;
}

// Checks a backend's run of c against the reference's: the same error (message included),
// or every output element within its tolerance and the inputs untouched. Returns "" or the
// first difference. *ref_error gets the reference's error ("" when it ran through).
inline std::string run_and_compare(const KernelBackend& backend, const Case& c, const Bytes& in,
                                   std::string* ref_error, Usage* usage = nullptr) {
  std::string got_error;
  const Bytes want = run_reference(c.k, in, ref_error);
  if (!ref_error->empty() && !(c.error_planned && ref_error->rfind("gather ", 0) == 0))
    return "generator bug: the reference failed: " + *ref_error;
  std::string overrun;
  const Bytes got = run_backend(backend, c.k, in, &got_error, &overrun);
  if (!overrun.empty()) return "the run wrote outside " + overrun;
  if (got_error != *ref_error)
    return "errors differ: reference \"" + *ref_error + "\", " + backend.name() + " \"" +
           got_error + "\"";
  if (!ref_error->empty()) return "";
  for (size_t a = 0; a < want.size(); ++a) {
    const KernelArg& arg = c.k.args[a];
    if (!arg.output) {
      if (got[a] != in[a]) return "input arg " + std::to_string(a) + " was modified";
      continue;
    }
    for (int64_t i = 0; i < arg.elements; ++i) {
      const std::string why =
          check_element(arg.dtype, c.stored[a], want[a].data(), got[a].data(), i, usage);
      if (!why.empty())
        return "arg " + std::to_string(a) + " (" + dtype_name(arg.dtype) + ") element " +
               std::to_string(i) + ": " + why;
    }
  }
  return "";
}

// What the kernels a test ran exercised.
struct Coverage {
  int kernels = 0, tails = 0, reductions = 0, strided_reductions = 0, multi_loop = 0;
  int lane_gathers = 0, row_gathers = 0;
  int padded = 0, special = 0, f64 = 0, errors_planned = 0, errors_raised = 0;
  std::map<std::string, int> patterns, ops, reduce_kinds, stores;  // kernels having each
  Usage usage;                                                     // filled by run_and_compare

  void add(const Case& c, const std::string& ref_error) {
    const Kernel& k = c.k;
    ++kernels;
    ++patterns[c.pattern];
    if (!k.ranges.empty() && k.ranges.back() % 8 != 0) ++tails;
    reductions += k.num_reduce > 0;
    strided_reductions += k.num_reduce > 0 && reads_across(k);
    multi_loop += k.num_loops() > 1;
    lane_gathers += c.lane_gathers > 0;
    row_gathers += c.row_gathers > 0;
    padded += c.padded > 0;
    special += c.special > 0;
    errors_planned += c.error_planned;
    errors_raised += !ref_error.empty();
    std::map<std::string, bool> seen;
    bool uses_f64 = false;
    for (const Instr& in : k.code) {
      uses_f64 |= in.type == ScalarType::F64;
      seen[std::string("op ") + op_name(in.op)] = true;
      if (in.op == Op::Reduce)
        seen[std::string("reduce ") + reduce_name(in.reduce) + " " +
             scalar_type_name(k.code[in.a].type)] = true;
      if (in.op == Op::Store) seen[std::string("store ") + dtype_name(k.args[in.arg].dtype)] = true;
    }
    f64 += uses_f64;
    for (const auto& kv : seen) {
      const std::string& key = kv.first;
      if (key.rfind("op ", 0) == 0) ++ops[key.substr(3)];
      if (key.rfind("reduce ", 0) == 0) ++reduce_kinds[key.substr(7)];
      if (key.rfind("store ", 0) == 0) ++stores[key.substr(6)];
    }
  }

  // A body load walks the innermost reduction dim with a stride other than 0 and 1: the
  // reduced tensor dim is not its innermost one.
  static bool reads_across(const Kernel& k) {
    const int dims = static_cast<int>(k.ranges.size());
    for (int i = 0; i < k.post_begin; ++i) {
      AffineIndex f;
      const Instr& in = k.code[i];
      if (in.op == Op::Load && as_affine(*in.index, dims, &f) && f.coeff.back() != 0 &&
          f.coeff.back() != 1)
        return true;
    }
    return false;
  }

  std::string str() const {
    std::ostringstream os;
    os << kernels << " kernels: " << tails << " with an innermost tail (length % 8 != 0), "
       << reductions << " with reductions (" << strided_reductions
       << " reading across the reduced tensor dim), " << multi_loop << " with inner loops, "
       << lane_gathers << " lane-varying and " << row_gathers << " per-row gathers, " << padded
       << " masked loads, " << special << " NaN/inf inputs, " << f64 << " with f64 values, "
       << errors_planned << " out-of-range indices planned (" << errors_raised << " raised)\n";
    auto list = [&os](const char* what, const std::map<std::string, int>& m) {
      os << "  " << what << ":";
      for (const auto& kv : m) os << " " << kv.first << "=" << kv.second;
      os << "\n";
    };
    list("patterns", patterns);
    list("ops (kernels using)", ops);
    list("reductions", reduce_kinds);
    list("stores", stores);
    if (usage.exact + usage.inexact > 0)
      os << "  float elements: " << usage.exact << " exact, " << usage.inexact
         << " within a tolerance (" << usage.differing
         << " not bitwise equal; the largest |got - want| / tolerance " << usage.worst << ")\n";
    return os.str();
  }
};

}  // namespace random_ops
}  // namespace ferrite
