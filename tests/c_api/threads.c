/* One session used from several threads at once, through the C API (ctest c_api_threads;
 * scripts/test.sh builds it with ThreadSanitizer, where any data race fails the run).
 *
 *   c_api_threads MLP SYM_ADD
 *
 * Eight threads share an mlp session (static shapes) and a sym_add session (a symbolic
 * batch: each thread feeds its own batch size, so plans are compiled while other threads
 * run). Every output is checked: the mlp's against a first single-threaded run, sym_add's
 * against a + b. Also a session per thread, created and destroyed concurrently. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferrite.h"

enum { kThreads = 8, kRuns = 12 };

static FerriteSession* mlp;
static FerriteSession* sym;
static const char* mlp_path;
static float expected[10];

static int run_mlp(FerriteSession* s, float* y) {
  float x[64];
  for (int i = 0; i < 64; ++i) x[i] = sinf(0.37f * (float)i);
  const int64_t shape[2] = {1, 64};
  const FerriteTensor in = {FERRITE_FLOAT32, 2, shape, x, sizeof(x)};
  const char* name = "x";
  FerriteOutput out;
  memset(&out, 0, sizeof(out));
  out.data = y;
  out.capacity = 10 * sizeof(float);
  const FerriteStatus status = ferrite_session_run(s, 1, &name, &in, 1, NULL, &out);
  if (status != FERRITE_OK) fprintf(stderr, "run: %s\n", ferrite_last_error());
  return status == FERRITE_OK;
}

static void* worker(void* arg) {
  const int t = (int)(size_t)arg;
  long bad = 0;
  for (int r = 0; r < kRuns; ++r) {
    float y[10];
    bad += !run_mlp(mlp, y);
    for (int i = 0; i < 10; ++i) bad += y[i] != expected[i];

    const int64_t n = 1 + t % 4;
    float a[12], b[12], c[12];
    for (int i = 0; i < n * 3; ++i) {
      a[i] = (float)(t * 100 + i);
      b[i] = (float)r;
    }
    const int64_t shape[2] = {n, 3};
    const FerriteTensor ins[2] = {{FERRITE_FLOAT32, 2, shape, a, (size_t)n * 12},
                                  {FERRITE_FLOAT32, 2, shape, b, (size_t)n * 12}};
    const char* names[2] = {"a", "b"};
    FerriteOutput out;
    memset(&out, 0, sizeof(out));
    out.data = c;
    out.capacity = sizeof(c);
    bad += ferrite_session_run(sym, 2, names, ins, 1, NULL, &out) != FERRITE_OK;
    for (int i = 0; i < n * 3; ++i) bad += c[i] != a[i] + b[i];
    /* An error on this thread leaves the other threads' messages alone. */
    bad += ferrite_session_run(sym, 1, names, ins, 1, NULL, &out) != FERRITE_RUN_ERROR;
    bad += strstr(ferrite_last_error(), "missing input 'b'") == NULL;
  }
  /* A session of its own, created, run and destroyed while the others run. */
  FerriteSession* own = NULL;
  if (ferrite_session_create(mlp_path, NULL, &own) != FERRITE_OK) {
    ++bad;
  } else {
    float y[10];
    bad += !run_mlp(own, y);
    for (int i = 0; i < 10; ++i) bad += fabsf(y[i] - expected[i]) > 1e-6f;
    ferrite_session_destroy(own);
  }
  return (void*)bad;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s MLP SYM_ADD\n", argv[0]);
    return 2;
  }
  mlp_path = argv[1];
  if (ferrite_session_create(argv[1], NULL, &mlp) != FERRITE_OK ||
      ferrite_session_create(argv[2], NULL, &sym) != FERRITE_OK) {
    fprintf(stderr, "load: %s\n", ferrite_last_error());
    return 1;
  }
  if (!run_mlp(mlp, expected)) return 1;
  pthread_t threads[kThreads];
  for (int t = 0; t < kThreads; ++t) pthread_create(&threads[t], NULL, worker, (void*)(size_t)t);
  long bad = 0;
  for (int t = 0; t < kThreads; ++t) {
    void* result;
    pthread_join(threads[t], &result);
    bad += (long)result;
  }
  ferrite_session_destroy(mlp);
  ferrite_session_destroy(sym);
  printf("%d threads x %d runs: %ld wrong\n", kThreads, kRuns, bad);
  return bad == 0 ? 0 : 1;
}
