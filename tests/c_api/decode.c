/* A greedy decode through the C API (ctest c_api_decode), as tests/python and tests/js do
 * it: gpt_dyn (tests/models), a GPT-2-style decoder with past key/values of symbolic past
 * length, generates 64 tokens from its prompt, each step fed the presents of the one
 * before (a new past length every step), and every token must equal PyTorch's.
 *
 *   c_api_decode MODELS_DIR/gpt_dyn
 *
 * Reads model.onnx, greedy_prompt.npy and greedy_tokens.npy (int64 .npy files) there. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferrite.h"

enum { kMaxInputs = 16 };

/* An int64 .npy file (version 1.x, little-endian, C order): its elements; NULL on error. */
static int64_t* read_int64_npy(const char* path, size_t* count) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char head[10];
  int64_t* data = NULL;
  if (fread(head, 1, 10, f) == 10 && memcmp(head, "\x93NUMPY", 6) == 0 && head[6] == 1) {
    const size_t len = (size_t)head[8] | (size_t)head[9] << 8;
    char* header = calloc(len + 1, 1);
    if (header && fread(header, 1, len, f) == len && strstr(header, "'<i8'")) {
      const long start = ftell(f);
      fseek(f, 0, SEEK_END);
      const long end = ftell(f);
      fseek(f, start, SEEK_SET);
      *count = (size_t)(end - start) / 8;
      data = malloc(*count * 8 + 8);
      if (data && fread(data, 8, *count, f) != *count) {
        free(data);
        data = NULL;
      }
    }
    free(header);
  }
  fclose(f);
  return data;
}

static int fail(const char* what) {
  fprintf(stderr, "c_api_decode: %s: %s\n", what, ferrite_last_error());
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: c_api_decode MODELS_DIR/gpt_dyn\n");
    return 2;
  }
  char path[4096];
  size_t prompt_len = 0, steps = 0;
  snprintf(path, sizeof(path), "%s/greedy_prompt.npy", argv[1]);
  int64_t* prompt = read_int64_npy(path, &prompt_len);
  snprintf(path, sizeof(path), "%s/greedy_tokens.npy", argv[1]);
  int64_t* want = read_int64_npy(path, &steps);
  if (!prompt || !want) {
    fprintf(stderr, "c_api_decode: cannot read the .npy files in %s\n", argv[1]);
    return 1;
  }
  snprintf(path, sizeof(path), "%s/model.onnx", argv[1]);
  FerriteSession* s = NULL;
  if (ferrite_session_create(path, NULL, &s) != FERRITE_OK) return fail("create");
  const size_t n_in = ferrite_session_input_count(s), n_out = ferrite_session_output_count(s);
  if (n_in > kMaxInputs || n_out != n_in) {
    fprintf(stderr, "c_api_decode: %zu inputs, %zu outputs\n", n_in, n_out);
    return 1;
  }
  /* input 0: input_ids [batch, seq]; then past key/value [batch, heads, past, head_dim],
   * whose heads and head_dim are static; output 0: logits [batch, seq, vocab]. */
  const char* names[kMaxInputs];
  FerriteTensorInfo info;
  for (size_t i = 0; i < n_in; ++i) {
    if (ferrite_session_input_info(s, i, &info) != FERRITE_OK) return fail("input info");
    names[i] = info.name;
  }
  const int64_t heads = info.shape[1], head_dim = info.shape[3];
  if (ferrite_session_output_info(s, 0, &info) != FERRITE_OK) return fail("output info");
  const int64_t vocab = info.shape[2];
  const size_t kv = n_in - 1, max_past = prompt_len + steps;
  float* past[kMaxInputs];
  float* present[kMaxInputs];
  for (size_t k = 0; k < kv; ++k) {
    past[k] = calloc((size_t)(heads * head_dim) * max_past + 1, sizeof(float));
    present[k] = calloc((size_t)(heads * head_dim) * max_past + 1, sizeof(float));
  }
  float* logits = malloc((size_t)vocab * prompt_len * sizeof(float));
  int64_t* ids = prompt;
  int64_t seq = (int64_t)prompt_len, past_len = 0, next = 0;
  int mismatches = 0;
  for (size_t step = 0; step < steps; ++step) {
    const int64_t ids_shape[2] = {1, seq}, past_shape[4] = {1, heads, past_len, head_dim};
    FerriteTensor in[kMaxInputs];
    in[0] = (FerriteTensor){FERRITE_INT64, 2, ids_shape, ids, (size_t)seq * 8};
    const size_t past_bytes = (size_t)(heads * past_len * head_dim) * sizeof(float);
    for (size_t k = 0; k < kv; ++k)
      in[1 + k] = (FerriteTensor){FERRITE_FLOAT32, 4, past_shape, past[k], past_bytes};
    FerriteOutput out[kMaxInputs];
    memset(out, 0, sizeof(out));
    out[0].data = logits;
    out[0].capacity = (size_t)(seq * vocab) * sizeof(float);
    for (size_t k = 0; k < kv; ++k) {
      out[1 + k].data = present[k];
      out[1 + k].capacity = past_bytes + (size_t)(heads * seq * head_dim) * sizeof(float);
    }
    if (ferrite_session_run(s, n_in, names, in, n_out, NULL, out) != FERRITE_OK) return fail("run");
    const float* row = logits + (seq - 1) * vocab;
    next = 0;
    for (int64_t v = 1; v < vocab; ++v)
      if (row[v] > row[next]) next = v;
    if (next != want[step]) ++mismatches;
    for (size_t k = 0; k < kv; ++k) { /* the presents are the next step's past */
      float* t = past[k];
      past[k] = present[k];
      present[k] = t;
    }
    past_len += seq;
    ids = &next;
    seq = 1;
  }
  printf("c_api_decode: %zu tokens, %d differ from PyTorch's\n", steps, mismatches);
  for (size_t k = 0; k < kv; ++k) {
    free(past[k]);
    free(present[k]);
  }
  free(logits);
  free(prompt);
  free(want);
  ferrite_session_destroy(s);
  return mismatches == 0 && steps == 64 ? 0 : 1;
}
