"""fastsmt.kenlm on a model without <unk> (tests/data/glm/chain_nounk.arpa and KenLM's binaries of
it in tests/data/glm/kenlm): the scores KenLM's query printed, and the State after an unknown word
as KenLM's module has it (kept in the state: unequal to State(), ordered after it, KenLM's hash).
The .state fixtures are `state_facts` run with KenLM's own module:
    PYTHONPATH=<KenLM's module>:tests/python python3 -c \
        'import sys, kenlm, test_kenlm_nounk as t; t.print_state_facts(kenlm, sys.argv[1])' MODEL
"""
import ast
import os
import struct

import pytest

from conftest import TESTDATA, parse_query

LAYOUTS = ["probing", "rest", "trie", "trie-q8-b8", "trie-a22"]
KENLM = os.path.join(TESTDATA, "glm", "kenlm")


def model_path(layout):
    if layout == "arpa":
        return os.path.join(TESTDATA, "glm", "chain_nounk.arpa")
    return os.path.join(KENLM, "tiny.chain_nounk.%s.bin" % layout)


def state_facts(kenlm, m):
    """(name, value) of KenLM's State semantics around an unknown word on model m."""
    S = kenlm.State

    def after(state, *words):
        total = 0.0
        for w in words:
            out = S()
            total += m.BaseScore(state, w, out)
            state = out
        return state, total

    null, begin = S(), S()
    m.BeginSentenceWrite(begin)
    unk, p_unk = after(null, "zzz")
    unk2, _ = after(null, "qqq")
    bunk, p_bunk = after(begin, "zzz")
    a, _ = after(null, "a")
    unk_a, p_unk_a = after(null, "zzz", "a")
    c, _ = after(null, "c")
    named_unk, _ = after(null, "<unk>")
    return [
        ("score(zzz | null)", p_unk), ("score(zzz | <s>)", p_bunk),
        ("score(zzz a | null)", p_unk_a),
        ("unk == null", unk == null), ("unk != null", unk != null), ("unk < null", unk < null),
        ("unk > null", unk > null), ("unk <= null", unk <= null), ("unk >= null", unk >= null),
        ("unk == unk2", unk == unk2), ("unk == bunk", unk == bunk),
        ("unk == named_unk", unk == named_unk),
        ("hash(unk) == hash(null)", hash(unk) == hash(null)),
        ("hash(unk) == hash(bunk)", hash(unk) == hash(bunk)),
        ("hash(null)", hash(null)), ("hash(unk)", hash(unk)), ("hash(a)", hash(a)),
        ("unk < a", unk < a), ("a < unk", a < unk), ("unk_a == a", unk_a == a),
        ("c == null", c == null), ("unk > c", unk > c),
        ("len({null, unk, unk2, bunk, c})", len({null, unk, unk2, bunk, c})),
        ("sorted index of unk in [a, unk, null]", sorted([a, unk, null]).index(unk)),
    ]


def print_state_facts(kenlm, path):
    for name, value in state_facts(kenlm, kenlm.Model(path)):
        print("%s\t%r" % (name, value))


def read_facts(path):
    with open(path, encoding="utf-8") as f:
        return [(name, ast.literal_eval(value))
                for name, value in (line.rstrip("\n").split("\t") for line in f if line.strip())]


@pytest.mark.parametrize("layout", LAYOUTS + ["arpa"])
def test_state_after_unknown_is_kenlms(kenlm, layout):
    want = read_facts(os.path.join(KENLM, "tiny.chain_nounk.%s.state" % layout))
    got = state_facts(kenlm, kenlm.Model(model_path(layout)))
    assert [n for n, _ in got] == [n for n, _ in want]
    for (name, g), (_, w) in zip(got, want):
        assert type(g) is type(w) and g == w, (layout, name, g, w)


def f32(x):
    return struct.pack("<f", float(x))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_scores_are_kenlm_querys(kenlm, layout):
    """Each word of each line scores as KenLM's query printed for that file."""
    base = os.path.join(KENLM, "tiny.chain_nounk." + layout)
    with open(base + ".query", encoding="utf-8") as f:
        want = parse_query(f.read())
    with open(base + ".txt", encoding="utf-8") as f:
        sentences = [l.rstrip("\n") for l in f]
    assert len(want) == len(sentences) == 8
    for m in (kenlm.Model(base + ".bin"), kenlm.Model(model_path("arpa"))):
        assert m.order == 3 and "zzz" not in m and "a" in m
        for sentence, (words, total) in zip(sentences, want):
            got = list(m.full_scores(sentence))
            assert [(f32(p), n, oov) for p, n, oov in got] == \
                [(f32(float(p)), n, wid == 0 and w != "</s>") for w, wid, n, p in words], sentence
            assert f32(m.score(sentence)) == f32(float(total)), sentence
