// spawn TIMEOUT_S STDOUT_FILE STDERR_FILE CMD [ARG...]: runs CMD with its output redirected,
// waits for it with wait4 and prints one JSON line: exit status, peak RSS, CPU and wall time.
//
// Why a separate tiny program: Linux keeps a process's peak RSS (ru_maxrss) across execve,
// and a forked child starts with its parent's resident size, so a child spawned straight
// from the Python orchestrator (numpy, onnx, expected outputs: hundreds of MiB) would report
// at least the orchestrator's size. Forked from this ~1 MiB program, the child's ru_maxrss
// is its own. bench.py compiles it with `cc -O2` into build/perf/spawn.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pid_t child;
static volatile sig_atomic_t timed_out;

static void on_alarm(int sig) {
  (void)sig;
  timed_out = 1;
  if (child > 0) kill(child, SIGKILL);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: spawn TIMEOUT_S STDOUT_FILE STDERR_FILE CMD [ARG...]\n");
    return 2;
  }
  const unsigned timeout_s = (unsigned)strtoul(argv[1], NULL, 10);
  const double start = now_s();
  child = fork();
  if (child < 0) {
    printf("{\"error\": \"fork failed: %s\"}\n", strerror(errno));
    return 1;
  }
  if (child == 0) {
    const int out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int in = open("/dev/null", O_RDONLY);
    if (out < 0 || err < 0 || in < 0) _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    execvp(argv[4], argv + 4);
    dprintf(2, "error: cannot run %s: %s\n", argv[4], strerror(errno));
    _exit(127);
  }
  signal(SIGALRM, on_alarm);
  if (timeout_s > 0) alarm(timeout_s);
  int status = 0;
  struct rusage usage;
  while (wait4(child, &status, 0, &usage) < 0) {
    if (errno != EINTR) {
      printf("{\"error\": \"wait4 failed: %s\"}\n", strerror(errno));
      return 1;
    }
  }
  const double wall = now_s() - start;
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  printf(
      "{\"exit_status\": %d, \"timed_out\": %s, \"rss_kib\": %ld, \"cpu_s\": %.6f, "
      "\"wall_s\": %.6f}\n",
      code, timed_out ? "true" : "false", usage.ru_maxrss,
      usage.ru_utime.tv_sec + usage.ru_utime.tv_usec * 1e-6 + usage.ru_stime.tv_sec +
          usage.ru_stime.tv_usec * 1e-6,
      wall);
  return 0;
}
