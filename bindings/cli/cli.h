// The `ferrite` command-line tool: `run` (load, compile and run a model), `compile` (write
// the plan for a runtime-only build), `inspect`
// (compile a model and summarize its plan) and `conformance` (the ONNX node test suite).
// main.cc only forwards to cli_main, so everything here is reachable from the unit tests.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/plan/error.h"

namespace ferrite {

// A wrong command line: reported like any error but exits with status 2.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(message) {}
};

// The parsed command line of one command: positional arguments and option values in
// the order given (`--name value` or `--name=value`; a flag gets "").
struct CliArgs {
  std::vector<std::string> positional;
  std::multimap<std::string, std::string> options;

  bool has(const std::string& name) const { return options.count(name) != 0; }
  // The value of an option given at most once ("" if absent); UsageError if repeated.
  std::string get(const std::string& name) const;
  std::vector<std::string> all(const std::string& name) const;
};

struct OptionSpec {
  const char* name;  // without the leading "--"
  bool takes_value;
};

// Parses `args` against the options a command accepts; UsageError names the bad option.
CliArgs parse_cli_args(const std::string& command, const std::vector<std::string>& args,
                       const std::vector<OptionSpec>& specs);

// Parses a non-negative integer option value; UsageError naming the option otherwise.
int64_t parse_count(const std::string& option, const std::string& value);
// Parses a finite non-negative number ("1e-4", "0.5"); UsageError naming the option otherwise.
double parse_number(const std::string& option, const std::string& value);

// `backend` if this build has it ("" gives the default); UsageError listing them otherwise.
std::string checked_backend(const std::string& backend);

const char* usage_text();

// The commands, given the arguments after their name. They return the exit status and
// throw ferrite::Error (or UsageError) for what stops them.
int run_command(const std::vector<std::string>& args);
int compile_command(const std::vector<std::string>& args);
int inspect_command(const std::vector<std::string>& args);
int conformance_command(const std::vector<std::string>& args);

// The whole tool: dispatches, prints `error: <message>` on one line to stderr for any
// exception, and returns 0 (ok), 1 (failure) or 2 (usage error).
int cli_main(const std::vector<std::string>& args);

}  // namespace ferrite
