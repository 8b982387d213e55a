"""Scoring and translating Dask collections partition by partition: ``import fastsmt.dask``.

Each helper maps a function over the partitions of a Dask bag (or dataframe) that opens the model
once per worker process (a model or decoder is cached in the worker, keyed by its path and
settings) and runs one batch call per partition with the GIL released:

- ``score_bag(bag, model_path)``: a bag of sentences (str or bytes) -> a bag of floats, each equal to
  ``fastsmt.kenlm.Model(model_path).score(sentence, bos, eos)`` (``perplexity=True``: the
  perplexity), computed by ``Model.score_batch`` (``perplexity_batch``).
- ``score_frame(frame, model_path, column="text", out="score")``: a Dask dataframe -> the same
  dataframe with a float64 column ``out`` holding the score (or perplexity) of ``column``.
- ``translate_bag(bag, ini)``: a bag of source lines -> a bag of the decoder's 1-best lines (the
  ``fastsmt`` tool's, as ``Decoder.translate`` gives them); with ``nbest=N`` a bag of the result
  dicts of ``Decoder.translate_batch`` (``translation``, ``score``, ``nbest``).

Results do not depend on how the collection is partitioned or on how many workers run it: every
call is the same C code as the single-process one. Dask itself (Debian's python3-dask and, for a
cluster, python3-distributed; python3-pandas for dataframes) is imported only by the caller: this
module needs nothing but the collections it is given. See docs/python.md.
"""

import threading

__all__ = ["score_bag", "score_frame", "translate_bag"]

_lock = threading.Lock()
_cache = {}   # (kind, path, settings) -> the open Model or Decoder of this worker process
_opened = {}  # the same keys -> how many times this process opened it (for tests: once)


def _cached(key, opener):
    with _lock:
        obj = _cache.get(key)
        if obj is None:
            obj = opener()
            _cache[key] = obj
            _opened[key] = _opened.get(key, 0) + 1
        return obj


def _model(path, load_method):
    def opener():
        from . import kenlm
        config = kenlm.Config()
        if load_method is not None:
            config.load_method = load_method
        return kenlm.Model(path, config)
    return _cached(("model", path, load_method), opener)


def _decoder(ini, threads):
    def opener():
        from . import _fastsmt
        if not hasattr(_fastsmt, "Decoder"):
            raise RuntimeError("fastsmt was built without the decoder (FASTSMT_COMPONENTS)")
        return _fastsmt.Decoder(ini, threads=threads)
    return _cached(("decoder", ini, threads), opener)


def opened_here():
    """{(kind, path, settings): times opened} in this process (``client.run(opened_here)`` asks
    every worker): each model or decoder is opened once per worker process."""
    with _lock:
        return dict(_opened)


def _check_threads(threads):
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 0:
        raise ValueError("threads must be an int >= 0 (0: every CPU), got %r" % (threads,))


def _score_list(lines, path, bos, eos, threads, perplexity, load_method):
    model = _model(path, load_method)
    if perplexity:
        return model.perplexity_batch(lines, threads=threads)
    return model.score_batch(lines, bos=bos, eos=eos, threads=threads)


def _score_partition(part, path, bos, eos, threads, perplexity, load_method):
    return _score_list(list(part), path, bos, eos, threads, perplexity, load_method)


def score_bag(bag, model_path, *, bos=True, eos=True, threads=1, perplexity=False,
              load_method=None):
    """A bag of sentences -> a bag of their log10 scores (or perplexities), partition by partition.

    model_path: an ARPA file, a ``.glm`` or a KenLM binary, readable by every worker (a path, not an
    open Model: each worker process opens it once). threads: threads per partition's batch (0:
    every CPU of the worker). load_method: a ``fastsmt.kenlm.LoadMethod`` (default: the Config's).
    """
    _check_threads(threads)
    return bag.map_partitions(_score_partition, str(model_path), bool(bos), bool(eos), threads,
                              bool(perplexity), load_method)


def _score_frame_partition(frame, path, column, out, bos, eos, threads, perplexity, load_method):
    lines = frame[column].tolist()
    scores = _score_list(lines, path, bos, eos, threads, perplexity, load_method)
    return frame.assign(**{out: frame[column].__class__(scores, index=frame.index,
                                                         dtype="float64")})


def score_frame(frame, model_path, *, column="text", out="score", bos=True, eos=True, threads=1,
                perplexity=False, load_method=None):
    """A Dask dataframe -> the same dataframe with a float64 column ``out``: the score (or
    perplexity) of each row's ``column`` (str or bytes). Arguments as in score_bag."""
    _check_threads(threads)
    if column not in frame.columns:
        raise KeyError("score_frame: the dataframe has no column %r (columns: %s)"
                       % (column, ", ".join(map(str, frame.columns))))
    import pandas
    meta = frame._meta.assign(**{out: pandas.Series([], dtype="float64")})
    return frame.map_partitions(_score_frame_partition, str(model_path), column, out, bool(bos),
                                bool(eos), threads, bool(perplexity), load_method, meta=meta)


def _translate_partition(part, ini, threads, nbest, distinct):
    decoder = _decoder(ini, threads)
    lines = list(part)
    if nbest == 0:
        return [r["translation"] for r in decoder.translate_batch(lines)]
    return decoder.translate_batch(lines, nbest=nbest, distinct=distinct)


def translate_bag(bag, ini, *, threads=1, nbest=0, distinct=True):
    """A bag of source lines -> a bag of 1-best lines (nbest=0), or of ``translate_batch``'s result
    dicts with the n-best lists (nbest=N). ini: a moses.ini every worker can read; each worker
    process loads the model once. threads: decoder workers per partition."""
    _check_threads(threads)
    if threads == 0:
        raise ValueError("translate_bag: threads must be >= 1")
    if not isinstance(nbest, int) or isinstance(nbest, bool) or nbest < 0:
        raise ValueError("nbest must be an int >= 0, got %r" % (nbest,))
    return bag.map_partitions(_translate_partition, str(ini), threads, nbest, bool(distinct))
