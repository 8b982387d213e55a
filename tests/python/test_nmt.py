"""fastsmt.NMT against the nmt tool on the tiny model of tests/data/nmt."""
import os
import subprocess

import pytest

from conftest import TESTDATA

fastsmt = pytest.importorskip("fastsmt")
if not hasattr(fastsmt, "NMT"):
    pytest.skip("this build has no nmt (FASTSMT_COMPONENTS)", allow_module_level=True)

NMT_DATA = os.path.join(TESTDATA, "nmt")
MODEL = os.path.join(NMT_DATA, "tiny")


def nmt_tool():
    p = os.path.join(os.environ.get("FASTSMT_BIN", ""), "nmt")
    if not os.access(p, os.X_OK):
        pytest.skip("the nmt tool is not built")
    return p


def read(path):
    with open(path, encoding="utf-8") as f:
        return [l.rstrip("\n") for l in f]


def test_score_equals_nmt_score():
    src, ref = os.path.join(NMT_DATA, "fixture.src"), os.path.join(NMT_DATA, "fixture.ref")
    want = subprocess.run([nmt_tool(), "score", "--model", MODEL, "--source", src, "--target", ref],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          check=True).stdout.decode().split()
    for threads in (1, 2):
        m = fastsmt.NMT(MODEL, threads=threads)
        got = m.score(read(src), read(ref))
        assert ["%.6f" % x for x in got] == want
        assert m.score([], []) == []
        # one pair alone scores as in the batch (the batch shares nothing that changes a score)
        assert m.score(read(src)[1:2], [read(ref)[1].encode()]) == got[1:2]
        m.close()
        with pytest.raises(ValueError):
            m.score(read(src), read(ref))


def test_rescore_equals_nmt_rescore(tmp_path):
    src, nb = os.path.join(NMT_DATA, "fixture.src"), os.path.join(NMT_DATA, "fixture.nbest")
    for weight, bonus in ((0.3, 0.0), (0.5, 0.25)):
        tn, tb = tmp_path / "tool.nbest", tmp_path / "tool.best"
        with open(tb, "wb") as out:
            subprocess.run([nmt_tool(), "rescore", "--model", MODEL, "--source", src, "--nbest", nb,
                            "--weight", str(weight), "--length-bonus", str(bonus),
                            "--nbest-out", str(tn)], stdout=out, stderr=subprocess.DEVNULL,
                           check=True)
        pn, pb = tmp_path / "py.nbest", tmp_path / "py.best"
        fastsmt.NMT(MODEL).rescore(src, nb, weight=weight, length_bonus=bonus, nbest_out=str(pn),
                                   best_out=str(pb))
        assert pn.read_bytes() == tn.read_bytes()
        assert pb.read_bytes() == tb.read_bytes()


def test_errors(tmp_path):
    with pytest.raises(OSError):
        fastsmt.NMT(str(tmp_path / "missing"))
    m = fastsmt.NMT(MODEL)
    with pytest.raises(ValueError):
        m.score(["a"], ["b", "c"])
    with pytest.raises(ValueError):
        m.score(["a\0b"], ["c"])
    with pytest.raises(TypeError):
        m.score(["a"], [3])
    with pytest.raises(ValueError):  # an unparsable n-best list names file:line
        bad = tmp_path / "bad.nbest"
        bad.write_text("0 ||| a b\n")
        m.rescore(os.path.join(NMT_DATA, "fixture.src"), str(bad), best_out=str(tmp_path / "b"))
