// load omp N | load spin: a process competing for the cores, for bench.py --load.
//
//   omp N  N OpenMP threads (GNU libgomp with its default wait policy, as a server running a
//          model or two would have) running parallel loops of about a millisecond of
//          arithmetic each, one after another: each thread computes its static share, then
//          waits at the loop's barrier, polling, for the others.
//   spin   one thread in a busy loop.
//
// It runs until it is killed, and dies with its parent (PR_SET_PDEATHSIG). bench.py builds
// it with `cc -O2 -fopenmp` into build/perf/load.
#define _GNU_SOURCE
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define N (1 << 14)

static float data[N];

static void omp_load(int threads) {
  for (int i = 0; i < N; ++i) data[i] = (float)i * 1e-6f;
  for (;;) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int i = 0; i < N; ++i) {
      float x = data[i];
      for (int k = 0; k < 32; ++k) x = x * 0.999f + 0.001f;
      data[i] = x;
    }
  }
}

static void spin_load(void) {
  volatile unsigned long n = 0;
  for (;;) ++n;
}

int main(int argc, char** argv) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) return 0;  // the parent is already gone
  if (argc == 3 && strcmp(argv[1], "omp") == 0 && atoi(argv[2]) >= 1) {
    omp_load(atoi(argv[2]));
  } else if (argc == 2 && strcmp(argv[1], "spin") == 0) {
    spin_load();
  }
  fprintf(stderr, "usage: load omp THREADS | load spin\n");
  return 2;
}
