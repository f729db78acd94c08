// Element helpers for host tensors (see tensor_values.h). Elements are read with memcpy so
// no access depends on the buffer's alignment.
#include "bindings/cli/tensor_values.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "compiler/plan/error.h"
#include "compiler/plan/minifloat.h"
#include "compiler/plan/scalar_ops.h"

namespace ferrite {
namespace {

template <class T>
T load(const Tensor& t, int64_t i) {
  T v;
  std::memcpy(&v, t.data() + static_cast<size_t>(i) * sizeof(T), sizeof(T));
  return v;
}

bool is_integer(DType t) {
  return !dtype_is_float(t) && t != DType::Bool;
}

// Integers exactly (int64/uint64 would lose digits through double).
std::string format_element(const Tensor& t, int64_t i) {
  std::ostringstream os;
  if (t.dtype() == DType::String) {
    os << '"' << t.strings()[static_cast<size_t>(i)] << '"';
  } else if (t.dtype() == DType::Bool) {
    os << (load<uint8_t>(t, i) ? "true" : "false");
  } else if (t.dtype() == DType::I64) {
    os << load<int64_t>(t, i);
  } else if (t.dtype() == DType::U64) {
    os << load<uint64_t>(t, i);
  } else if (is_integer(t.dtype())) {
    os << static_cast<int64_t>(element_as_double(t, i));
  } else {
    os.precision(6);
    os << element_as_double(t, i);
  }
  return os.str();
}

// splitmix64: tiny, well mixed, and identical on every platform.
uint64_t next_random(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void store_element(Tensor* t, int64_t i, uint64_t random) {
  uint8_t* p = t->data() + static_cast<size_t>(i) * dtype_size(t->dtype());
  // 24 random bits give floats exactly representable in float32, uniform in [-1, 1).
  const float f = static_cast<float>(random >> 40) * (2.0f / 16777216.0f) - 1.0f;
  const int64_t small = static_cast<int64_t>(random % 4);
  switch (t->dtype()) {
    case DType::F32:
      std::memcpy(p, &f, 4);
      return;
    case DType::F64: {
      const double d = f;
      std::memcpy(p, &d, 8);
      return;
    }
    case DType::F16: {
      const uint16_t h = float_to_half(f);
      std::memcpy(p, &h, 2);
      return;
    }
    case DType::BF16: {
      const uint16_t b = float_to_bfloat16(f);
      std::memcpy(p, &b, 2);
      return;
    }
    case DType::Bool:
      *p = 0;
      return;
    default:
      if (dtype_is_minifloat(t->dtype())) {
        *p = float_to_minifloat(t->dtype(), f);
        return;
      }
      break;
  }
  // Every integer type holds 0..3 (int2: 0, 1, -2, -1, its byte's bits as stored);
  // little-endian, so the low bytes carry the value.
  std::memset(p, 0, dtype_size(t->dtype()));
  *p = dtype_bits(t->dtype()) < 8 ? narrow_to_bits(t->dtype(), small) : static_cast<uint8_t>(small);
}

bool float_close(double a, double e, double rtol, double atol) {
  if (std::isnan(a) || std::isnan(e)) return std::isnan(a) && std::isnan(e);
  if (a == e) return true;
  if (!std::isfinite(a) || !std::isfinite(e)) return false;
  return std::fabs(a - e) <= atol + rtol * std::fabs(e);
}

bool element_equal(const Tensor& a, const Tensor& e, int64_t i) {
  if (a.dtype() == DType::Bool) return (load<uint8_t>(a, i) != 0) == (load<uint8_t>(e, i) != 0);
  const size_t n = dtype_size(a.dtype());
  return std::memcmp(a.data() + i * n, e.data() + i * n, n) == 0;
}

// Empty when dtype and shape agree, else what differs.
std::string type_mismatch(const Tensor& actual, const Tensor& expected) {
  if (actual.dtype() != expected.dtype()) {
    return str_cat("dtype ", dtype_name(actual.dtype()), ", expected ",
                   dtype_name(expected.dtype()));
  }
  if (actual.shape() != expected.shape()) {
    return str_cat("shape ", format_type(actual.dtype(), actual.shape()), ", expected ",
                   format_type(expected.dtype(), expected.shape()));
  }
  return "";
}

}  // namespace

double element_as_double(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::F32:
      return load<float>(t, i);
    case DType::F64:
      return load<double>(t, i);
    case DType::F16:
      return half_to_float(load<uint16_t>(t, i));
    case DType::BF16:
      return bfloat16_to_float(load<uint16_t>(t, i));
    case DType::Bool:
      return load<uint8_t>(t, i) != 0 ? 1.0 : 0.0;
    case DType::U8:
      return load<uint8_t>(t, i);
    case DType::I8:
      return load<int8_t>(t, i);
    case DType::U16:
      return load<uint16_t>(t, i);
    case DType::I16:
      return load<int16_t>(t, i);
    case DType::U32:
      return load<uint32_t>(t, i);
    case DType::I32:
      return load<int32_t>(t, i);
    case DType::U64:
      return static_cast<double>(load<uint64_t>(t, i));
    case DType::I64:
      return static_cast<double>(load<int64_t>(t, i));
    case DType::U4:
    case DType::U2:
      return load<uint8_t>(t, i);
    case DType::I4:
    case DType::I2:
      return load<int8_t>(t, i);
    default:
      if (dtype_is_minifloat(t.dtype())) return minifloat_to_float(t.dtype(), load<uint8_t>(t, i));
      break;
  }
  fail("cannot read elements of a ", dtype_name(t.dtype()), " tensor");
}

std::string format_type(DType dtype, const std::vector<int64_t>& shape) {
  std::string s = std::string(dtype_name(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string format_values(const Tensor& t, int64_t max_count) {
  const int64_t n = t.elements();
  std::string s = "[";
  for (int64_t i = 0; i < n && i < max_count; ++i) s += (i ? ", " : "") + format_element(t, i);
  if (n > max_count) s += ", ...";
  return s + "]";
}

Tensor generated_input(DType dtype, const std::vector<int64_t>& shape, uint64_t seed) {
  uint64_t state = seed;
  if (dtype == DType::String) {  // up to 7 characters of "ab c", so some split into words
    int64_t n = 1;
    for (int64_t d : shape) {
      if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > (int64_t{1} << 24))
        fail("cannot generate ", n, " strings");
    }
    std::vector<std::string> strings(static_cast<size_t>(n));
    for (std::string& s : strings) {
      const uint64_t r = next_random(&state);
      for (uint64_t k = 0; k < r % 8; ++k) s += "ab c"[(r >> (8 + 2 * k)) & 3];
    }
    return Tensor(shape, std::move(strings));
  }
  if (dtype_size(dtype) == 0) fail("cannot generate values of type ", dtype_name(dtype));
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.elements(); ++i) store_element(&t, i, next_random(&state));
  return t;
}

std::string compare_tensors(const Tensor& actual, const Tensor& expected, double rtol,
                            double atol) {
  const std::string type_diff = type_mismatch(actual, expected);
  if (!type_diff.empty()) return type_diff;
  const bool is_float = dtype_is_float(actual.dtype());
  if (actual.dtype() == DType::String) {  // exactly, byte for byte
    for (size_t i = 0; i < actual.strings().size(); ++i) {
      if (actual.strings()[i] != expected.strings()[i])
        return str_cat("value at index ", i, " of ", actual.strings().size(), " is ",
                       format_element(actual, static_cast<int64_t>(i)), ", expected ",
                       format_element(expected, static_cast<int64_t>(i)));
    }
    return "";
  }
  if (!is_float && dtype_size(actual.dtype()) == 0) {
    return str_cat("cannot compare ", dtype_name(actual.dtype()), " tensors");
  }
  const int64_t n = actual.elements();
  for (int64_t i = 0; i < n; ++i) {
    const bool ok = is_float ? float_close(element_as_double(actual, i),
                                           element_as_double(expected, i), rtol, atol)
                             : element_equal(actual, expected, i);
    if (!ok) {
      return str_cat("value at index ", i, " of ", n, " is ", format_element(actual, i),
                     ", expected ", format_element(expected, i));
    }
  }
  return "";
}

std::string compare_tensors_normwise(const Tensor& actual, const Tensor& expected,
                                     double max_rel_err) {
  if (!type_mismatch(actual, expected).empty() || !dtype_is_float(actual.dtype())) {
    return compare_tensors(actual, expected, 0, 0);  // the type checks; integers exactly
  }
  const int64_t n = actual.elements();
  double max_err = 0, max_expected = 0;
  int64_t worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double a = element_as_double(actual, i), e = element_as_double(expected, i);
    if (!std::isfinite(a) || !std::isfinite(e)) {
      if (float_close(a, e, 0, 0)) continue;  // the same NaN or infinity
      return str_cat("value at index ", i, " of ", n, " is ", format_element(actual, i),
                     ", expected ", format_element(expected, i));
    }
    max_expected = std::max(max_expected, std::fabs(e));
    if (std::fabs(a - e) > max_err) {
      max_err = std::fabs(a - e);
      worst = i;
    }
  }
  if (max_err <= max_rel_err * max_expected) return "";
  return str_cat("max |actual - expected| = ", max_err, " is ", max_err / max_expected,
                 " * max |expected| (", max_expected, "), limit ", max_rel_err, "; worst at index ",
                 worst, " of ", n, ": ", format_element(actual, worst), ", expected ",
                 format_element(expected, worst));
}

}  // namespace ferrite
