// The C API (ferrite.h) over the Engine: handles, statuses and the thread-local message.
// No exception crosses it: each entry point catches everything and maps it to a status.
#include "bindings/c/ferrite.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "bindings/engine/engine.h"
#include "compiler/plan/error.h"

#ifdef __EMSCRIPTEN__
// The JavaScript glue (wasm/js/ferrite_api.mjs) reads and writes these structs by offset.
static_assert(sizeof(FerriteTensor) == 20 && sizeof(FerriteTensorInfo) == 16, "wasm32 layout");
static_assert(sizeof(FerriteOutput) == 152 && offsetof(FerriteOutput, shape) == 16 &&
                  offsetof(FerriteOutput, nbytes) == 144,
              "wasm32 layout");
#endif

struct FerriteOptions {
  ferrite::EngineOptions engine;
};

struct FerriteSession {
  std::unique_ptr<ferrite::Engine> engine;
  std::mutex run_mutex;  // Engine::run is not reentrant (one pool, a plan cache)
  // What ferrite_session_*_info points into.
  std::vector<ferrite::IoInfo> inputs, outputs;
  std::vector<std::vector<std::string>> input_dim_names, output_dim_names;
  std::string report;  // ferrite_session_report's last answer
};

namespace {

using ferrite::DType;

thread_local std::string last_error;

// A caller's buffer that does not match what it claims: FERRITE_INVALID_ARGUMENT.
class ArgumentError : public ferrite::Error {
 public:
  explicit ArgumentError(const std::string& message) : ferrite::Error(message) {}
};

template <class... Args>
[[noreturn]] void bad_argument(const Args&... args) {
  throw ArgumentError(ferrite::str_cat(args...));
}

FerriteStatus failure(FerriteStatus status, std::string message) {
  last_error = std::move(message);
  return status;
}

// Runs `body`, mapping exceptions to statuses: UnsupportedError → FERRITE_UNSUPPORTED,
// other ferrite::Error → `error_status`.
template <class Body>
FerriteStatus guarded(FerriteStatus error_status, Body&& body) {
  try {
    return body();
  } catch (const ArgumentError& e) {
    return failure(FERRITE_INVALID_ARGUMENT, e.what());
  } catch (const ferrite::UnsupportedError& e) {
    return failure(FERRITE_UNSUPPORTED, e.what());
  } catch (const ferrite::Error& e) {
    return failure(error_status, e.what());
  } catch (const std::bad_alloc&) {
    return failure(FERRITE_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return failure(FERRITE_INTERNAL_ERROR, e.what());
  } catch (...) {
    return failure(FERRITE_INTERNAL_ERROR, "unknown exception");
  }
}

bool known_dtype(int code, DType* out) {
  if (code == FERRITE_STRING) {
    *out = DType::String;
    return true;
  }
  return ferrite::dtype_from_onnx(code, out) && ferrite::dtype_size(*out) != 0;
}

// A string output as the C API writes it: a `char*` per element, then the NUL-terminated
// strings they point at.
size_t string_output_bytes(const ferrite::Tensor& t) {
  size_t n = t.strings().size() * sizeof(char*);
  for (const std::string& s : t.strings()) n += s.size() + 1;
  return n;
}

void write_string_output(const ferrite::Tensor& t, void* data) {
  char** pointers = static_cast<char**>(data);
  char* text = static_cast<char*>(data) + t.strings().size() * sizeof(char*);
  for (size_t i = 0; i < t.strings().size(); ++i) {
    const std::string& s = t.strings()[i];
    pointers[i] = text;
    std::memcpy(text, s.c_str(), s.size() + 1);
    text += s.size() + 1;
  }
}

FerriteStatus create_session(std::unique_ptr<ferrite::Engine> engine, FerriteSession** out) {
  auto session = std::make_unique<FerriteSession>();
  session->inputs = engine->inputs();
  session->outputs = engine->outputs();
  session->input_dim_names = engine->input_dim_names();
  session->output_dim_names = engine->output_dim_names();
  session->engine = std::move(engine);
  *out = session.release();
  return FERRITE_OK;
}

ferrite::EngineOptions options_or_default(const FerriteOptions* options) {
  return options ? options->engine : ferrite::EngineOptions();
}

FerriteStatus io_info(const std::vector<ferrite::IoInfo>& ios, size_t index, const char* what,
                      FerriteTensorInfo* info) {
  if (!info) return failure(FERRITE_INVALID_ARGUMENT, "info is NULL");
  if (index >= ios.size()) {
    return failure(FERRITE_INVALID_ARGUMENT,
                   ferrite::str_cat(what, " index ", index, " is out of range (the model has ",
                                    ios.size(), ")"));
  }
  const ferrite::IoInfo& io = ios[index];
  info->name = io.name.c_str();
  info->dtype = static_cast<FerriteDType>(io.dtype);
  info->rank = io.shape.size();
  info->shape = io.shape.data();
  return FERRITE_OK;
}

// More dims than any model has: a rank past it is a caller's mistake (an uninitialized
// field), refused before it sizes anything.
constexpr size_t kMaxInputRank = 1024;

// The caller's input as a Tensor (a copy: the runtime wants 64-byte aligned, owned data).
ferrite::Tensor input_tensor(const char* name, const FerriteTensor& in) {
  // A C caller may store any int in the enum field; reading it as FerriteDType would be
  // undefined past the enum's range (UBSan's enum check), so its bytes are read as an int.
  std::underlying_type_t<FerriteDType> code;
  static_assert(sizeof code == sizeof in.dtype, "FerriteDType's storage");
  std::memcpy(&code, &in.dtype, sizeof code);
  DType dtype;
  if (!known_dtype(static_cast<int>(code), &dtype)) {
    bad_argument("input '", name, "': unknown or unsupported dtype code ", static_cast<int>(code));
  }
  if (in.rank > 0 && !in.shape) bad_argument("input '", name, "': shape is NULL");
  if (in.rank > kMaxInputRank) {
    bad_argument("input '", name, "': rank ", in.rank, " is more than ", kMaxInputRank);
  }
  std::vector<int64_t> shape(in.shape, in.shape + in.rank);
  // In uint64_t, then against SIZE_MAX: on wasm32 a dim past 2^32 must not wrap to a size
  // that matches nbytes while the shape claims more.
  uint64_t elements = 1;
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0) bad_argument("input '", name, "': negative dimension ", d);
    empty = empty || d == 0;
  }
  for (int64_t d : shape) {
    const uint64_t n = static_cast<uint64_t>(d);
    if (!empty && elements > SIZE_MAX / n) bad_argument("input '", name, "': shape too large");
    elements = empty ? 0 : elements * n;
  }
  const size_t element_size =
      dtype == DType::String ? sizeof(const char*) : ferrite::dtype_size(dtype);
  if (elements > SIZE_MAX / element_size || elements * element_size != in.nbytes) {
    bad_argument("input '", name, "': nbytes is ", in.nbytes, ", but its shape and dtype make ",
                 elements, " elements of ", element_size, " bytes");
  }
  if (in.nbytes && !in.data) bad_argument("input '", name, "': data is NULL");
  if (dtype == DType::String) {
    const char* const* items = static_cast<const char* const*>(in.data);
    std::vector<std::string> strings(elements);
    for (size_t i = 0; i < elements; ++i) {
      if (!items[i]) bad_argument("input '", name, "': string ", i, " is NULL");
      strings[i] = items[i];
    }
    return ferrite::Tensor(std::move(shape), std::move(strings));
  }
  return ferrite::Tensor(dtype, std::move(shape), in.data);
}

void append_json_string(std::string* out, const std::string& s) {
  *out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') {
      *out += '\\';
      *out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      *out += buf;
    } else {
      *out += c;
    }
  }
  *out += '"';
}

std::string session_report(const ferrite::Session& session) {
  const ferrite::Plan& plan = session.plan();
  std::string out = ferrite::str_cat(
      "{\"kernels\": ", plan.kernels.size(), ", \"externs\": ", plan.externs.size(),
      ", \"buffers\": ", plan.buffers.size(), ", \"pool_bytes\": ", plan.pool_bytes,
      ", \"constant_bytes\": ", session.constant_bytes(), ", \"steps\": [");
  const std::vector<ferrite::StepTime> steps = session.profile();
  for (size_t i = 0; i < steps.size(); ++i) {
    out += i ? ", {\"label\": " : "{\"label\": ";
    append_json_string(&out, steps[i].label);
    char times[64];
    std::snprintf(times, sizeof(times), ", \"runs\": %lld, \"ms\": %.6f}",
                  static_cast<long long>(steps[i].runs), steps[i].total_ms);
    out += times;
  }
  return out + "]}";
}

}  // namespace

extern "C" {

const char* ferrite_version(void) {
  return "1.0.0";
}

int ferrite_api_version(void) {
  return FERRITE_API_VERSION;
}

const char* ferrite_last_error(void) {
  return last_error.c_str();
}

FerriteStatus ferrite_options_create(FerriteOptions** out) {
  if (!out) return failure(FERRITE_INVALID_ARGUMENT, "out is NULL");
  return guarded(FERRITE_INTERNAL_ERROR, [&] {
    *out = new FerriteOptions();
    return FERRITE_OK;
  });
}

void ferrite_options_destroy(FerriteOptions* options) {
  delete options;
}

FerriteStatus ferrite_options_set_threads(FerriteOptions* options, int threads) {
  if (!options) return failure(FERRITE_INVALID_ARGUMENT, "options is NULL");
  if (threads < 1 || threads > 1024) {
    return failure(FERRITE_INVALID_ARGUMENT,
                   ferrite::str_cat("threads must be 1..1024, got ", threads));
  }
  options->engine.session.threads = threads;
  return FERRITE_OK;
}

FerriteStatus ferrite_options_set_backend(FerriteOptions* options, const char* backend) {
  if (!options || !backend) return failure(FERRITE_INVALID_ARGUMENT, "options or backend is NULL");
  return guarded(FERRITE_INTERNAL_ERROR, [&] {
    const std::string unknown = ferrite::unknown_backend_message(backend);
    if (!unknown.empty()) return failure(FERRITE_INVALID_ARGUMENT, unknown);
    options->engine.session.backend = backend;
    return FERRITE_OK;
  });
}

FerriteStatus ferrite_options_set_isa(FerriteOptions* options, const char* isa) {
  if (!options || !isa) return failure(FERRITE_INVALID_ARGUMENT, "options or isa is NULL");
  const std::string s = isa;
  if (s != "avx2" && s != "avx512") {
    return failure(FERRITE_INVALID_ARGUMENT,
                   ferrite::str_cat("unknown isa '", s, "' (avx2 or avx512)"));
  }
  options->engine.session.isa = s;
  return FERRITE_OK;
}

FerriteStatus ferrite_options_set_profiling(FerriteOptions* options, int enabled) {
  if (!options) return failure(FERRITE_INVALID_ARGUMENT, "options is NULL");
  options->engine.session.profile = enabled != 0;
  return FERRITE_OK;
}

FerriteStatus ferrite_options_set_fast_math(FerriteOptions* options, int enabled) {
  if (!options) return failure(FERRITE_INVALID_ARGUMENT, "options is NULL");
  options->engine.session.fast_math = enabled != 0;
  return FERRITE_OK;
}

FerriteStatus ferrite_options_set_memory_limit(FerriteOptions* options, int64_t bytes) {
  if (!options) return failure(FERRITE_INVALID_ARGUMENT, "options is NULL");
  if (bytes < 0) {
    return failure(FERRITE_INVALID_ARGUMENT,
                   ferrite::str_cat("memory limit must be >= 0 (0: the default), got ", bytes));
  }
  options->engine.session.memory_limit = bytes;
  options->engine.compile.memory_limit = bytes;
  return FERRITE_OK;
}

FerriteStatus ferrite_options_set_max_unrolled_nodes(FerriteOptions* options, int64_t nodes) {
  if (!options) return failure(FERRITE_INVALID_ARGUMENT, "options is NULL");
  if (nodes < 0) {
    return failure(
        FERRITE_INVALID_ARGUMENT,
        ferrite::str_cat("max unrolled nodes must be >= 0 (0: the default), got ", nodes));
  }
  options->engine.compile.max_unrolled_nodes = nodes;
  return FERRITE_OK;
}

FerriteStatus ferrite_session_create(const char* path, const FerriteOptions* options,
                                     FerriteSession** out) {
  if (!path || !out) return failure(FERRITE_INVALID_ARGUMENT, "path or out is NULL");
  *out = nullptr;
  return guarded(FERRITE_MODEL_ERROR, [&] {
    try {
      return create_session(ferrite::Engine::from_file(path, options_or_default(options)), out);
    } catch (const ferrite::UnsupportedError& e) {
      throw ferrite::UnsupportedError(ferrite::str_cat("model '", path, "': ", e.what()));
    } catch (const ferrite::Error& e) {
      ferrite::fail("model '", path, "': ", e.what());
    }
  });
}

FerriteStatus ferrite_session_create_from_bytes(const void* data, size_t size,
                                                const FerriteOptions* options,
                                                FerriteSession** out) {
  if ((!data && size) || !out) return failure(FERRITE_INVALID_ARGUMENT, "data or out is NULL");
  *out = nullptr;
  return guarded(FERRITE_MODEL_ERROR, [&] {
    return create_session(ferrite::Engine::from_bytes(static_cast<const uint8_t*>(data), size,
                                                      options_or_default(options)),
                          out);
  });
}

void ferrite_session_destroy(FerriteSession* session) {
  delete session;
}

size_t ferrite_session_input_count(const FerriteSession* session) {
  return session ? session->inputs.size() : 0;
}

size_t ferrite_session_output_count(const FerriteSession* session) {
  return session ? session->outputs.size() : 0;
}

FerriteStatus ferrite_session_input_info(const FerriteSession* session, size_t index,
                                         FerriteTensorInfo* info) {
  if (!session) return failure(FERRITE_INVALID_ARGUMENT, "session is NULL");
  return io_info(session->inputs, index, "input", info);
}

FerriteStatus ferrite_session_output_info(const FerriteSession* session, size_t index,
                                          FerriteTensorInfo* info) {
  if (!session) return failure(FERRITE_INVALID_ARGUMENT, "session is NULL");
  return io_info(session->outputs, index, "output", info);
}

namespace {

const char* dim_name(const std::vector<std::vector<std::string>>& names, size_t index, size_t dim) {
  if (index >= names.size() || dim >= names[index].size() || names[index][dim].empty())
    return nullptr;
  return names[index][dim].c_str();
}

}  // namespace

const char* ferrite_session_input_dim_name(const FerriteSession* session, size_t index,
                                           size_t dim) {
  return session ? dim_name(session->input_dim_names, index, dim) : nullptr;
}

const char* ferrite_session_output_dim_name(const FerriteSession* session, size_t index,
                                            size_t dim) {
  return session ? dim_name(session->output_dim_names, index, dim) : nullptr;
}

FerriteStatus ferrite_session_run(FerriteSession* session, size_t input_count,
                                  const char* const* input_names, const FerriteTensor* inputs,
                                  size_t output_count, const char* const* output_names,
                                  FerriteOutput* outputs) {
  if (!session) return failure(FERRITE_INVALID_ARGUMENT, "session is NULL");
  if (input_count && (!input_names || !inputs)) {
    return failure(FERRITE_INVALID_ARGUMENT, "input_names or inputs is NULL");
  }
  if (output_count && !outputs) return failure(FERRITE_INVALID_ARGUMENT, "outputs is NULL");
  return guarded(FERRITE_RUN_ERROR, [&] {
    // Which model output each FerriteOutput receives.
    std::vector<size_t> selected(output_count);
    if (!output_names) {
      if (output_count != session->outputs.size()) {
        return failure(FERRITE_INVALID_ARGUMENT,
                       ferrite::str_cat("output_names is NULL, so output_count must be ",
                                        session->outputs.size(), ", got ", output_count));
      }
      for (size_t i = 0; i < output_count; ++i) selected[i] = i;
    }
    for (size_t i = 0; output_names && i < output_count; ++i) {
      if (!output_names[i]) return failure(FERRITE_INVALID_ARGUMENT, "an output name is NULL");
      selected[i] = session->engine->output_index(output_names[i]);
    }
    std::vector<ferrite::Tensor> tensors;
    tensors.reserve(input_count);
    std::vector<std::pair<std::string, const ferrite::Tensor*>> feeds;
    for (size_t i = 0; i < input_count; ++i) {
      if (!input_names[i]) return failure(FERRITE_INVALID_ARGUMENT, "an input name is NULL");
      tensors.push_back(input_tensor(input_names[i], inputs[i]));
    }
    for (size_t i = 0; i < input_count; ++i) feeds.emplace_back(input_names[i], &tensors[i]);
    std::vector<ferrite::Tensor> results;
    {
      std::lock_guard<std::mutex> lock(session->run_mutex);
      results = session->engine->run(feeds);
    }
    bool fits = true;
    for (size_t i = 0; i < output_count; ++i) {
      const ferrite::Tensor& r = results[selected[i]];
      FerriteOutput& o = outputs[i];
      if (r.shape().size() > FERRITE_MAX_RANK) {
        return failure(FERRITE_UNSUPPORTED,
                       ferrite::str_cat("output '", session->outputs[selected[i]].name,
                                        "' has rank ", r.shape().size(),
                                        ", more than FERRITE_MAX_RANK (", FERRITE_MAX_RANK, ")"));
      }
      o.dtype = static_cast<FerriteDType>(r.dtype());
      o.rank = r.shape().size();
      for (size_t d = 0; d < o.rank; ++d) o.shape[d] = r.shape()[d];
      o.nbytes = r.dtype() == DType::String ? string_output_bytes(r) : r.nbytes();
      fits = fits && o.nbytes <= o.capacity && (o.data || o.nbytes == 0);
      if (r.dtype() == DType::String && o.data &&
          reinterpret_cast<uintptr_t>(o.data) % alignof(char*) != 0) {
        return failure(FERRITE_INVALID_ARGUMENT,
                       ferrite::str_cat("output '", session->outputs[selected[i]].name,
                                        "': a string output's buffer must be aligned for "
                                        "pointers"));
      }
    }
    if (!fits) {
      std::string sizes;
      for (size_t i = 0; i < output_count; ++i) {
        sizes += ferrite::str_cat(i ? ", " : "", "'", session->outputs[selected[i]].name, "' ",
                                  outputs[i].nbytes, " bytes (capacity ", outputs[i].capacity, ")");
      }
      return failure(FERRITE_BUFFER_TOO_SMALL,
                     ferrite::str_cat("output buffers too small or NULL: ", sizes));
    }
    for (size_t i = 0; i < output_count; ++i) {
      const ferrite::Tensor& r = results[selected[i]];
      if (r.dtype() == DType::String) {
        write_string_output(r, outputs[i].data);
      } else if (r.nbytes()) {
        std::memcpy(outputs[i].data, r.data(), r.nbytes());
      }
    }
    return FERRITE_OK;
  });
}

const char* ferrite_session_report(FerriteSession* session) {
  if (!session) {
    failure(FERRITE_INVALID_ARGUMENT, "session is NULL");
    return nullptr;
  }
  const FerriteStatus status = guarded(FERRITE_INTERNAL_ERROR, [&] {
    std::lock_guard<std::mutex> lock(session->run_mutex);
    const ferrite::Session* s = session->engine->last_session();
    if (!s) return failure(FERRITE_INVALID_ARGUMENT, "the session has not run yet");
    session->report = session_report(*s);
    return FERRITE_OK;
  });
  return status == FERRITE_OK ? session->report.c_str() : nullptr;
}

}  // extern "C"
