"""fastsmt.PhraseTable against `probingpt query`, fastsmt.Decoder against the fastsmt tool, on the
sample model of examples/sample."""
import os
import struct
import subprocess

import pytest

from conftest import SOURCE

fastsmt = pytest.importorskip("fastsmt")
if not hasattr(fastsmt, "Decoder"):
    pytest.skip("this build has no decoder (FASTSMT_COMPONENTS)", allow_module_level=True)

SAMPLE = os.path.join(SOURCE, "examples", "sample")


def tool(name):
    p = os.path.join(os.environ.get("FASTSMT_BIN", ""), name)
    if not os.access(p, os.X_OK):
        pytest.skip("the %s tool is not built" % name)
    return p


def f32(x):
    return struct.pack("<f", float(x))


@pytest.fixture(scope="module")
def ppt(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("ppt") / "s.ppt")
    subprocess.run([tool("probingpt"), "build", "--phrase-table",
                    os.path.join(SAMPLE, "phrase-table.gz"), "--reordering",
                    os.path.join(SAMPLE, "reordering-table.wbe-msd-bidirectional-fe.gz"),
                    "--out", out], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


def query(ppt_path, sources, reordering=False):
    cmd = [tool("probingpt"), "query", ppt_path] + (["--reordering"] if reordering else [])
    out = subprocess.run(cmd, input="\n".join(sources).encode() + b"\n", stdout=subprocess.PIPE,
                         check=True).stdout.decode()
    groups, cur = [], []
    for line in out.split("\n")[:-1]:  # each source's lines, then an empty line
        if line:
            cur.append(line.split(" ||| "))
        else:
            groups.append(cur)
            cur = []
    assert len(groups) == len(sources)
    return groups


def test_phrase_table_equals_probingpt_query(ppt):
    sources = ["de la", "en el principio", "dios", "zzzz", "de", "la casa de"]
    t = fastsmt.PhraseTable(ppt)
    assert t.num_scores == 4 and t.num_reordering_scores == 6
    lines, reo = query(ppt, sources), query(ppt, sources, reordering=True)
    seen = 0
    for src, want, want_r in zip(sources, lines, reo):
        got = t.lookup(src)
        assert len(got) == len(want), src
        for g, w, r in zip(got, want, want_r):
            assert w[0] == src and g["target"] == w[1]
            assert [f32(x) for x in g["scores"]] == [f32(x) for x in w[2].split()]
            assert g["alignment"] == [tuple(int(v) for v in a.split("-")) for a in w[3].split()]
            assert [f32(x) for x in g["counts"]] == [f32(x) for x in w[4].split()]
            assert r[1] == g["target"]
            assert [f32(x) for x in g["reordering"]] == [f32(x) for x in r[2].split()]
            seen += 1
    assert seen > 100
    assert t.lookup("zzzz") == [] and t.lookup("") == []
    assert t.lookup(b"de la") == t.lookup("de  \tla")
    t.close()
    with pytest.raises(ValueError):
        t.lookup("de la")
    with pytest.raises(OSError) as e:
        fastsmt.PhraseTable(os.path.join(SAMPLE, "phrase-table.gz"))  # text, not a probingpt file
    assert "Cannot read phrase table" in str(e.value)


@pytest.fixture(scope="module")
def tool_output(tmp_path_factory):
    d = tmp_path_factory.mktemp("dec")
    nbest = str(d / "nbest")
    with open(os.path.join(SAMPLE, "sample.es"), "rb") as f:
        out = subprocess.run([tool("fastsmt"), "-f", os.path.join(SAMPLE, "moses.ini"),
                              "-n-best-list", nbest, "5", "distinct"], stdin=f,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout
    with open(nbest) as f:
        nb = [l.rstrip("\n") for l in f]
    return out.decode().split("\n")[:-1], nb


def parse_nbest_line(line):
    f = line.split(" ||| ")
    feats, cur = {}, None
    for tok in f[2].split():
        if tok.endswith("="):
            cur = feats.setdefault(tok[:-1], [])
        else:
            cur.append(float(tok))
    return int(f[0]), {"words": f[1].strip(), "features": feats, "total": float(f[3])}


def test_decoder_equals_the_tool(tool_output):
    best, nbest = tool_output
    lines = [l.rstrip("\n") for l in open(os.path.join(SAMPLE, "sample.es"), encoding="utf-8")]
    assert len(best) == len(lines)
    want_nb = [[] for _ in lines]
    for l in nbest:
        i, e = parse_nbest_line(l)
        want_nb[i].append(e)
    for threads in (1, 2):
        d = fastsmt.Decoder(os.path.join(SAMPLE, "moses.ini"), threads=threads)
        assert d.threads == threads
        assert [d.translate(l) for l in lines[:3]] == best[:3]
        r = d.translate_batch(lines, nbest=5, distinct=True)
        assert [x["translation"] for x in r] == best
        assert [x["nbest"] for x in r] == want_nb
        for x in r:
            assert x["score"] == pytest.approx(x["nbest"][0]["total"], abs=1e-3)
        assert [x["nbest"] for x in d.translate_batch(lines[:2])] == [[], []]
        data = d.translate_data(lines[1])
        assert " ".join(data["words"]) == best[1].strip()
        n_src = len(lines[1].split())
        covered = sorted(i for p in data["phrases"] for i in range(p[0], p[1] + 1))
        assert covered == list(range(n_src))  # every source word translated once
        assert all(0 <= s < n_src and 0 <= t < len(data["words"]) for s, t in data["alignment"])
        d.close()
        with pytest.raises(ValueError):
            d.translate(lines[0])
    with pytest.raises(OSError):
        fastsmt.Decoder(os.path.join(SAMPLE, "missing.ini"))
    d = fastsmt.Decoder(os.path.join(SAMPLE, "moses.ini"))
    with pytest.raises(ValueError) as e:  # more than DEC_MAX_SENTENCE tokens
        d.translate_batch(["de " * 1001])
    assert "line 0" in str(e.value)
    with pytest.raises(ValueError):
        d.translate("de " * 1001)


def test_decoder_close_while_translating_is_refused():
    """close() from another thread while a batch translates: refused, never a crash."""
    import threading
    lines = [l.rstrip("\n") for l in open(os.path.join(SAMPLE, "sample.es"), encoding="utf-8")]
    d = fastsmt.Decoder(os.path.join(SAMPLE, "moses.ini"), threads=1)
    want = d.translate_batch(lines[:2])
    result = {}

    def batch():
        try:
            result["out"] = d.translate_batch(lines * 3)
        except Exception as exc:  # noqa: BLE001 (inspected below)
            result["error"] = exc

    t = threading.Thread(target=batch)
    t.start()
    refused = closed = False
    while t.is_alive() and not (refused or closed):
        try:
            d.close()
            closed = True
        except RuntimeError as exc:
            assert "translating" in str(exc)
            refused = True
    t.join()
    if refused:
        assert [x["translation"] for x in result["out"][:2]] == [x["translation"] for x in want]
    elif "out" not in result:
        assert isinstance(result["error"], ValueError)  # closed before it began
    d.close()


def test_decoder_model_cache(tmp_path, monkeypatch):
    """model_cache: a folder receives the binarized tables; False and "off" write no cache; None
    is the tool's folder, from the environment."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("FASTSMT_CACHE", raising=False)
    ini = os.path.join(SAMPLE, "moses.ini")
    line = open(os.path.join(SAMPLE, "sample.es"), encoding="utf-8").readline().rstrip("\n")
    want = fastsmt.Decoder(ini, model_cache=False).translate(line)
    assert not any(home.rglob("*")), "model_cache=False wrote into the home folder"
    assert fastsmt.Decoder(ini, model_cache="off").translate(line) == want
    assert not any(home.rglob("*"))
    cache = tmp_path / "cache"
    assert fastsmt.Decoder(ini, model_cache=cache).translate(line) == want
    kept = sorted(p.suffix for p in cache.rglob("*") if p.is_file())
    assert ".ppt" in kept and ".glm" in kept, kept
    assert fastsmt.Decoder(ini).translate(line) == want  # None: ~/.cache/fastsmt
    assert any(p.suffix == ".ppt" for p in (home / ".cache" / "fastsmt").rglob("*"))
    with pytest.raises(TypeError):
        fastsmt.Decoder(ini, model_cache=3)
