"""Tests of scripts/check_layering.py: the repository keeps its layering,
and an include a layer may not make is caught and named."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.environ.get("ROOFTRACE_SOURCE_DIR",
                      os.path.join(os.path.dirname(__file__), "..", ".."))
CHECKER = os.path.join(ROOT, "scripts", "check_layering.py")


def run(root):
    return subprocess.run([sys.executable, CHECKER, root],
                          capture_output=True, text=True)


class LayeringTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="rooftrace_layering_")
        os.makedirs(os.path.join(self.tmp, "docs"))
        shutil.copy(os.path.join(ROOT, "docs", "architecture.md"),
                    os.path.join(self.tmp, "docs"))

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def write(self, rel, text):
        path = os.path.join(self.tmp, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    # The repository as it is keeps every rule.
    def test_repository_keeps_its_layering(self):
        r = run(ROOT)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    # libinject/ including collector/ is named with file, line and rule.
    def test_injected_library_may_not_include_the_collector(self):
        self.write("libinject/a.cc",
                   '#include <cstdio>\n#include "libinject/a.h"\n'
                   '#include "collector/server.h"\n')
        r = run(self.tmp)
        self.assertEqual(r.returncode, 1)
        self.assertIn("libinject/a.cc:3: libinject/ may not include "
                      "collector/server.h", r.stdout)

    # collector/ may not reach up into analyzer/.
    def test_collector_may_not_include_the_analyzer(self):
        self.write("collector/b.cc", '#include "analyzer/report.h"\n')
        r = run(self.tmp)
        self.assertEqual(r.returncode, 1)
        self.assertIn("collector/ may not include analyzer/report.h", r.stdout)

    # A single allowed header does not open its whole folder.
    def test_single_header_rules_are_exact(self):
        self.write("pipeline/c.cc", '#include "proto/field_numbers.h"\n')
        self.assertEqual(run(self.tmp).returncode, 0)
        self.write("pipeline/d.cc", '#include "proto/rooftrace.pb.h"\n')
        r = run(self.tmp)
        self.assertEqual(r.returncode, 1)
        self.assertIn("pipeline/d.cc:1", r.stdout)

    # model/ is the bottom: it includes nothing above base/.
    def test_model_includes_nothing_above_base(self):
        self.write("model/e.h", '#include "base/status.h"\n')
        self.assertEqual(run(self.tmp).returncode, 0)
        self.write("model/f.h", '#include "pipeline/rows.h"\n')
        self.assertEqual(run(self.tmp).returncode, 1)

    # No rules: a clear refusal, not a pass.
    def test_missing_rules_fail(self):
        os.remove(os.path.join(self.tmp, "docs", "architecture.md"))
        r = run(self.tmp)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("architecture.md", r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()
