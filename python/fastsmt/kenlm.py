"""A drop-in for KenLM's Python module: ``import fastsmt.kenlm as kenlm``.

Model(path, config=Config()) opens an ARPA file (plain, gzip, xz, bzip2 or zstd; binarized into a
temporary glm file on load) or a glm binary (``glm build``) and answers with KenLM's numbers:
score, perplexity, full_scores, BeginSentenceWrite, NullContextWrite, BaseScore, BaseFullScore,
``word in model``, order, path. Added: score_batch and perplexity_batch (many sentences scored in
C with the GIL released, optionally over threads), close() and the with statement.

A model that cannot be read raises OSError("Cannot read model '<path>' (<file:line: what>)"), the
kind KenLM's module raises; MemoryError when memory runs out.
"""

import operator

from ._fastsmt import FullScoreReturn, Model, State

__all__ = ["ARPALoadComplain", "Config", "FullScoreReturn", "LanguageModel", "LoadMethod",
           "Model", "State"]


class LanguageModel(Model):
    """Backwards compatibility name, as in KenLM's module. Use Model."""


class LoadMethod:
    """KenLM's util::LoadMethod. glm maps them as ``glm query -l`` does: LAZY maps the file,
    POPULATE_OR_LAZY and the default POPULATE_OR_READ map it and read it in at once (glm's one
    default load), READ and PARALLEL_READ copy the model into memory in 2 MB pages (for a page
    cache mapped with 4 KB pages)."""
    LAZY = 0
    POPULATE_OR_LAZY = 1
    POPULATE_OR_READ = 2
    READ = 3
    PARALLEL_READ = 4


class ARPALoadComplain:
    """KenLM's Config.arpa_complain: NONE silences the warning for an ARPA file without <unk>."""
    ALL = 0
    EXPENSIVE = 1
    NONE = 2


def _enum_value(value):
    """An enum field's value as KenLM's module (Cython) converts it: an int (a bool or float
    truncated to one); anything else is a TypeError at the assignment."""
    if isinstance(value, (int, float)):
        return int(value)
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError("an integer is required") from None


def _field(name, convert, doc):
    def get(self):
        return getattr(self, name)

    def set_(self, value):
        setattr(self, name, convert(value))

    def delete(self):
        raise NotImplementedError("__del__")

    return property(get, set_, delete, doc)


class Config:
    """KenLM's Config: load_method (LoadMethod), arpa_complain (ARPALoadComplain) and
    show_progress (glm's meter on stderr, when it is a terminal, while an ARPA file is binarized;
    True by default, as in KenLM). A wrong type is refused at the assignment (TypeError), an
    unknown attribute too (AttributeError), as KenLM's Config does; a value out of range is refused
    by Model() (ValueError)."""

    __slots__ = ("_load_method", "_show_progress", "_arpa_complain")

    def __init__(self):
        self._load_method = LoadMethod.POPULATE_OR_READ
        self._show_progress = True
        self._arpa_complain = ARPALoadComplain.ALL

    load_method = _field("_load_method", _enum_value, "a LoadMethod value")
    show_progress = _field("_show_progress", bool, "a truth value")
    arpa_complain = _field("_arpa_complain", _enum_value, "an ARPALoadComplain value")
