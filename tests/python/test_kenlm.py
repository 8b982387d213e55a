"""fastsmt.kenlm against glm query (KenLM query's numbers) and KenLM's module's API."""
import copy
import json
import os
import pickle
import struct
import subprocess
import sys
import threading

import pytest

from conftest import (SOURCE, TESTDATA, glm_query, glm_tool, parse_query, require_module,
                      shared_path)


def f32(x):
    """x as the float32 it holds (the bytes compared, so -0.0 and NaN are checked too)."""
    return struct.pack("<f", float(x))


def lines_of(path):
    with open(path, "rb") as f:
        return [l.rstrip(b"\n").decode("utf-8") for l in f]


def check_against_query(model, model_path, text_path, null_context=False):
    """full_scores and score equal glm query's per-word and total numbers, word by word."""
    want = glm_query(model_path, text_path, null_context)
    sentences = lines_of(text_path)
    assert len(want) == len(sentences)
    bos = eos = not null_context
    nwords = 0
    for sentence, (words, total) in zip(sentences, want):
        got = list(model.full_scores(sentence, bos=bos, eos=eos))
        assert len(got) == len(words), sentence
        for (prob, length, oov), (word, wid, qlen, qprob) in zip(got, words):
            assert f32(prob) == f32(float(qprob)), (sentence, word, prob, qprob)
            assert length == qlen, (sentence, word)
            assert oov == (wid == 0 and word != "</s>"), (sentence, word)
            assert isinstance(prob, float) and isinstance(length, int) and isinstance(oov, bool)
        score = model.score(sentence, bos=bos, eos=eos)
        assert isinstance(score, float)
        assert f32(score) == f32(float(total)), (sentence, score, total)
        nwords += len(got)
    return nwords


def test_sample_equals_glm_query(kenlm, sample_model, sample_arpa, sample_text):
    assert check_against_query(sample_model, sample_arpa, sample_text) > 900


def test_sample_null_context_equals_glm_query(kenlm, sample_model, sample_arpa, sample_text):
    check_against_query(sample_model, sample_arpa, sample_text, null_context=True)


def test_test_a_equals_glm_query(kenlm, tmp_path):
    """test-a.en with the bible lm.5: every word's score, length and OOV flag as glm query."""
    arpa = shared_path("models/bible-es-en/lm.5.arpa.gz")
    text = shared_path("data/bible/test-a.en")
    glm = str(tmp_path / "lm.5.glm")
    subprocess.run([glm_tool(), "build", arpa, glm], check=True, stdout=subprocess.DEVNULL)
    model = kenlm.Model(glm)
    assert model.order == 5
    n = check_against_query(model, glm, text)
    assert n == 28055  # test-a's tokens with </s> (anchors.md)
    # the batch path gives the same sentence totals
    sentences = lines_of(text)
    for threads in (1, 2):
        batch = model.score_batch(sentences, threads=threads)
        for s, b in zip(sentences, batch):
            assert f32(b) == f32(model.score(s)), s


@pytest.mark.parametrize("bits", [("8", "8"), ("4", "3")])
def test_quantized_glm_equals_glm_query(kenlm, sample_arpa, sample_text, tmp_path, bits):
    """A quantized .glm (glm build -q N -b M) opens in the module; every word scores as glm query
    prints for the same file, and the quantized numbers differ from the float model's."""
    glm = str(tmp_path / "q.glm")
    subprocess.run([glm_tool(), "build", sample_arpa, glm, "-q", bits[0], "-b", bits[1]],
                   check=True, stderr=subprocess.DEVNULL)
    model = kenlm.Model(glm)
    assert model.order == 3
    assert check_against_query(model, glm, sample_text) > 900
    check_against_query(model, glm, sample_text, null_context=True)
    floats = kenlm.Model(sample_arpa)
    sentences = lines_of(sample_text)
    assert any(f32(model.score(s)) != f32(floats.score(s)) for s in sentences)


@pytest.mark.parametrize("layout", ["probing", "trie-a22", "trie-q8-b8"])
def test_kenlm_binary_equals_kenlm_query(kenlm, layout):
    """A KenLM binary (build_binary output, tests/data/glm/kenlm) opens as KenLM's module opens it,
    and every word scores as KenLM's own query printed for that file (through glm query's path)."""
    base = os.path.join(SOURCE, "tests", "data", "glm", "kenlm", "tiny.chain." + layout)
    model = kenlm.Model(base + ".bin")
    assert model.order == 3
    assert check_against_query(model, base + ".bin", base + ".txt") > 0
    assert check_against_query(model, base + ".bin", base + ".txt", null_context=True) > 0


@pytest.mark.parametrize("name", sorted(
    f[len("tiny."):-len(".query")] for f in os.listdir(os.path.join(TESTDATA, "glm", "kenlm"))
    if f.endswith(".query")))
def test_full_scores_are_kenlm_query_output(kenlm, name):
    """full_scores on every KenLM binary of tests/data/glm/kenlm (every layout, rest probing and
    models without <unk> included) yields, word by word, what KenLM's own query printed for it
    (the recorded .query file), and score its Total."""
    base = os.path.join(TESTDATA, "glm", "kenlm", "tiny." + name)
    model = kenlm.Model(base + ".bin")
    with open(base + ".query", encoding="utf-8") as f:
        want = parse_query(f.read())
    sentences = lines_of(base + ".txt")
    assert len(want) == len(sentences) > 0
    for sentence, (words, total) in zip(sentences, want):
        got = list(model.full_scores(sentence))
        assert len(got) == len(words), sentence
        for (prob, length, oov), (word, wid, qlen, qprob) in zip(got, words):
            assert f32(prob) == f32(float(qprob)), (name, sentence, word, prob, qprob)
            assert length == qlen and oov == (wid == 0 and word != "</s>"), (name, word)
            assert type(prob) is float and type(length) is int and type(oov) is bool
        assert f32(model.score(sentence)) == f32(float(total)), (name, sentence)


def test_full_scores_long_and_empty_lines(kenlm, sample_model, sample_text):
    """full_scores of lines past its stack buffers (hundreds of words), of an empty line, with
    every bos/eos, equals BaseFullScore word by word from the same state."""
    m = sample_model
    words = " ".join(lines_of(sample_text)[:40]).split()
    for text in ("", "   ", "in", " ".join(words[:255]), " ".join(words[:256]),
                 " ".join(words[:257]), " ".join(words[:900]) + " qqunknown"):
        for bos in (True, False):
            for eos in (True, False):
                it = m.full_scores(text, bos=bos, eos=eos)
                assert iter(it) is it
                got = list(it)
                state, out = kenlm.State(), kenlm.State()
                (m.BeginSentenceWrite if bos else m.NullContextWrite)(state)
                want = []
                for w in text.split() + (["</s>"] if eos else []):
                    r = m.BaseFullScore(state, w, out)
                    want.append((r.log_prob, r.ngram_length, r.oov and w != "</s>"))
                    state, out = out, state
                assert [(f32(p), n, o) for p, n, o in got] == \
                    [(f32(p), n, o) for p, n, o in want], (len(text), bos, eos)


def test_full_scores_tuples_outlive_their_model(kenlm, sample_arpa, sample_text):
    """full_scores' tuples (handed out again for equal values) stay whole and equal after many
    lines, a second pass, the model's close() and its deletion."""
    import gc
    m = kenlm.Model(sample_arpa)
    sentences = lines_of(sample_text)
    first = [list(m.full_scores(s, bos=b, eos=e)) for s in sentences
             for b in (True, False) for e in (True, False)]
    want = [[(f32(p), n, o) for p, n, o in toks] for toks in first]
    second = [list(m.full_scores(s, bos=b, eos=e)) for s in sentences
              for b in (True, False) for e in (True, False)]
    assert second == first
    m.close()
    del m
    gc.collect()
    for toks, w in zip(first + second, want + want):
        assert [(f32(p), n, o) for p, n, o in toks] == w
        for t in toks:
            assert type(t) is tuple and len(t) == 3
            assert type(t[0]) is float and type(t[1]) is int and type(t[2]) is bool


def test_score_and_perplexity_as_kenlm_computes_them(sample_model, sample_text):
    for s in lines_of(sample_text):
        total = 0.0
        for prob, _, _ in sample_model.full_scores(s):
            total = struct.unpack("<f", f32(total + prob))[0]  # KenLM's float sum
        assert f32(sample_model.score(s)) == f32(total)
        words = len(s.encode("utf-8").split()) + 1
        assert sample_model.perplexity(s) == 10.0 ** (-sample_model.score(s) / words)
    # bytes are scored as they are, str as UTF-8
    assert sample_model.score(b"in the beginning") == sample_model.score("in the beginning")
    assert sample_model.score("") == sample_model.score("   \t")


def test_score_batch_equals_score(sample_model, sample_text):
    sentences = lines_of(sample_text) * 130  # more than one chunk of 2048 lines
    for bos in (True, False):
        for eos in (True, False):
            want = [sample_model.score(s, bos=bos, eos=eos) for s in sentences]
            for threads in (1, 2, 0):
                got = sample_model.score_batch(sentences, bos=bos, eos=eos, threads=threads)
                assert isinstance(got, list) and len(got) == len(sentences)
                assert got == want, (bos, eos, threads)
    ppl = sample_model.perplexity_batch(sentences, threads=2)
    assert ppl == [sample_model.perplexity(s) for s in sentences]
    # any iterable of str or bytes; an empty batch
    assert sample_model.score_batch(iter([b"in the", "in the"])) == [sample_model.score("in the")] * 2
    assert sample_model.score_batch([]) == []
    assert sample_model.score_batch(("a",), False, False, 1) == [sample_model.score("a", False, False)]


def test_score_batch_numpy(sample_model, sample_text):
    np = require_module("numpy", "Debian's python3-numpy")
    sentences = lines_of(sample_text)
    arr = sample_model.score_batch(sentences, numpy=True)
    assert isinstance(arr, np.ndarray) and arr.dtype == np.float64 and arr.shape == (len(sentences),)
    assert arr.tolist() == sample_model.score_batch(sentences)
    arr[0] = 1.0  # a writable array of its own
    ppl = sample_model.perplexity_batch(sentences, numpy=True)
    assert ppl.tolist() == [sample_model.perplexity(s) for s in sentences]


def test_state_calls(kenlm, sample_model, sample_text):
    m = sample_model
    for s in lines_of(sample_text)[:20]:
        state, out = kenlm.State(), kenlm.State()
        m.BeginSentenceWrite(state)
        total = 0.0
        full = list(m.full_scores(s))
        for word, (prob, length, oov) in zip(s.split() + ["</s>"], full):
            r = m.BaseFullScore(state, word, out)
            assert f32(r.log_prob) == f32(prob) and r.ngram_length == length
            assert r.oov == (oov if word != "</s>" else False)
            again = kenlm.State()
            assert f32(m.BaseScore(state, word, again)) == f32(prob)
            assert again == out and hash(again) == hash(out)
            total = struct.unpack("<f", f32(total + r.log_prob))[0]
            state, out = out, state
        assert f32(total) == f32(m.score(s))
    # null context
    a, b = kenlm.State(), kenlm.State()
    m.NullContextWrite(a)
    assert a == kenlm.State() and a.length == 0
    m.BeginSentenceWrite(b)
    assert a != b and a < b and b > a and a <= b and b >= a and b.length == 1
    # copies are independent and equal
    c, d = copy.copy(b), copy.deepcopy(b)
    assert c == b == d and c is not b
    m.BaseScore(c, "in", c)  # in_state may be out_state
    assert c != b and d == b
    assert len({a, b, d, copy.copy(a)}) == 2
    sorted([c, b, a])  # ordered
    assert (a == 3) is False
    with pytest.raises(TypeError):
        m.BaseScore(a, "in", None)
    with pytest.raises(TypeError):
        m.BeginSentenceWrite("not a state")
    r = kenlm.FullScoreReturn(-1.5, 2, False)
    assert repr(r) == "FullScoreReturn(-1.5, 2, False)"


def test_model_api(kenlm, sample_model, sample_arpa, tmp_path):
    m = sample_model
    assert m.order == 3
    assert m.path == os.path.abspath(sample_arpa).encode()
    assert repr(m) == "<Model from b'lm.3.arpa.gz'>"  # KenLM formats the bytes basename
    assert "the" in m and b"the" in m and "zzqx" not in m and "<unk>" not in m
    assert "<s>" in m and "</s>" in m
    p = pickle.loads(pickle.dumps(m))
    assert p.path == m.path and p.score("in the") == m.score("in the")
    lm = kenlm.LanguageModel(sample_arpa)
    assert isinstance(lm, kenlm.Model) and lm.score("in the") == m.score("in the")
    # every load method gives the same numbers (from a glm binary too)
    glm = str(tmp_path / "s.glm")
    subprocess.run([glm_tool(), "build", sample_arpa, glm], check=True, stdout=subprocess.DEVNULL)
    for method in (kenlm.LoadMethod.LAZY, kenlm.LoadMethod.POPULATE_OR_LAZY,
                   kenlm.LoadMethod.POPULATE_OR_READ, kenlm.LoadMethod.READ,
                   kenlm.LoadMethod.PARALLEL_READ):
        c = kenlm.Config()
        c.load_method = method
        c.arpa_complain = kenlm.ARPALoadComplain.NONE
        g = kenlm.Model(glm, c)
        assert g.score("in the beginning") == m.score("in the beginning")
        assert kenlm.Model(path=glm, config=c).order == 3
    assert kenlm.Model(tmp_path / "s.glm").order == 3  # os.PathLike too


def test_errors(kenlm, sample_model, sample_arpa, tmp_path):
    missing = str(tmp_path / "missing.arpa")
    with pytest.raises(OSError) as e:  # KenLM's module: OSError (IOError) for a missing file
        kenlm.Model(missing)
    assert "Cannot read model" in str(e.value) and "missing.arpa" in str(e.value)
    bad = tmp_path / "bad.arpa"
    bad.write_bytes(b"\\data\\\nngram 1=3\nngram 2=1\n\n\\1-grams:\n-1.0\t<unk>\n-1\t<s>\n"
                    b"not-a-number\t</s>\n\n\\2-grams:\n-1\t<s> </s>\n\n\\end\\\n")
    with pytest.raises(OSError) as e:  # and for a corrupt one, naming file:line
        kenlm.Model(str(bad))
    assert "bad.arpa:8:" in str(e.value), str(e.value)
    glm = tmp_path / "t.glm"
    subprocess.run([glm_tool(), "build", sample_arpa, str(glm)], check=True, stdout=subprocess.DEVNULL)
    data = glm.read_bytes()
    glm.write_bytes(data[: len(data) // 2])  # truncated
    with pytest.raises(OSError):
        kenlm.Model(str(glm))
    kb = tmp_path / "k.binary"  # a damaged KenLM binary: refused, said so
    kb.write_bytes(b"mmap lm http://kheafield.com/code format version 5\n\0\0\0")
    with pytest.raises(OSError) as e:
        kenlm.Model(str(kb))
    assert "KenLM binary" in str(e.value)
    with pytest.raises(OSError):
        kenlm.Model(str(tmp_path))  # a directory
    with pytest.raises(TypeError):
        kenlm.Model(3)
    with pytest.raises(TypeError) as e:
        sample_model.score(3)
    assert "Cannot convert" in str(e.value)
    with pytest.raises(TypeError):
        sample_model.score("a", bos=True, wrong=1)
    with pytest.raises(TypeError):
        sample_model.score_batch("one string")
    with pytest.raises(TypeError) as e:
        sample_model.score_batch(["a", 3])
    assert "sentence 1" in str(e.value)
    with pytest.raises(ValueError):
        sample_model.score_batch(["a"], threads=-1)


def test_close_and_threads(kenlm, sample_arpa, sample_text):
    m = kenlm.Model(sample_arpa)
    sentences = lines_of(sample_text) * 20000  # ~1M sentences: a batch that takes a while
    want = m.score_batch(sentences[:47])
    result = {}

    def batch():
        try:
            result["scores"] = m.score_batch(sentences, threads=1)
        except Exception as exc:  # noqa: BLE001 (the test inspects it)
            result["error"] = exc

    t = threading.Thread(target=batch)
    t.start()
    refused = closed = False
    while t.is_alive() and not (refused or closed):
        try:
            m.close()
            closed = True
        except RuntimeError as exc:
            assert "batch" in str(exc)
            refused = True
    t.join()
    if refused:  # the usual case: the batch ran to its end on an open model
        assert result["scores"][:47] == want
        m.close()
    elif "scores" not in result:  # closed before the batch began: it found the model closed
        assert isinstance(result["error"], ValueError)
    with pytest.raises(ValueError):
        m.score("in the")
    m.close()  # twice is fine
    # queries from many Python threads at once on one model
    m2 = kenlm.Model(sample_arpa)
    s = lines_of(sample_text)
    want = [m2.score(x) for x in s]
    outs = [None] * 4

    def worker(i):
        outs[i] = [m2.score(x) for x in s] if i % 2 else m2.score_batch(s, threads=2)

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for x in ts:
        x.start()
    for x in ts:
        x.join()
    assert all(o == want for o in outs)
    with kenlm.Model(sample_arpa) as m3:
        assert m3.order == 3
    assert m3.closed


def test_drop_in_script(tmp_path):
    """The issue's line: a script for KenLM's module runs with the import changed."""
    code = ("import fastsmt.kenlm as kenlm; "
            "print(kenlm.Model('examples/sample/lm.3.arpa.gz').score('in the beginning'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=SOURCE, check=True,
                         stdout=subprocess.PIPE).stdout.decode()
    import fastsmt.kenlm as kenlm
    want = kenlm.Model(os.path.join(SOURCE, "examples/sample/lm.3.arpa.gz")).score("in the beginning")
    assert float(out) == want


def test_ppl_filter_example(kenlm, sample_arpa, tmp_path):
    """python/examples/ppl_filter.py (docs/python.md): per-document perplexity over JSONL as the
    sum of its lines' scores, the documents above the threshold dropped."""
    docs = [{"id": 1, "text": "in the beginning\nand the earth"},
            {"id": 2, "text": "zzqx qqqy wwwz\nxxyz"},
            {"id": 3, "text": "and god said"}]
    m = kenlm.Model(sample_arpa)

    def ppl(text):
        lines = text.split("\n")
        return 10.0 ** (-sum(m.score(l) for l in lines) / sum(len(l.split()) + 1 for l in lines))

    threshold = (ppl(docs[0]["text"]) + ppl(docs[1]["text"])) / 2
    assert ppl(docs[0]["text"]) < threshold < ppl(docs[1]["text"])
    src = "\n".join(json.dumps(d) for d in docs) + "\n"
    r = subprocess.run([sys.executable, os.path.join(SOURCE, "python", "examples", "ppl_filter.py"),
                        "--model", sample_arpa, "--max-ppl", repr(threshold), "--chunk", "2",
                        "--threads", "2"], input=src.encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, check=True)
    out = [json.loads(l) for l in r.stdout.decode().splitlines()]
    want = [d for d in docs if ppl(d["text"]) <= threshold]
    assert [d["id"] for d in out] == [d["id"] for d in want]
    assert all(d["perplexity"] == round(ppl(d["text"]), 1) for d in out)
    assert "kept %d of 3" % len(want) in r.stderr.decode()


def test_keywords_and_types_as_kenlms_module(kenlm, sample_model, sample_arpa):
    """What KenLM's module (kpu/kenlm 4cb443e, python/kenlm.pyx built with cython3) accepts and
    refuses, as observed with it: its keyword names, and the exception types code catches."""
    m = sample_model
    s, o = kenlm.State(), kenlm.State()
    m.BeginSentenceWrite(s)
    want = m.BaseScore(s, "in", o)
    assert want == -1.8939048051834106  # KenLM's module: BaseScore(<s> state, "in")
    for call in (m.BaseScore, m.BaseFullScore):
        r = call(in_state=s, word="in", out_state=o)
        assert (r if call == m.BaseScore else r.log_prob) == want
        r = call(s, "in", out_state=o)
        assert (r if call == m.BaseScore else r.log_prob) == want
        with pytest.raises(TypeError):
            call(state=s, word="in", out_state=o)
        with pytest.raises(TypeError):
            call(s, "in")
        with pytest.raises(TypeError):
            call(s, "in", o, word="in")
    assert m.score(sentence="in the beginning", bos=False, eos=False) == -9.512939453125
    assert list(m.full_scores(sentence="in the", bos=False, eos=True)) == [
        (-1.8659290075302124, 1, False), (-0.7303158044815063, 2, False),
        (-5.041356563568115, 1, False)]
    assert kenlm.Model(path=sample_arpa, config=kenlm.Config()).order == 3
    with pytest.raises(TypeError):  # keywords KenLM's module refuses too
        m.BeginSentenceWrite(state=s)
    with pytest.raises(TypeError):
        m.perplexity(sentence="in the")
    # Config: KenLM's defaults, a wrong type refused at the assignment
    c = kenlm.Config()
    assert c.show_progress is True
    assert c.load_method == kenlm.LoadMethod.POPULATE_OR_READ == 2
    assert c.arpa_complain == kenlm.ARPALoadComplain.ALL == 0
    for field in ("load_method", "arpa_complain"):
        for bad in ("x", None, b"1", [1]):
            with pytest.raises(TypeError):
                setattr(c, field, bad)
        setattr(c, field, True)
        assert getattr(c, field) == 1
        setattr(c, field, 1.5)  # Cython's conversion truncates, as KenLM's module
        assert getattr(c, field) == 1
        with pytest.raises(NotImplementedError):
            delattr(c, field)
    for value, truth in (("x", True), (0, False), (None, False), ([], False), (2, True)):
        c.show_progress = value
        assert c.show_progress is truth
    with pytest.raises(AttributeError):
        c.foo = 1
    with pytest.raises(AttributeError):
        c.foo
    with pytest.raises(TypeError):
        kenlm.Config(1)
    with pytest.raises(TypeError) as e:
        kenlm.Model(sample_arpa, 1)
    assert "config" in str(e.value)
    with pytest.raises(TypeError):
        kenlm.Model(sample_arpa, object())
    # safer than KenLM's module, which reads garbage or crashes on these
    c = kenlm.Config()
    c.load_method = 99
    with pytest.raises(ValueError):
        kenlm.Model(sample_arpa, c)
    c.load_method = -1
    with pytest.raises(ValueError):
        kenlm.Model(sample_arpa, c)
    assert kenlm.Model(sample_arpa, None).order == 3
    with pytest.raises(TypeError):
        m.BeginSentenceWrite(None)
    with pytest.raises(TypeError):
        m.BaseScore(None, "in", o)
    # path: writable bytes or None, as KenLM's `cdef public bytes path`
    g = kenlm.Model(sample_arpa)
    with pytest.raises(TypeError) as e:
        g.path = "/x"
    assert str(e.value) == "Expected bytes, got str"
    g.path = b"/elsewhere/x.arpa"
    assert g.path == b"/elsewhere/x.arpa" and repr(g) == "<Model from b'x.arpa'>"
    assert g.__reduce__()[1] == (b"/elsewhere/x.arpa",)
    g.path = None
    assert g.path is None and g.score("in") == m.score("in")
    with pytest.raises(AttributeError):
        g.order = 2
    with pytest.raises(AttributeError):
        g.foo = 1
    # State.__deepcopy__ with or without a memo (KenLM's takes none, so copy.deepcopy fails there)
    assert s.__deepcopy__() == s and s.__deepcopy__({}) == s and copy.deepcopy(s) == s


def test_nul_as_kenlms_module(kenlm, sample_model):
    """A NUL byte ends what KenLM's module reads: the whole sentence in score and perplexity (its
    ScoreSentence takes a C string; perplexity still counts the words of the whole text), each
    word elsewhere (bytes.split(), then a C string per word). Fixture: KenLM's module's own
    results (tests/data/python/kenlm_nul.json, made_by says how)."""
    with open(os.path.join(TESTDATA, "python", "kenlm_nul.json")) as f:
        want = json.load(f)
    m = sample_model
    for case in want["sentences"]:
        s = case["sentence"]
        for text in (s, s.encode()):
            for key, score in case["score"].items():
                bos, eos = key[0] == "1", key[1] == "1"
                assert m.score(text, bos=bos, eos=eos) == score, (s, key)
                assert m.score_batch([text, "in the"], bos=bos, eos=eos)[0] == score, (s, key)
            assert m.perplexity(text) == case["perplexity"], s
            assert m.perplexity_batch([text], threads=2) == [case["perplexity"]], s
            assert [list(t) for t in m.full_scores(text)] == case["full_scores"], s
            assert [list(t) for t in m.full_scores(text, bos=False, eos=False)] == \
                case["full_scores_null_context"], s
    assert m.score("in\0the beginning") == m.score("in")  # the example
    for case in want["words"]:
        w = case["word"]
        assert (w in m) == case["in_model"], w
        s, o = kenlm.State(), kenlm.State()
        m.BeginSentenceWrite(s)
        assert m.BaseScore(s, w, o) == case["BaseScore"], w
        r = m.BaseFullScore(s, w, o)
        assert [r.log_prob, r.ngram_length, r.oov] == case["BaseFullScore"], w
    assert "the\0" in m


def test_arpa_load_without_a_usable_tmpdir(kenlm, sample_model, sample_arpa, tmp_path, monkeypatch):
    """KenLM loads an ARPA file whatever $TMPDIR is: so does fastsmt.kenlm, binarizing it in the
    next temporary folder that takes a file when $TMPDIR is missing or read-only (/proc/self
    refuses root too, where a 0555 folder does not)."""
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    want = sample_model.score("in the beginning")
    for bad in (str(tmp_path / "missing"), "/proc/self", str(ro)):
        monkeypatch.setenv("TMPDIR", bad)
        assert kenlm.Model(sample_arpa).score("in the beginning") == want, bad
