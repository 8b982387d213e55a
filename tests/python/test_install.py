"""The install line of docs/python.md in a fresh virtual environment, offline:
python3 -m venv --system-site-packages V && V/bin/python -m pip install --no-build-isolation .
run on a copy of the source tree (the build leaves build-python/ and an egg-info behind)."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import SOURCE


def test_pip_install_in_fresh_venv(tmp_path):
    if os.environ.get("FASTSMT_SKIP_PIP_TEST"):
        pytest.skip("FASTSMT_SKIP_PIP_TEST is set")
    try:
        import ensurepip  # noqa: F401  (Debian: python3-venv)
        import setuptools  # noqa: F401
        import wheel  # noqa: F401
    except ImportError as exc:
        pytest.skip("venv/setuptools/wheel missing (%s): tools/install-deps.sh --tests" % exc)
    src = tmp_path / "src"
    shutil.copytree(SOURCE, src, ignore=shutil.ignore_patterns(
        ".git", "build", "build-*", "*.egg-info", "__pycache__", "sample-bin", "sample.nbest"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    env = dict(os.environ, FASTSMT_CMAKE_ARGS="-DFASTSMT_COMPONENTS=glm", PIP_NO_INDEX="1")
    env.pop("PYTHONPATH", None)  # the installed package, not the build tree's
    r = subprocess.run([py, "-m", "pip", "install", "-q", "--no-build-isolation", "."], cwd=src,
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert r.returncode == 0, r.stdout.decode(errors="replace")[-4000:]
    code = ("import fastsmt, fastsmt.kenlm as kenlm; print(fastsmt.__file__); "
            "print(kenlm.Model('examples/sample/lm.3.arpa.gz').score('in the beginning'))")
    out = subprocess.run([py, "-c", code], cwd=src, env=env, check=True,
                         stdout=subprocess.PIPE).stdout.decode().split("\n")
    assert out[0].startswith(str(venv)), out  # imported from the environment
    import fastsmt.kenlm as kenlm
    want = kenlm.Model(os.path.join(SOURCE, "examples/sample/lm.3.arpa.gz")).score("in the beginning")
    assert float(out[1]) == want
