#!/usr/bin/env python3
"""ctest capi.python_ctypes: the ctypes module against the fixtures' JSON, the error paths, and
the example script. Environment: FOURDGS_C_LIBRARY (the shared library), FOURDGS_TEST_DATA (the
fixtures directory), FOURDGS_EXAMPLE (summary.py)."""
import json
import math
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fourdgs  # noqa: E402

DATA = os.environ.get("FOURDGS_TEST_DATA", os.path.join(os.path.dirname(__file__), "../../tests/data"))


def fixture(name):
    with open(os.path.join(DATA, name + ".json")) as f:
        return os.path.join(DATA, name + ".4dgs"), json.load(f)


class ReaderTest(unittest.TestCase):
    def test_version(self):
        self.assertRegex(fourdgs.version(), r"^\d+\.\d+\.\d+$")

    def test_birth_fixtures_match_their_json(self):
        for name in ("birth-deflate", "birth-extras", "birth-zstd-sh3-balanced",
                     "birth-never-fades-no-index"):
            path, want = fixture(name)
            with self.subTest(name), fourdgs.Reader(path) as r:
                info = r.info()
                self.assertEqual(info["gaussian_count"], want["header"]["gaussian_count"])
                self.assertEqual(info["duration_sec"], want["header"]["duration_sec"])
                self.assertEqual(info["temporal_model_name"], "gaussian-birth")
                self.assertEqual(info["header_attributes"], want["header"]["attributes"])
                for t, count in want["visible_count_at"].items():
                    frame = r.evaluate(float(t), sh_degree=info["sh_degree"])
                    self.assertEqual(frame.count, count, f"visible at {t}")
                    self.assertEqual(len(frame.center), 3 * count)
                    self.assertEqual(len(frame.sh), 3 * ((info["sh_degree"] + 1) ** 2 - 1) * count)
                    for i in range(frame.count):
                        self.assertTrue(0.0 <= frame.color[4 * i + 3] <= 1.0)
                        q = frame.rotation[4 * i:4 * i + 4]
                        self.assertAlmostEqual(math.sqrt(sum(x * x for x in q)), 1.0, places=3)

    def test_keyframe_delta_through_the_same_calls(self):
        path, want = fixture("keyframe-delta-churn")
        with fourdgs.Reader(path) as r:
            info = r.info()
            self.assertEqual(info["temporal_model_name"], "keyframe-delta")
            for state in want["states"]:
                frame = r.evaluate(state["chunk_t0"])
                self.assertLessEqual(frame.count, state["live"])

    def test_memory_and_refusals(self):
        path, _ = fixture("birth-deflate")
        with open(path, "rb") as f:
            data = f.read()
        with fourdgs.Reader(data=data) as r:
            self.assertEqual(r.info()["gaussian_count"], 300)
        bad = bytearray(data)
        bad[1] ^= 0x40
        with self.assertRaises(fourdgs.FourdgsError) as e:
            fourdgs.Reader(data=bytes(bad))
        self.assertEqual((e.exception.status_name, e.exception.refusal), ("malformed", "magic-mismatch"))
        with self.assertRaises(fourdgs.FourdgsError) as e:
            fourdgs.Reader(data=data[: len(data) // 2])
        self.assertIn(e.exception.status_name, ("truncated", "malformed"))
        with self.assertRaises(fourdgs.FourdgsError) as e:
            fourdgs.Reader("/nonexistent/file.4dgs")
        self.assertEqual((e.exception.status_name, e.exception.refusal), ("io", "io-error"))
        with fourdgs.Reader(path) as r, self.assertRaises(fourdgs.FourdgsError) as e:
            r.evaluate(float("nan"))
        self.assertEqual(e.exception.refusal, "non-finite-input")

    def test_validate(self):
        path, _ = fixture("birth-extras")
        findings = fourdgs.validate(path)
        self.assertEqual([f for f in findings if f["severity"] == "error"], [])

    def test_example_prints_a_summary(self):
        example = os.environ.get("FOURDGS_EXAMPLE", os.path.join(os.path.dirname(__file__), "summary.py"))
        path, _ = fixture("birth-extras")
        out = subprocess.run([sys.executable, example, path, "0.5"], capture_output=True, text=True,
                             env=dict(os.environ, PYTHONPATH=os.path.dirname(example)))
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("120 gaussians", out.stdout)
        self.assertIn("visible", out.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
