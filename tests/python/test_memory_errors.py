"""A model that needs more memory than the process may have (issue 25's D2): each run must
say so, and the session must stay usable. The engine used to release the model's graph
before the session that allocates the pool existed, so after the first out-of-memory
error every later run said "the model's graph was released ..." instead.

The model (tests/fuzz/regressions/matmul_12GB_intermediate.onnx) multiplies a [55000, 1]
by a [1, 55000]: a 12.1 GB output. The runs happen in a child process whose address space
is capped at 8 GB (RLIMIT_AS), so the allocation fails the same way on any machine.
"""
import json
import os
import pathlib
import subprocess
import sys
import textwrap
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / "tests" / "fuzz" / "regressions" / "matmul_12GB_intermediate.onnx"

CHILD = textwrap.dedent("""
    import json, resource, sys
    import numpy as np
    import ferrite
    resource.setrlimit(resource.RLIMIT_AS, (8_000_000_000, 8_000_000_000))
    a = np.ones((55000, 1), np.float32)
    b = np.ones((1, 55000), np.float32)
    outcomes = []
    try:
        sess = ferrite.InferenceSession(sys.argv[1])
    except Exception as e:  # a memory limit may refuse the model at load
        outcomes.append(["load", type(e).__name__, str(e)])
        sess = None
    for _ in range(3 if sess else 0):
        try:
            (y,) = sess.run(None, {"a": a, "b": b})
            outcomes.append(["ok", str(y.shape), str(float(y[0, 0]))])
        except Exception as e:
            outcomes.append(["error", type(e).__name__, str(e)])
    print(json.dumps(outcomes))
""")


class OutOfMemory(unittest.TestCase):
    def test_every_run_reports_the_real_error_and_the_session_survives(self):
        env = dict(os.environ, OMP_NUM_THREADS="1")
        child = subprocess.run([sys.executable, "-c", CHILD, str(MODEL)], env=env,
                               capture_output=True, text=True, timeout=300)
        self.assertEqual(child.returncode, 0, child.stderr)
        outcomes = json.loads(child.stdout.strip().splitlines()[-1])
        self.assertGreater(len(outcomes), 0)
        first = outcomes[0]
        # The first attempt cannot succeed in 8 GB: a clear out-of-memory (or memory-limit)
        # error, from ferrite (ferrite.Error) or as Python's MemoryError.
        self.assertIn(first[1], ("Error", "MemoryError"), outcomes)
        self.assertRegex(first[2], r"(?i)memory", outcomes)
        for kind, name, message in outcomes[1:]:
            if kind == "ok":
                self.assertEqual(name, "(55000, 55000)", outcomes)
                self.assertEqual(message, "1.0", outcomes)
                continue
            self.assertNotIn("released", message, outcomes)
            self.assertRegex(message, r"(?i)memory", outcomes)


if __name__ == "__main__":
    unittest.main()
