"""fastsmt: Python bindings of the fastsmt C libraries.

fastsmt.kenlm is a drop-in for KenLM's Python module (``import fastsmt.kenlm as kenlm``), with
batch calls (Model.score_batch, Model.perplexity_batch) that score many sentences in C with the
GIL released; fastsmt.PhraseTable and fastsmt.Decoder bind probingpt and the decoder. See
docs/python.md.
"""

from . import _fastsmt

__version__ = "0.1.0"
__all__ = ["kenlm"]

# fastsmt.PhraseTable(path).lookup(phrase) and fastsmt.Decoder(ini, threads=N): built when the
# decoder is among the CMake build's components (the default).
if hasattr(_fastsmt, "Decoder"):
    from ._fastsmt import Decoder, PhraseTable  # noqa: F401
    __all__ += ["Decoder", "PhraseTable"]
if hasattr(_fastsmt, "NMT"):  # fastsmt.NMT(dir).score(sources, targets), .rescore(...)
    from ._fastsmt import NMT  # noqa: F401
    __all__ += ["NMT"]
