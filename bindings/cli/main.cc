// The `ferrite` executable: everything lives in cli_main (bindings/cli/cli.h).
#include <string>
#include <vector>

#include "bindings/cli/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return ferrite::cli_main(args);
}
