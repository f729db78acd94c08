// FERRITE_DUMP support: writes one text file per compiler stage into a directory, so the
// whole pipeline can be read step by step. A no-op when the directory is empty.
#pragma once

#include <string>

namespace ferrite {

void dump_text(const std::string& dir, const std::string& file, const std::string& text);

}  // namespace ferrite
