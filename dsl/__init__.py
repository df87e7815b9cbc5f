"""ifr: capacity-planning models for LLM inference, as checked spreadsheets in text.

    >>> import ifr
    >>> m = ifr.load("models/pd_handoff.ifr")
    >>> m["t_handoff"]                     # a pint Quantity
    >>> m.with_inputs(link="50 GB/s")["t_handoff"]
"""
from __future__ import annotations

from ifr.version import VERSION as __version__

__all__ = ["load", "analyse", "IfrError", "__version__"]


def load(path, text: str | None = None, options=None):
    """Parse, check and evaluate an .ifr file; returns a :class:`ifr.model.Model`.
    ``options`` (an :class:`ifr.model.Options`) says where files are read from."""
    from ifr.model import load as load_model
    return load_model(path, text, options)


def analyse(path, text: str | None = None, options=None):
    """Parse and check an .ifr file past every mistake; returns an :class:`ifr.model.Analysis`
    (its ``errors``, and ``evaluate(samples=, seed=)`` for the values).  The command line and
    the language server run this same pipeline, with their :class:`ifr.model.Options`."""
    from ifr.model import analyse as analyse_file
    return analyse_file(path, text, options=options)


def __getattr__(name):
    if name in ("IfrError", "IfrErrors"):
        from ifr import errors
        return getattr(errors, name)
    raise AttributeError(name)
