/* Ferrite embedded in a C program through its C API (bindings/c/ferrite.h).
 *
 *   embed_c MODEL [THREADS]
 *
 * Loads MODEL (.onnx or a compiled .fplan), prints its inputs and outputs, feeds every
 * float32 input x[i] = sin(0.37 i) (symbolic dims 1; other dtypes zeros), runs it and prints
 * each output's shape and values (at most 16). Output buffers are sized from the declared
 * shapes; when an output is larger than declared, the run says how large and is retried. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferrite.h"

static int check(FerriteStatus status, const char* what) {
  if (status == FERRITE_OK) return 1;
  fprintf(stderr, "error: %s: %s (status %d)\n", what, ferrite_last_error(), (int)status);
  return 0;
}

static size_t dtype_size(FerriteDType t) {
  switch (t) {
    case FERRITE_FLOAT64:
    case FERRITE_INT64:
    case FERRITE_UINT64:
      return 8;
    case FERRITE_FLOAT32:
    case FERRITE_INT32:
    case FERRITE_UINT32:
      return 4;
    case FERRITE_FLOAT16:
    case FERRITE_BFLOAT16:
    case FERRITE_INT16:
    case FERRITE_UINT16:
      return 2;
    default:
      return 1;
  }
}

static void print_info(const char* kind, const FerriteTensorInfo* info) {
  printf("%s %s: dtype %d, shape [", kind, info->name, (int)info->dtype);
  for (size_t d = 0; d < info->rank; ++d) printf(d ? ",%lld" : "%lld", (long long)info->shape[d]);
  printf("]\n");
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL [THREADS]\n", argv[0]);
    return 2;
  }
  FerriteOptions* options = NULL;
  FerriteSession* session = NULL;
  int ok = check(ferrite_options_create(&options), "options");
  if (ok && argc > 2) ok = check(ferrite_options_set_threads(options, atoi(argv[2])), "threads");
  if (ok) ok = check(ferrite_session_create(argv[1], options, &session), "load");
  ferrite_options_destroy(options);
  if (!ok) return 1;
  printf("ferrite %s\n", ferrite_version());

  const size_t n_in = ferrite_session_input_count(session);
  const size_t n_out = ferrite_session_output_count(session);
  const char** in_names = calloc(n_in, sizeof(char*));
  FerriteTensor* inputs = calloc(n_in, sizeof(FerriteTensor));
  int64_t** in_shapes = calloc(n_in, sizeof(int64_t*));
  FerriteOutput* outputs = calloc(n_out, sizeof(FerriteOutput));
  for (size_t i = 0; ok && i < n_in; ++i) {
    FerriteTensorInfo info;
    ok = check(ferrite_session_input_info(session, i, &info), "input info");
    if (!ok) break;
    print_info("input", &info);
    size_t elements = 1;
    in_shapes[i] = calloc(info.rank + 1, sizeof(int64_t));
    for (size_t d = 0; d < info.rank; ++d) {
      in_shapes[i][d] = info.shape[d] < 0 ? 1 : info.shape[d];
      elements *= (size_t)in_shapes[i][d];
    }
    void* data = calloc(elements + 1, dtype_size(info.dtype));
    if (info.dtype == FERRITE_FLOAT32) {
      for (size_t e = 0; e < elements; ++e) ((float*)data)[e] = sinf(0.37f * (float)e);
    }
    in_names[i] = info.name;
    inputs[i].dtype = info.dtype;
    inputs[i].rank = info.rank;
    inputs[i].shape = in_shapes[i];
    inputs[i].data = data;
    inputs[i].nbytes = elements * dtype_size(info.dtype);
  }
  for (size_t o = 0; ok && o < n_out; ++o) {
    FerriteTensorInfo info;
    ok = check(ferrite_session_output_info(session, o, &info), "output info");
    if (!ok) break;
    print_info("output", &info);
    size_t elements = 1;
    for (size_t d = 0; d < info.rank; ++d)
      elements *= info.shape[d] < 0 ? 1 : (size_t)info.shape[d];
    outputs[o].capacity = elements * dtype_size(info.dtype);
    outputs[o].data = malloc(outputs[o].capacity + 1);
  }
  if (ok) {
    FerriteStatus status =
        ferrite_session_run(session, n_in, in_names, inputs, n_out, NULL, outputs);
    if (status == FERRITE_BUFFER_TOO_SMALL) { /* now we know the sizes: grow and retry */
      for (size_t o = 0; o < n_out; ++o) {
        free(outputs[o].data);
        outputs[o].capacity = outputs[o].nbytes;
        outputs[o].data = malloc(outputs[o].capacity + 1);
      }
      status = ferrite_session_run(session, n_in, in_names, inputs, n_out, NULL, outputs);
    }
    ok = check(status, "run");
  }
  for (size_t o = 0; ok && o < n_out; ++o) {
    FerriteTensorInfo info;
    ferrite_session_output_info(session, o, &info);
    printf("%s: shape [", info.name);
    for (size_t d = 0; d < outputs[o].rank; ++d) {
      printf(d ? ",%lld" : "%lld", (long long)outputs[o].shape[d]);
    }
    printf("]");
    if (outputs[o].dtype == FERRITE_FLOAT32) {
      const size_t n = outputs[o].nbytes / 4;
      for (size_t e = 0; e < n && e < 16; ++e) printf(" %.7g", ((const float*)outputs[o].data)[e]);
    }
    printf("\n");
  }
  for (size_t i = 0; i < n_in; ++i) {
    free((void*)inputs[i].data);
    free(in_shapes[i]);
  }
  for (size_t o = 0; o < n_out; ++o) free(outputs[o].data);
  free(in_names);
  free(inputs);
  free(in_shapes);
  free(outputs);
  ferrite_session_destroy(session);
  return ok ? 0 : 1;
}
