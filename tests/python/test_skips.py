"""conftest.py's skip rules, each on a small test file run by pytest in a subprocess beside a copy of
conftest.py: a file whose tests all skipped exits 77 (ctest: Skipped), one where a test ran exits 0,
and a missing optional package fails under FASTSMT_REQUIRE_PYTHON_DEPS."""
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))

MODULE_SKIP = """
from conftest import require_module
require_module("fastsmt_no_such_module", "nothing")
def test_never():
    pass
"""
SOME_RAN = """
import pytest
def test_runs():
    pass
def test_skips():
    pytest.skip("skipped on purpose")
"""
ALL_SKIPPED = """
import pytest
def test_skips():
    pytest.skip("skipped on purpose")
"""


def run(tmp_path, text, require):
    shutil.copy(os.path.join(HERE, "conftest.py"), tmp_path / "conftest.py")
    (tmp_path / "test_probe.py").write_text(text)
    env = dict(os.environ, FASTSMT_REQUIRE_PYTHON_DEPS="1" if require else "0")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(tmp_path / "test_probe.py")], cwd=tmp_path, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT).returncode


@pytest.mark.parametrize("text,require,code", [
    (MODULE_SKIP, False, 77), (ALL_SKIPPED, False, 77), (SOME_RAN, False, 0),
    (MODULE_SKIP, True, 2), (SOME_RAN, True, 0)])
def test_skip_exit_codes(tmp_path, text, require, code):
    assert run(tmp_path, text, require) == code
