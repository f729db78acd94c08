// The structure-aware ONNX mutator, libFuzzer's LLVMFuzzerCustomMutator and
// LLVMFuzzerCustomCrossOver for the ONNX targets (onnx_hooks.cc). A model is decoded into a
// protobuf tree (proto_tree.h) and changed where the importer and the lowerings make
// decisions: attribute values (ints to boundaries, lists grown and shrunk, types swapped),
// tensor dims, dtypes and data, value infos' shapes and element types, node inputs and
// outputs (rewired, dropped, duplicated), op types, node order, subgraphs (If/Loop/Scan
// bodies), functions and opset imports. Bytes that are no model, and one mutation in ten,
// go to libFuzzer's own byte-level mutator.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ferrite::fuzz {

// libFuzzer's LLVMFuzzerMutate, or any byte-level mutator: changes data[0, size) in place
// within max_size bytes and returns the new size.
using ByteMutator = size_t (*)(uint8_t* data, size_t size, size_t max_size);

size_t mutate_onnx(uint8_t* data, size_t size, size_t max_size, unsigned seed, ByteMutator bytes);
// Parts of model b (a node, an attribute, a tensor, a type, a subgraph) grafted into model a.
size_t cross_over_onnx(const uint8_t* a, size_t a_size, const uint8_t* b, size_t b_size,
                       uint8_t* out, size_t max_out, unsigned seed);

}  // namespace ferrite::fuzz
