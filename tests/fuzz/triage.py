#!/usr/bin/python3
"""Groups a campaign's findings by stack (tests/fuzz/run.sh calls it; also on its own).

  triage.py --bin build/fuzz/bin [--timeout 10] FINDINGS_DIR...

Each FINDINGS_DIR/<target>/ holds libFuzzer's artifacts (crash-*, timeout-*, oom-*,
leak-*). Each is run once more through its target to get the report, and reduced to a
signature: the kind (the sanitizer's SUMMARY, a timeout, an out-of-memory, a backend
disagreement or plan-contract line of the targets) and the first three frames in Ferrite's
own sources (compiler/, runtime/, jit/, bindings/), or the first frames at all, and the op's
lowering (lower_*) below them if there is one. Findings
with one signature are one bug. An artifact that is a file of regressions/ (libFuzzer names
artifacts by their SHA-1) is labelled REG; a signature that matches a line of
known_findings.tsv is labelled with that finding's id; the others are NEW. A timeout whose
rerun ends within the limit is labelled SLOW (the machine was busy: libFuzzer's limit is
wall-clock time) with the rerun's CPU seconds; an artifact that no longer fails is GONE.
Prints one line per signature: the count of artifacts that are not reproducers already, the
label, kind, frames, the smallest example, and the reproducers of regressions/ it matched.
"""
import hashlib
import resource
import argparse
import collections
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OWN = re.compile(r"/(compiler|runtime|jit|bindings)/")
FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ in (.+?) (/\S+?)(?::(\d+))?(?::\d+)?$")


def known_findings():
    rules = []
    with open(os.path.join(HERE, "known_findings.tsv")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                fid, pattern, note = (line.rstrip("\n").split("\t") + ["", ""])[:3]
                rules.append((fid, re.compile(pattern), note))
    return rules


def kind_of(report):
    m = re.search(r"==fuzz== [^\n]*", report)
    if m:
        # Disagreements all stop in differential.cc: the message tells them apart, less
        # the numbers, with kernels named by the ops they came from.
        text = re.sub(r"kernel '([^']*)'", lambda k: "kernel of " + "+".join(
            sorted(set(re.findall(r"k\d+_([A-Za-z]+)__", k.group(1))))), m.group(0))
        return re.sub(r"-?\d[\d.e+-]*", "N", text)[:200]
    m = re.search(r"SUMMARY: (\w+): ([\w-]+(?: [\w-]+)?)(?: (\S+))?", report)
    if m:
        where = f" at {os.path.basename(m.group(3))}" if m.group(3) else ""
        return f"{m.group(1)}: {m.group(2)}{where}"
    if "ERROR: libFuzzer: timeout" in report:
        return "timeout"
    if "out-of-memory" in report:
        return "out-of-memory"
    m = re.search(r"ERROR: libFuzzer: ([\w -]+)", report)
    if m:
        return m.group(1).strip()
    return "no report (fixed?)"


def frames_of(report):
    own, other = [], []
    for line in report.splitlines():
        m = FRAME.match(line)
        if not m:
            continue
        func, path, lineno = m.group(1), m.group(2), m.group(3) or "?"
        func = re.sub(r"\(anonymous namespace\)::", "", func)
        func = re.sub(r"\(.*", "", func)  # no argument lists
        where = f"{func} {os.path.basename(path)}:{lineno}"
        if OWN.search(path) and "/tests/fuzz/" not in path:
            own.append(where)
        elif "libFuzzer" not in path and "compiler-rt" not in path:
            other.append(where)
    frames = own[:3] if own else other[:3]
    # The op's lowering, when the fault is deeper (an overflow in the index simplifier is
    # one bug per op that feeds it absurd sizes).
    lowering = next((f for f in own[3:] if re.match(r"(ferrite::)?lower_\w+ ", f)), None)
    return frames + ([f"via {lowering}"] if lowering else [])


def reproduce(binary, artifact, timeout):
    """The target's report on the artifact, and the CPU seconds the run took."""
    cmd = [binary, f"-timeout={timeout}", "-rss_limit_mb=2048", artifact]
    env = dict(os.environ, ASAN_OPTIONS="symbolize=1:detect_leaks=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1", OMP_NUM_THREADS="1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=timeout * 3 + 30, env=env)
        report = p.stderr.decode("utf-8", "replace") + p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        report = "ERROR: libFuzzer: timeout (killed)"
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return report, cpu


def regression_hashes():
    out = {}
    reg = os.path.join(HERE, "regressions")
    for name in os.listdir(reg):
        with open(os.path.join(reg, name), "rb") as f:
            out[hashlib.sha1(f.read()).hexdigest()] = name
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--timeout", type=int, default=10)
    ap.add_argument("dirs", nargs="+")
    opts = ap.parse_args()
    rules = known_findings()
    regressions = regression_hashes()
    groups = collections.OrderedDict()
    for d in opts.dirs:
        for target in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            tdir = os.path.join(d, target)
            binary = os.path.join(opts.bin, f"fuzz_{target}")
            if not os.path.isdir(tdir) or not os.path.isfile(binary):
                continue
            for name in sorted(os.listdir(tdir)):
                if not re.match(r"(crash|timeout|oom|leak|slow-unit)-", name):
                    continue
                artifact = os.path.join(tdir, name)
                report, cpu = reproduce(binary, artifact, opts.timeout)
                kind = kind_of(report)
                reg = regressions.get(name.split("-", 1)[1], "")
                if kind == "no report (fixed?)" and name.startswith(("timeout", "slow-unit")):
                    kind = "SLOW: no timeout on rerun"
                sig = (target, kind, " < ".join(frames_of(report)))
                groups.setdefault(sig, []).append((artifact, reg, cpu))
    new = 0
    for (target, kind, frames), found in groups.items():
        text = f"{kind} {frames}"
        label = next((fid for fid, pattern, _ in rules if pattern.search(text)), "NEW")
        if kind.startswith("SLOW"):
            label = "SLOW"
        elif kind.startswith("no report"):
            label = "GONE"  # no longer a finding with this build
        fresh = [a for a, reg, _ in found if not reg]
        regs = sorted({reg for _, reg, _ in found if reg})
        if label == "SLOW":
            kind += f" (at most {max(cpu for _, _, cpu in found):.1f} s CPU)"
        if not fresh:
            label = "REG"
        new += label == "NEW"
        example = min(fresh or [a for a, _, _ in found], key=os.path.getsize)
        also = f" | also regressions/{{{','.join(regs)}}}" if regs else ""
        print(f"{len(fresh):4d}  {label:5s} {target:13s} {kind} | {frames} | {example}{also}")
    print(f"{len(groups)} signatures, {new} new")
    return 0


if __name__ == "__main__":
    sys.exit(main())
