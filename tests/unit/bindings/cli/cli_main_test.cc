// Command-line parsing and the exit codes of cli_main (usage 2, failure 1, help 0). The
// exact `error:` lines are checked end to end by tests/cli/errors.sh.
#include "bindings/cli/cli.h"

#include <gtest/gtest.h>

#include "bindings/engine/engine.h"

#include "runtime/session.h"

namespace ferrite {
namespace {

const std::vector<OptionSpec> kSpecs = {{"input", true}, {"bench", true}, {"verbose", false}};

TEST(CliArgs, ParsesPositionalsAndBothOptionForms) {
  const CliArgs a = parse_cli_args(
      "run", {"model.onnx", "--input", "x=a.npy", "--input=y=b.npy", "--verbose", "--bench=3"},
      kSpecs);
  EXPECT_EQ(a.positional, std::vector<std::string>{"model.onnx"});
  EXPECT_EQ(a.all("input"), (std::vector<std::string>{"x=a.npy", "y=b.npy"}));
  EXPECT_TRUE(a.has("verbose"));
  EXPECT_EQ(a.get("bench"), "3");
  EXPECT_EQ(a.get("absent"), "");
  EXPECT_THROW(a.get("input"), UsageError);  // given twice where one is expected
}

TEST(CliArgs, RejectsBadOptions) {
  EXPECT_THROW(parse_cli_args("run", {"--nope"}, kSpecs), UsageError);
  EXPECT_THROW(parse_cli_args("run", {"-x"}, kSpecs), UsageError);
  EXPECT_THROW(parse_cli_args("run", {"--input"}, kSpecs), UsageError);
  EXPECT_THROW(parse_cli_args("run", {"--verbose=1"}, kSpecs), UsageError);
  try {
    parse_cli_args("conformance", {"--frob"}, kSpecs);
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "unknown option '--frob' for 'conformance'");
  }
}

TEST(CliArgs, ParsesCounts) {
  EXPECT_EQ(parse_count("bench", "50"), 50);
  EXPECT_EQ(parse_count("bench", "0"), 0);
  EXPECT_THROW(parse_count("bench", "-1"), UsageError);
  EXPECT_THROW(parse_count("bench", "5x"), UsageError);
  EXPECT_THROW(parse_count("bench", ""), UsageError);
  EXPECT_THROW(parse_count("bench", "99999999999"), UsageError);
}

TEST(CliArgs, ParsesNumbers) {
  EXPECT_EQ(parse_number("rtol", "1e-4"), 1e-4);
  EXPECT_EQ(parse_number("atol", "0"), 0.0);
  EXPECT_EQ(parse_number("max-rel-err", "0.5"), 0.5);
  EXPECT_THROW(parse_number("rtol", "-1e-3"), UsageError);
  EXPECT_THROW(parse_number("rtol", "1e-3x"), UsageError);
  EXPECT_THROW(parse_number("rtol", ""), UsageError);
  EXPECT_THROW(parse_number("rtol", "nan"), UsageError);
  EXPECT_THROW(parse_number("rtol", "inf"), UsageError);
}

TEST(CliMain, ExitCodes) {
  EXPECT_EQ(cli_main({}), 0);
  EXPECT_EQ(cli_main({"--help"}), 0);
  EXPECT_EQ(cli_main({"help"}), 0);
  EXPECT_EQ(cli_main({"run", "--help"}), 0);
  EXPECT_EQ(cli_main({"frobnicate"}), 2);
  EXPECT_EQ(cli_main({"run"}), 2);
  EXPECT_EQ(cli_main({"run", "a.onnx", "b.onnx"}), 2);
  EXPECT_EQ(cli_main({"run", "a.onnx", "--bench", "0"}), 2);
  EXPECT_EQ(cli_main({"run", "a.onnx", "--warmup", "3"}), 2);
  EXPECT_EQ(cli_main({"run", "a.onnx", "--bench-json", "t.json"}), 2);
  EXPECT_EQ(cli_main({"run", "a.onnx", "--bench", "2", "--warmup", "x"}), 2);
  EXPECT_EQ(cli_main({"run", "a.onnx", "--backend", "nope"}), 2);
  EXPECT_EQ(cli_main({"run", "/nonexistent/model.onnx"}), 1);
  EXPECT_EQ(cli_main({"conformance", "/nonexistent/dir"}), 1);
  EXPECT_EQ(cli_main({"inspect"}), 2);
  EXPECT_EQ(cli_main({"inspect", "a.onnx", "--backend", "reference"}), 2);
  EXPECT_EQ(cli_main({"inspect", "/nonexistent/model.onnx"}), 1);
  EXPECT_EQ(cli_main({"run", "a.onnx", "--memory-limit", "12x"}), 2);
  EXPECT_EQ(cli_main({"run", "a.onnx", "--memory-limit", "0"}), 2);
  EXPECT_EQ(cli_main({"compile", "a.onnx", "-o", "a.fplan", "--max-unrolled-nodes", "0"}), 2);
  EXPECT_EQ(cli_main({"inspect", "a.onnx", "--max-unrolled-nodes", "x"}), 2);
}

TEST(CliMain, UsageDocumentsEveryCommandAndOption) {
  const std::string usage = usage_text();
  for (const char* word : {"run MODEL",
                           "inspect MODEL",
                           "kernels: N externs: M",
                           "memory: planned P bytes, lower bound L bytes",
                           "70_plan_memory.txt",
                           "70_plan_memory.svg",
                           "conformance DIR",
                           "--input",
                           "--output-dir",
                           "--backend",
                           "--bench",
                           "--warmup",
                           "--bench-json",
                           "ready_ms",
                           "samples_ms",
                           "--dump",
                           "--profile",
                           "profile_total_ms",
                           "FERRITE_DUMP",
                           "--expect",
                           "--write-expect",
                           "--filter",
                           "--rtol",
                           "--atol",
                           "--max-rel-err",
                           "--verbose",
                           "--memory-limit",
                           "FERRITE_MEMORY_LIMIT",
                           "--max-unrolled-nodes",
                           "FERRITE_MAX_UNROLLED_NODES",
                           "median_ms"}) {
    EXPECT_NE(usage.find(word), std::string::npos) << word;
  }
}

TEST(CliMain, CheckedBackend) {
  EXPECT_EQ(checked_backend(""), default_backend());
#ifdef FERRITE_HAS_JIT
  EXPECT_EQ(checked_backend(""), "jit");  // the native default
  EXPECT_EQ(checked_backend("jit"), "jit");
#else
  EXPECT_EQ(checked_backend(""), "portable");
#endif
  EXPECT_EQ(checked_backend("reference"), "reference");
  EXPECT_THROW(checked_backend("cuda"), UsageError);
}

}  // namespace
}  // namespace ferrite
