// What `run` and `inspect` share: loading a model with file-level error messages, and the
// inputs to compile it for (`--input NAME=FILE.npy`, the rest generated).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bindings/cli/cli.h"
#include "bindings/engine/engine.h"

namespace ferrite {

// Loads MODEL; a missing file or a malformed model gives an Error naming the file.
std::unique_ptr<Engine> load_model(const std::string& path, const EngineOptions& options);

// `--input NAME=FILE.npy` values, read in the order given.
std::vector<std::pair<std::string, Tensor>> read_inputs(const CliArgs& args);

// One run with these feeds, through values (outputs may be sequences or optionals).
std::vector<EngineValue> run_once(Engine& engine,
                                  const std::vector<std::pair<std::string, const Tensor*>>& feeds);

// Generates every declared input the command line did not give (floats uniform in [-1,1),
// integers in [0,4), bools false, symbolic dims 1; fixed seed) and prints a note for each.
// An input larger than the memory limit (`options`'s, or the default) is refused unmade.
void add_generated_inputs(const Engine& engine, const EngineOptions& options,
                          std::vector<std::pair<std::string, Tensor>>* inputs);

// `--dump DIR`, else the environment variable FERRITE_DUMP, else "".
std::string dump_dir_option(const CliArgs& args);
// --backend, --isa, --threads and the dump directory into the session options (the
// options each command lists must include "backend", "isa" and "threads").
void apply_session_options(const CliArgs& args, SessionOptions* session);
// --dump DIR (dump_dir_option), --no-fusion, --memory-limit SIZE and --max-unrolled-nodes N
// (resource_limits.h) into the engine options (the options each command lists must include
// all four).
void apply_compile_options(const CliArgs& args, EngineOptions* options);

}  // namespace ferrite
