"""Fixtures of the Python tests, run by ctest (label python, one entry per test file) against the
build tree: PYTHONPATH=<build>/python, FASTSMT_BIN=<build>/bin, FASTSMT_TESTDATA=tests/data,
FASTSMT_SOURCE=<repository>. Shared data: FASTSMT_SHARED (else FASTSMT_SHARED_DEFAULT); a test
that needs it skips without it, and fails instead when FASTSMT_REQUIRE_SHARED is set (as
tests/testutil.c's tu_shared_path does). An optional Python package (Dask, pandas, NumPy) is
imported with require_module: a skip without it, a failure when FASTSMT_REQUIRE_PYTHON_DEPS is set
(CI, which installs them). A run in which every test skipped exits SKIP_CODE, so that ctest shows
the file as Skipped, not Passed (docs/testing.md)."""
import importlib
import os
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("FASTSMT_SOURCE") or os.path.dirname(os.path.dirname(HERE))
TESTDATA = os.environ.get("FASTSMT_TESTDATA") or os.path.join(SOURCE, "tests", "data")


def env_on(name):
    v = os.environ.get(name, "")
    return v != "" and v != "0"


def shared_path(rel):
    """The path of rel in the shared folder; skips (or fails under FASTSMT_REQUIRE_SHARED)."""
    root = os.environ.get("FASTSMT_SHARED") or os.environ.get("FASTSMT_SHARED_DEFAULT")
    p = os.path.join(root, rel) if root else None
    if p and os.access(p, os.R_OK):
        return p
    why = "shared file %s/%s is absent" % (root or "<no shared folder>", rel)
    if env_on("FASTSMT_REQUIRE_SHARED"):
        pytest.fail("FASTSMT_REQUIRE_SHARED is set but the " + why)
    pytest.skip(why + " (set FASTSMT_SHARED)")


def require_module(name, package):
    """The module name (importorskip); fails instead of skipping under FASTSMT_REQUIRE_PYTHON_DEPS.
    package: what installs it (for the message)."""
    if env_on("FASTSMT_REQUIRE_PYTHON_DEPS"):
        try:
            return importlib.import_module(name)
        except ImportError as exc:
            pytest.fail("FASTSMT_REQUIRE_PYTHON_DEPS is set but %s cannot be imported (%s; %s)"
                        % (name, exc, package), pytrace=False)
    return pytest.importorskip(name, reason="%s is not installed" % package)


SKIP_CODE = 77  # the tests' SKIP_RETURN_CODE, as tests/tu_main.c's TU_SKIP_CODE
_outcomes = {"ran": 0, "skipped": 0}


def pytest_collectreport(report):
    if report.skipped:  # a whole module skipped at import
        _outcomes["skipped"] += 1


def pytest_runtest_logreport(report):
    if report.when == "call" or (report.when == "setup" and not report.passed):
        _outcomes["skipped" if report.skipped else "ran"] += 1


def pytest_sessionfinish(session, exitstatus):
    # pytest exits 0, or 5 (nothing collected) when a module skipped at import
    if exitstatus in (0, 5) and _outcomes["skipped"] and not _outcomes["ran"]:
        session.exitstatus = SKIP_CODE


def glm_tool():
    b = os.environ.get("FASTSMT_BIN")
    p = os.path.join(b, "glm") if b else None
    if not p or not os.access(p, os.X_OK):
        pytest.skip("the glm tool is not built (FASTSMT_BIN=%s)" % b)
    return p


def glm_query(model, text_path, null_context=False):
    """Runs `glm query -v word` (KenLM query's output): per line a list of
    (word, id, ngram length, log10 prob text) and the line's Total text."""
    cmd = [glm_tool(), "query", "-v", "word"] + (["-n"] if null_context else []) + [model]
    with open(text_path, "rb") as f:
        out = subprocess.run(cmd, stdin=f, stdout=subprocess.PIPE, check=True).stdout
    return parse_query(out.decode("utf-8"))


def parse_query(out):
    """KenLM query's per-word output (text) as glm_query returns it."""
    lines = []
    for line in out.split("\n"):
        if "Total: " not in line:
            continue
        body, total = line.split("Total: ")
        words = []
        for field in body.split("\t")[:-1]:
            word, rest = field.rsplit("=", 1)
            wid, length, prob = rest.split(" ")
            words.append((word, int(wid), int(length), prob))
        lines.append((words, total.split(" OOV: ")[0]))
    return lines


@pytest.fixture(scope="session")
def kenlm():
    import fastsmt.kenlm
    return fastsmt.kenlm


@pytest.fixture(scope="session")
def sample_arpa():
    return os.path.join(SOURCE, "examples", "sample", "lm.3.arpa.gz")


@pytest.fixture(scope="session")
def sample_text():
    return os.path.join(TESTDATA, "python", "sample.en")


@pytest.fixture(scope="session")
def sample_model(kenlm, sample_arpa):
    return kenlm.Model(sample_arpa)
