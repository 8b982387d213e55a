"""fastsmt.dask on a LocalCluster of 2 worker processes: scores of a bag and of a dataframe, and
translations of a bag, equal to a plain loop in this process; each worker opens a model once."""
import os

import pytest

from conftest import SOURCE, TESTDATA, require_module

fastsmt = pytest.importorskip("fastsmt")
require_module("dask", "Debian's python3-dask")
distributed = require_module("distributed", "Debian's python3-distributed")
import dask.bag as db  # noqa: E402

import fastsmt.dask as fdask  # noqa: E402
import fastsmt.kenlm as kenlm  # noqa: E402

SAMPLE = os.path.join(SOURCE, "examples", "sample")
LM = os.path.join(SAMPLE, "lm.3.arpa.gz")


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")[:-1]


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, host="127.0.0.1")
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def glm_file(tmp_path_factory):
    # a .glm too, so the cache key is a path the workers share
    import subprocess
    out = str(tmp_path_factory.mktemp("glm") / "sample.glm")
    glm = os.path.join(os.environ.get("FASTSMT_BIN", ""), "glm")
    if not os.access(glm, os.X_OK):
        pytest.skip("the glm tool is not built")
    subprocess.run([glm, "build", LM, out], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return out


def test_score_bag_equals_a_loop(client, glm_file):
    lines = read_lines(os.path.join(TESTDATA, "python", "sample.en"))
    lines += ["", "a b c zzzunknown", "in the beginning".encode("utf-8")]
    model = kenlm.Model(glm_file)
    want = [model.score(s, bos=True, eos=True) for s in lines]
    want_nb = [model.score(s, bos=False, eos=False) for s in lines]
    want_ppl = [model.perplexity(s) for s in lines]
    for parts in (1, 3, 7):
        bag = db.from_sequence(lines, npartitions=parts)
        assert fdask.score_bag(bag, glm_file).compute() == want
        assert fdask.score_bag(bag, glm_file, bos=False, eos=False, threads=2).compute() == want_nb
        assert fdask.score_bag(bag, glm_file, perplexity=True).compute() == want_ppl
    # the ARPA file too (each worker binarizes it once)
    bag = db.from_sequence(lines, npartitions=4)
    assert fdask.score_bag(bag, LM).compute() == want
    # one open per worker process and model, however many partitions it scored
    opened = client.run(fdask.opened_here)
    assert len(opened) == 2
    assert any(opened.values()), "no worker opened a model"
    for counts in opened.values():
        assert all(n == 1 for n in counts.values()), counts
    assert fdask.opened_here() == {}  # the work ran in the workers, not here


def test_score_frame_adds_a_column(client, glm_file):
    pd = require_module("pandas", "Debian's python3-pandas")
    dd = require_module("dask.dataframe", "Debian's python3-dask with python3-pandas")
    lines = read_lines(os.path.join(TESTDATA, "python", "sample.en"))
    frame = pd.DataFrame({"id": range(len(lines)), "text": lines})
    model = kenlm.Model(glm_file)
    got = fdask.score_frame(dd.from_pandas(frame, npartitions=3), glm_file).compute()
    assert list(got["id"]) == list(range(len(lines)))
    assert list(got["text"]) == lines
    assert str(got["score"].dtype) == "float64"
    assert list(got["score"]) == [model.score(s) for s in lines]
    got = fdask.score_frame(dd.from_pandas(frame.rename(columns={"text": "doc"}), npartitions=2),
                            glm_file, column="doc", out="ppl", perplexity=True).compute()
    assert list(got["ppl"]) == [model.perplexity(s) for s in lines]
    with pytest.raises(KeyError, match="no column 'body'"):
        fdask.score_frame(dd.from_pandas(frame, npartitions=1), glm_file, column="body")


def test_translate_bag_equals_the_decoder(client):
    if not hasattr(fastsmt, "Decoder"):
        pytest.skip("this build has no decoder (FASTSMT_COMPONENTS)")
    ini = os.path.join(SAMPLE, "moses.ini")
    lines = read_lines(os.path.join(SAMPLE, "sample.es"))
    dec = fastsmt.Decoder(ini)
    want = [dec.translate(s) for s in lines]
    want_nbest = dec.translate_batch(lines, nbest=5, distinct=True)
    dec.close()
    bag = db.from_sequence(lines, npartitions=3)
    assert fdask.translate_bag(bag, ini).compute() == want
    assert fdask.translate_bag(bag, ini, threads=2, nbest=5).compute() == want_nbest


def test_errors_reach_the_caller(client, tmp_path):
    bag = db.from_sequence(["a b"], npartitions=1)
    with pytest.raises(OSError, match="Cannot read model"):
        fdask.score_bag(bag, str(tmp_path / "absent.glm")).compute()
    with pytest.raises(ValueError, match="threads"):
        fdask.score_bag(bag, LM, threads=-1)
    with pytest.raises(ValueError, match="nbest"):
        fdask.translate_bag(bag, "moses.ini", nbest=-2)
