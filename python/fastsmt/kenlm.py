"""A drop-in for KenLM's Python module: ``import fastsmt.kenlm as kenlm``.

Model(path, config=Config()) opens an ARPA file (plain, gzip, xz, bzip2 or zstd; binarized into a
temporary glm file on load) or a glm binary (``glm build``) and answers with KenLM's numbers:
score, perplexity, full_scores, BeginSentenceWrite, NullContextWrite, BaseScore, BaseFullScore,
``word in model``, order, path. Added: score_batch and perplexity_batch (many sentences scored in
C with the GIL released, optionally over threads), close() and the with statement.

A model that cannot be read raises OSError("Cannot read model '<path>' (<file:line: what>)"), the
kind KenLM's module raises; MemoryError when memory runs out.
"""

from ._fastsmt import FullScoreReturn, Model, State

__all__ = ["ARPALoadComplain", "Config", "FullScoreReturn", "LanguageModel", "LoadMethod",
           "Model", "State"]


class LanguageModel(Model):
    """Backwards compatibility name, as in KenLM's module. Use Model."""


class LoadMethod:
    """KenLM's util::LoadMethod. glm maps them as ``glm query -l`` does: LAZY maps the file,
    POPULATE_OR_LAZY maps it and reads it in at once, the others (the default POPULATE_OR_READ
    included) copy the model into memory in 2 MB pages (fastest queries)."""
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


class Config:
    """KenLM's Config: load_method (LoadMethod), arpa_complain (ARPALoadComplain) and
    show_progress (a progress meter on a terminal while an ARPA file is binarized; off by
    default). Other attributes are accepted and ignored."""

    def __init__(self):
        self.load_method = LoadMethod.POPULATE_OR_READ
        self.arpa_complain = ARPALoadComplain.ALL
        self.show_progress = False
