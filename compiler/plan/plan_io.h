// Versioned binary (de)serialization of a Plan. The format is little-endian, starts with
// the magic "FRPLAN" and a version number; every length is bounded by the bytes that remain,
// so a truncated or corrupt file gives ferrite::Error, never a crash or a huge allocation.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/plan/plan.h"

namespace ferrite {

// 2: step guards, 3: kernel inner loops, 4: post-ops, 5: packed constants, 6: epilogue bodies
// (version 5 files, whose externs carry chains of post-ops, are read too)
constexpr uint32_t kPlanFormatVersion = 6;

std::vector<uint8_t> serialize_plan(const Plan& plan);
// Parses and validates; throws ferrite::Error on any problem.
Plan deserialize_plan(const uint8_t* data, size_t size);

}  // namespace ferrite
