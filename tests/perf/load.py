"""A competing process for the whole benchmark run (bench.py --load KIND): the cores shared
with other work, as on a busy server. See tests/perf/README.md, "Load".

    omp2, omp1, ompN  tests/perf/load.c with N OpenMP threads in parallel loops, back to back
    spin1             the same program as one thread in a busy loop
"""
import os
import re
import signal
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
LOAD = os.path.join(ROOT, "build", "perf", "load")  # tests/perf/load.c


def parse(kind):
    """(program arguments, OMP_NUM_THREADS) for a --load value, or None for 'none'; raises
    ValueError for an unknown one."""
    if kind in (None, "", "none"):
        return None
    m = re.fullmatch(r"omp([1-9][0-9]?)", kind)
    if m:
        return ["omp", m.group(1)], m.group(1)
    if kind == "spin1":
        return ["spin"], "1"
    raise ValueError(f"unknown --load {kind!r} (none, ompN, spin1)")


def build():
    """Compiles load.c into build/perf/load if it is missing or older."""
    src = os.path.join(HERE, "load.c")
    if os.path.exists(LOAD) and os.path.getmtime(LOAD) >= os.path.getmtime(src):
        return
    os.makedirs(os.path.dirname(LOAD), exist_ok=True)
    subprocess.run(["cc", "-O2", "-fopenmp", "-o", LOAD, src], check=True)


def cpu_seconds(pid):
    """User + system CPU time of a running process, from /proc (None once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


class Load:
    """Runs the competing process from start() to stop(); stop() returns what it got."""

    def __init__(self, kind):
        self.kind = kind
        self.args, self.threads = parse(kind)
        self.process = None
        self.started = None

    def start(self, nice=0):
        build()
        env = dict(os.environ, OMP_NUM_THREADS=self.threads)
        self.process = subprocess.Popen([LOAD] + self.args, env=env, stdin=subprocess.DEVNULL,
                                        preexec_fn=(lambda: os.nice(nice)) if nice else None)
        self.started = time.time()
        time.sleep(0.2)  # its threads up and running before the first measurement
        if self.process.poll() is not None:
            raise RuntimeError(f"--load {self.kind}: {LOAD} exited ({self.process.returncode})")

    def stop(self):
        if self.process is None:
            return None
        cpu = cpu_seconds(self.process.pid)
        wall = time.time() - self.started
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        alive = self.process.returncode in (-signal.SIGTERM, -signal.SIGKILL)
        self.process = None
        return {"kind": self.kind, "command": [LOAD] + self.args, "threads": int(self.threads),
                "wall_s": round(wall, 1), "cpu_s": cpu,
                "cpu_per_wall": round(cpu / wall, 2) if cpu is not None and wall > 0 else None,
                "ran_to_the_end": alive}
