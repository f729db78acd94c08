// The ONNX backend test runner behind `ferrite conformance`. A case is a directory holding
// model.onnx and test_data_set_*/{input,output}_N.pb; it passes when every data set's
// outputs match (tensor_values.h: compare_tensors, by default rtol 1e-3, atol 1e-7).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bindings/engine/engine.h"

namespace ferrite {

enum class CaseStatus { Pass, Fail, Skip };

struct CaseResult {
  CaseStatus status = CaseStatus::Fail;
  std::string reason;         // first line of the error or mismatch; empty on Pass
  bool without_plan = false;  // via_plan, but the plan depends on input values
};

// How outputs are compared: per element within rtol/atol (the ONNX backend tests' rule),
// or, when max_rel_err is set, per tensor (compare_tensors_normwise; for whole models).
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
  std::optional<double> max_rel_err;
};

// Runs one case; never throws. UnsupportedError and tensors of dtypes Ferrite cannot hold
// (string) make it Skip; any other error or mismatch makes it Fail. With `via_plan` each
// data set runs through its compiled plan, serialized and loaded again (a plan that
// depends on input values cannot be; those run directly and set `without_plan`).
CaseResult run_conformance_case(const std::string& case_dir, const EngineOptions& options,
                                const Tolerance& tolerance = Tolerance(), bool via_plan = false);

// The case directories under `dir` (names, sorted) that contain a model.onnx and at least
// one test_data_set_* directory.
std::vector<std::string> list_conformance_cases(const std::string& dir);

// Case names from an expectation file: one per line, '#' starts a comment.
std::set<std::string> read_expect_file(const std::string& path);

}  // namespace ferrite
