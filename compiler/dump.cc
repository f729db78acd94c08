#include "compiler/dump.h"

#include <filesystem>
#include <fstream>

#include "compiler/plan/error.h"

namespace ferrite {

void dump_text(const std::string& dir, const std::string& file, const std::string& text) {
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::ofstream out(std::filesystem::path(dir) / file, std::ios::binary);
  if (!out) fail("dump: cannot write ", dir, "/", file);
  out << text;
}

}  // namespace ferrite
