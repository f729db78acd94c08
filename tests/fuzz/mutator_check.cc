// fuzz_mutator_check FILE|DIR... [--mutants N]: checks the structure-aware mutators on seed
// files (tests/fuzz/ci.sh runs it on the seed corpora). Every plan must be walked by
// plan_layout.h (else the walker no longer matches plan_io.cc's format: exit 1) and, when
// it validates, have a defined result (plan_hazards.h: compiled plans do), and every
// ONNX model decoded and re-encoded to the same bytes by proto_tree.h; then N mutants of
// each show how many still get past the reader (the plan's, or import_onnx) and validation.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "compiler/frontend/onnx/onnx_import.h"
#include "compiler/plan/error.h"
#include "compiler/plan/plan_io.h"
#include "tests/fuzz/onnx_mutator.h"
#include "tests/fuzz/plan_hazards.h"
#include "tests/fuzz/plan_layout.h"
#include "tests/fuzz/plan_mutator.h"
#include "tests/fuzz/proto_tree.h"

namespace {

using namespace ferrite;

std::mt19937 byte_rng(1);

// A stand-in for libFuzzer's byte mutator: one to four random bytes changed.
size_t flip_bytes(uint8_t* data, size_t size, size_t) {
  for (size_t n = 1 + byte_rng() % 4; n > 0 && size > 0; --n) {
    data[byte_rng() % size] = static_cast<uint8_t>(byte_rng());
  }
  return size;
}

struct Tally {
  size_t files = 0, broken = 0, mutants = 0, read = 0, valid = 0;
};

bool is_plan(const std::vector<uint8_t>& b) {
  return b.size() >= 6 && std::memcmp(b.data(), "FRPLAN", 6) == 0;
}

void check_plan(const std::string& path, const std::vector<uint8_t>& b, int mutants, Tally* t) {
  fuzz::PlanLayout layout;
  if (!fuzz::walk_plan(b.data(), b.size(), &layout)) {
    std::printf("plan_layout cannot walk %s\n", path.c_str());
    ++t->broken;
    return;
  }
  try {
    const std::string hazard = fuzz::order_dependence(deserialize_plan(b.data(), b.size()));
    if (!hazard.empty()) {
      std::printf("plan_hazards calls the compiled plan %s order-dependent: %s\n", path.c_str(),
                  hazard.c_str());
      ++t->broken;
    }
  } catch (const Error&) {
    // A seed that does not validate (a reproducer): nothing to say about its order.
  }
  for (int i = 0; i < mutants; ++i) {
    std::vector<uint8_t> m = b;
    m.resize(b.size() * 2 + 64);
    m.resize(fuzz::mutate_plan(m.data(), b.size(), m.size(), static_cast<unsigned>(i), flip_bytes));
    ++t->mutants;
    t->read += fuzz::walk_plan(m.data(), m.size(), &layout);
    try {
      deserialize_plan(m.data(), m.size());
      ++t->valid;
    } catch (const Error&) {
    }
  }
}

void check_onnx(const std::string& path, const std::vector<uint8_t>& b, int mutants, Tally* t) {
  fuzz::ProtoMessage model;
  if (!fuzz::parse_proto(b.data(), b.size(), fuzz::Msg::Model, &model) ||
      fuzz::serialize_proto(model) != std::string(b.begin(), b.end())) {
    std::printf("proto_tree does not round-trip %s\n", path.c_str());
    ++t->broken;
    return;
  }
  for (int i = 0; i < mutants; ++i) {
    std::vector<uint8_t> m = b;
    m.resize(b.size() * 2 + 4096);
    m.resize(fuzz::mutate_onnx(m.data(), b.size(), m.size(), static_cast<unsigned>(i), flip_bytes));
    ++t->mutants;
    try {
      import_onnx(m.data(), m.size(), "");
      ++t->valid;
    } catch (const Error&) {
    }
  }
}

void check_file(const std::filesystem::path& p, int mutants, Tally* plans, Tally* models) {
  std::ifstream in(p, std::ios::binary);
  const std::vector<uint8_t> b((std::istreambuf_iterator<char>(in)), {});
  if (is_plan(b)) {
    ++plans->files;
    check_plan(p.string(), b, mutants, plans);
  } else if (p.extension() == ".onnx") {
    ++models->files;
    check_onnx(p.string(), b, mutants, models);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int mutants = 20;
  Tally plans, models;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--mutants" && i + 1 < argc) {
      mutants = std::atoi(argv[++i]);
      continue;
    }
    const std::filesystem::path p(argv[i]);
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(p)) {
        if (e.is_regular_file()) check_file(e.path(), mutants, &plans, &models);
      }
    } else {
      check_file(p, mutants, &plans, &models);
    }
  }
  std::printf("plans: %zu (%zu not walked); %zu mutants: %zu walked, %zu valid\n", plans.files,
              plans.broken, plans.mutants, plans.read, plans.valid);
  std::printf("models: %zu (%zu not round-tripped); %zu mutants: %zu imported\n", models.files,
              models.broken, models.mutants, models.valid);
  return plans.broken || models.broken ? 1 : 0;
}
