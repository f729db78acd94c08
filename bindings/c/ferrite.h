/* Ferrite's C API: load a model (ONNX, or a plan from `ferrite compile`), query its inputs
 * and outputs, run it on caller-owned buffers.
 *
 * Stable ABI: only C types cross it. Objects are opaque handles; the structs below are
 * frozen (a new field would come with a new struct and function, never a changed layout).
 * Every function that can fail returns a FerriteStatus; the message of the last failure on
 * the calling thread is ferrite_last_error(). No function aborts or leaks on bad input:
 * malformed models, unknown input names, wrong shapes or dtypes, out-of-range indices are
 * errors with a message that names the input or node.
 *
 * Threads: a session may be used from several threads at once. Runs of one session are
 * serialized (each run uses the session's preallocated memory); for runs in parallel, create
 * one session per thread, or give one session several kernel threads
 * (ferrite_options_set_threads). Options objects are not shared state: use one per thread
 * while setting them.
 *
 * Link with -lferrite (libferrite.so, or libferrite_rt.so: the runtime-only library, which
 * loads compiled plans only).
 *
 *   FerriteSession* s;
 *   if (ferrite_session_create("model.onnx", NULL, &s) != FERRITE_OK)
 *     fprintf(stderr, "%s\n", ferrite_last_error());
 *   ... ferrite_session_run(s, 1, in_names, inputs, 1, out_names, outputs) ...
 *   ferrite_session_destroy(s);
 */
#ifndef FERRITE_H_
#define FERRITE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define FERRITE_API __attribute__((visibility("default")))
#else
#define FERRITE_API
#endif

#define FERRITE_API_VERSION 1
/* The most dimensions an output can have here (FerriteOutput::shape). */
#define FERRITE_MAX_RANK 16

typedef enum FerriteStatus {
  FERRITE_OK = 0,
  FERRITE_INVALID_ARGUMENT = 1, /* API misuse: a null pointer, an index out of range, an
                                   unknown option value, a buffer whose size does not match */
  FERRITE_MODEL_ERROR = 2,      /* the model or plan cannot be read or compiled */
  FERRITE_UNSUPPORTED = 3,      /* an op, attribute or element type Ferrite does not support */
  FERRITE_RUN_ERROR = 4,        /* a run failed: wrong input names, shapes or dtypes, an
                                   index out of range in the data, ... */
  FERRITE_BUFFER_TOO_SMALL = 5, /* an output buffer was smaller than the output; every
                                   FerriteOutput then says the shape and bytes needed */
  FERRITE_OUT_OF_MEMORY = 6,
  FERRITE_INTERNAL_ERROR = 7
} FerriteStatus;

/* Element types, numbered as ONNX's TensorProto.DataType. */
typedef enum FerriteDType {
  FERRITE_UNDEFINED = 0,
  FERRITE_FLOAT32 = 1,
  FERRITE_UINT8 = 2,
  FERRITE_INT8 = 3,
  FERRITE_UINT16 = 4,
  FERRITE_INT16 = 5,
  FERRITE_INT32 = 6,
  FERRITE_INT64 = 7,
  /* Strings (UTF-8 by ONNX's convention). An input's data is an array of one NUL-terminated
   * `const char*` per element (nbytes: the count times sizeof(const char*)). An output's
   * buffer (aligned for pointers) receives the same: its first bytes are the element count of
   * `char*`, pointing at the NUL-terminated strings that follow them in the buffer. */
  FERRITE_STRING = 8,
  FERRITE_BOOL = 9, /* one byte per element, 0 or 1 */
  FERRITE_FLOAT16 = 10,
  FERRITE_FLOAT64 = 11,
  FERRITE_UINT32 = 12,
  FERRITE_UINT64 = 13,
  FERRITE_BFLOAT16 = 16,
  /* The small types: one byte per element in every buffer of this API (a float8/float4/e8m0
   * code in the byte, a 4- or 2-bit integer sign- or zero-extended to 8 bits), never packed. */
  FERRITE_FLOAT8E4M3FN = 17,
  FERRITE_FLOAT8E4M3FNUZ = 18,
  FERRITE_FLOAT8E5M2 = 19,
  FERRITE_FLOAT8E5M2FNUZ = 20,
  FERRITE_UINT4 = 21,
  FERRITE_INT4 = 22,
  FERRITE_FLOAT4E2M1 = 23,
  FERRITE_FLOAT8E8M0 = 24,
  FERRITE_UINT2 = 25,
  FERRITE_INT2 = 26
} FerriteDType;

typedef struct FerriteOptions FerriteOptions;
typedef struct FerriteSession FerriteSession;

/* A declared input or output. The pointers are owned by the session and live as long as
 * it does. A dimension is -1 where the model leaves it symbolic or unknown (outputs whose
 * shape depends on the inputs' values, for instance). */
typedef struct FerriteTensorInfo {
  const char* name;
  FerriteDType dtype;
  size_t rank;
  const int64_t* shape;
} FerriteTensorInfo;

/* An input: the caller's dense row-major data, read during the run only. nbytes must be
 * the element count times the element size; rank is at most 1024. */
typedef struct FerriteTensor {
  FerriteDType dtype;
  size_t rank;
  const int64_t* shape;
  const void* data;
  size_t nbytes;
} FerriteTensor;

/* An output: the caller gives data and capacity (bytes); the run fills in the rest. */
typedef struct FerriteOutput {
  void* data;
  size_t capacity;
  FerriteDType dtype;
  size_t rank;
  int64_t shape[FERRITE_MAX_RANK];
  size_t nbytes; /* bytes written, or needed when the status is FERRITE_BUFFER_TOO_SMALL */
} FerriteOutput;

/* "1.0.0" and FERRITE_API_VERSION of the library. */
FERRITE_API const char* ferrite_version(void);
FERRITE_API int ferrite_api_version(void);

/* The message of the last call that failed on this thread ("" if none). Valid until the
 * next failing call on the same thread. */
FERRITE_API const char* ferrite_last_error(void);

/* Options: threads (default 1), backend ("jit" on x86-64, else "portable"; also
 * "reference"), ISA of the JIT ("avx2", "avx512"; default: the CPU's best). An unknown
 * backend or ISA is FERRITE_INVALID_ARGUMENT, and leaves the option unchanged. */
FERRITE_API FerriteStatus ferrite_options_create(FerriteOptions** out);
FERRITE_API void ferrite_options_destroy(FerriteOptions* options); /* NULL is allowed */
FERRITE_API FerriteStatus ferrite_options_set_threads(FerriteOptions* options, int threads);
FERRITE_API FerriteStatus ferrite_options_set_backend(FerriteOptions* options, const char* backend);
FERRITE_API FerriteStatus ferrite_options_set_isa(FerriteOptions* options, const char* isa);
/* Fast math (default off): float32 MatMul and Conv may multiply in bfloat16 (inputs and
 * weights rounded to bfloat16, sums in float32) where the CPU has AVX-512 BF16, for about
 * twice their speed and a relative error near 2^-8 per product (README, "Fast math"); on
 * other CPUs and backends it changes nothing. */
FERRITE_API FerriteStatus ferrite_options_set_fast_math(FerriteOptions* options, int enabled);
/* Profiling (default off): time every step of every run, for ferrite_session_report. */
FERRITE_API FerriteStatus ferrite_options_set_profiling(FerriteOptions* options, int enabled);
/* Resource limits (README, "Resource limits"). memory_limit: the most bytes a session may
 * hold (memory plan, constants, packed weights, inputs and outputs), checked by the compiler
 * and at session creation before anything is allocated; 0 (default): FERRITE_MEMORY_LIMIT or
 * 3/4 of the machine's memory. max_unrolled_nodes: the most nodes Loop, Scan and the
 * recurrent ops may unroll into; 0 (default): FERRITE_MAX_UNROLLED_NODES or 50,000. A
 * session past either fails with FERRITE_MODEL_ERROR saying which. Negative values are
 * FERRITE_INVALID_ARGUMENT. */
FERRITE_API FerriteStatus ferrite_options_set_memory_limit(FerriteOptions* options, int64_t bytes);
FERRITE_API FerriteStatus ferrite_options_set_max_unrolled_nodes(FerriteOptions* options,
                                                                 int64_t nodes);

/* Sessions from a file or from bytes (copied; the caller may free them after the call):
 * an ONNX model or a compiled plan, told apart by content. options may be NULL
 * (defaults); the session copies them. */
FERRITE_API FerriteStatus ferrite_session_create(const char* path, const FerriteOptions* options,
                                                 FerriteSession** out);
FERRITE_API FerriteStatus ferrite_session_create_from_bytes(const void* data, size_t size,
                                                            const FerriteOptions* options,
                                                            FerriteSession** out);
FERRITE_API void ferrite_session_destroy(FerriteSession* session); /* NULL is allowed */

FERRITE_API size_t ferrite_session_input_count(const FerriteSession* session);
FERRITE_API size_t ferrite_session_output_count(const FerriteSession* session);
FERRITE_API FerriteStatus ferrite_session_input_info(const FerriteSession* session, size_t index,
                                                     FerriteTensorInfo* info);
FERRITE_API FerriteStatus ferrite_session_output_info(const FerriteSession* session, size_t index,
                                                      FerriteTensorInfo* info);
/* The name of dimension `dim` of input (output) `index` where the model names it symbolic
 * ("batch", "seq"; its shape has -1 there), else NULL (a static or unnamed dimension, or an
 * index out of range). Owned by the session. */
FERRITE_API const char* ferrite_session_input_dim_name(const FerriteSession* session, size_t index,
                                                       size_t dim);
FERRITE_API const char* ferrite_session_output_dim_name(const FerriteSession* session, size_t index,
                                                        size_t dim);

/* Runs the model. inputs[i] feeds the input named input_names[i]; every declared input must
 * be fed, once. output_names selects the outputs to write, in the order of `outputs`; NULL
 * means all of them in model order (output_count must then equal their number). The first
 * call for new input shapes compiles the model for them (an ONNX model with symbolic
 * dims); later calls with those shapes reuse that plan. On FERRITE_BUFFER_TOO_SMALL every
 * output's dtype, rank, shape and nbytes are set and nothing was written: run again with
 * buffers that large. */
FERRITE_API FerriteStatus ferrite_session_run(FerriteSession* session, size_t input_count,
                                              const char* const* input_names,
                                              const FerriteTensor* inputs, size_t output_count,
                                              const char* const* output_names,
                                              FerriteOutput* outputs);

/* The plan of the session's last run, as JSON (NULL before the first run, or on failure):
 *   {"kernels": K, "externs": E, "buffers": B, "pool_bytes": P, "constant_bytes": C,
 *    "steps": [{"label": "kernel fused_relu_3", "runs": R, "ms": T}, ...]}
 * "steps" lists every plan step in order with the time it took over all runs so far when
 * the session profiles (ferrite_options_set_profiling), and is empty otherwise. The string
 * belongs to the session and lives until its next report or its destruction. */
FERRITE_API const char* ferrite_session_report(FerriteSession* session);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FERRITE_H_ */
