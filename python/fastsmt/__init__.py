"""fastsmt: Python bindings of the fastsmt C libraries.

fastsmt.kenlm is a drop-in for KenLM's Python module (``import fastsmt.kenlm as kenlm``), with
batch calls (Model.score_batch, Model.perplexity_batch) that score many sentences in C with the
GIL released. See docs/python.md.
"""

__version__ = "0.1.0"
__all__ = ["kenlm"]
