// NumPy .npy files, the CLI's tensor exchange format (`--input x=FILE.npy`, `--output-dir`).
// Reads format versions 1.0 and 2.0, little-endian numeric and bool dtypes and unicode
// strings ('<U{n}': UTF-32, read as UTF-8 string tensors), C order only;
// the header dict is parsed strictly and the data size must match the shape exactly.
// Every error is a ferrite::Error that names the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/tensor.h"

namespace ferrite {

// `what` names the source in error messages (usually the path).
Tensor parse_npy(const uint8_t* data, size_t size, const std::string& what);
Tensor read_npy(const std::string& path);

// Version 1.0, header padded to 64 bytes like numpy. bfloat16 (which numpy lacks) is
// written as float32; string tensors as unicode ('<U{n}'), their UTF-8 decoded.
std::vector<uint8_t> encode_npy(const Tensor& t);
void write_npy(const std::string& path, const Tensor& t);

// The npy `descr` for a dtype ("<f4", "|b1", ...); throws for dtypes npy cannot hold.
std::string npy_descr(DType dtype);

}  // namespace ferrite
