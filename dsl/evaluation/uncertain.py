"""Uncertain values: distributions, their samples, and the statistics of them.

An uncertain cell holds a numpy array of samples (one per Monte Carlo draw);
every cell computed from one is an array of the same length, so the compiled
closures tables already use evaluate a whole Monte Carlo in one vectorised
pass.  A statistic (`mean`, `median`, `sd`, `percentile`, `prob`) reduces the
samples to one number, which is certain again.

Draws are reproducible: each distribution has its own stream, seeded by the
run's seed and the stream's name (the cell it is written in, and its place
in that cell), so adding an input does not reshuffle the others.  The draws
are standard normal or uniform numbers; a distribution's parameters shape
them, so parameters that are themselves formulas stay exact.

    ssd_bw = 4 GB/s to 6.5 GB/s      a lognormal with 5th/95th percentiles 4 and 6.5
    uniform(lo, hi)   normal(mean, sd)   lognormal(p5, p95)   triangular(lo, mode, hi)
"""
from __future__ import annotations

import functools
import hashlib
from contextvars import ContextVar

from ifr.errors import IfrError
from ifr.records import dataclass, field
from ifr.semantics import ir
from ifr.semantics.graph import expressions

DEFAULT_SAMPLES = 10_000
MAX_SAMPLES = 10_000_000
# The standard normal's 95th percentile: `a to b` puts a and b at mu -/+ Z95 sigma.
Z95 = 1.6448536269514722


@dataclass
class Sampling:
    """How many samples a Monte Carlo draws, from which seed; the draws made so far."""

    samples: int = DEFAULT_SAMPLES
    seed: int = 0
    _draws: dict = field(default_factory=dict, repr=False)

    def standard(self, stream: str, kind: str):
        """The stream's standard draws: normal (``kind == "normal"``) or uniform on [0, 1)."""
        key = (stream, kind)
        found = self._draws.get(key)
        if found is None:
            import numpy as np
            digest = int.from_bytes(hashlib.sha256(stream.encode()).digest()[:8], "little")
            rng = np.random.Generator(np.random.PCG64([self.seed, digest]))
            found = rng.standard_normal(self.samples) if kind == "normal" else rng.random(self.samples)
            found.flags.writeable = False
            self._draws[key] = found
        return found


# A Sampling is only ever replaced (`sampling()`), never changed in place, so one default is safe.
SAMPLING: ContextVar[Sampling] = ContextVar("sampling", default=Sampling())  # noqa: B039


def check_settings(samples: int, seed: int) -> None:
    if not 2 <= samples <= MAX_SAMPLES:
        raise IfrError("usage", f"--samples must be between 2 and {MAX_SAMPLES:,}, got {samples:,}", None)
    if seed < 0:
        raise IfrError("usage", f"--seed must be a whole number >= 0, got {seed}", None)


# --- analysis ----------------------------------------------------------------------

def contains_uncertainty(node: ir.Node, uncertain: set[str]) -> bool:
    """Whether an expression's value is a set of samples: it draws from a
    distribution or reads an uncertain cell, other than through a statistic."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ir.Dist):
            return True
        if isinstance(n, (ir.Ref, ir.ScenarioValue)) and n.cell in uncertain:
            return True
        if isinstance(n, ir.TableRow) and n.column in uncertain:
            return True
        if isinstance(n, ir.Stat):
            continue
        stack.extend(ir.children(n))
    return False


@dataclass
class Uncertainty:
    """What the uncertainty analysis found: the cells that hold samples, the
    stream each distribution draws from, whether each statistic's argument is
    a set of samples (it is not in a certain model's table sweep, where
    arrays are rows)."""
    cells: set[str] = field(default_factory=set)
    streams: dict[int, tuple[ir.Dist, str]] = field(default_factory=dict)          # by id(node)
    over_samples: dict[int, tuple[ir.Stat, bool]] = field(default_factory=dict)    # by id(node)

    def record(self, graph) -> None:
        """Mark the graph and its nodes, which the evaluator reads, with what was found."""
        graph.uncertain = self.cells
        for node, stream in self.streams.values():
            node.stream = stream
        for node, over in self.over_samples.values():
            node.over_samples = over


def annotate(graph) -> Uncertainty:
    """The uncertain cells of a graph, each distribution's stream and how each
    statistic reads its argument; the graph and its nodes are only read."""
    found = Uncertainty()
    if not getattr(graph, "distributions", 1):
        return found                      # nothing draws: every statistic is of a number
    # a cell a scenario sets to a distribution holds samples under that scenario
    uncertain = found.cells
    uncertain.update(cid for scenario in graph.scenarios.values() for cid, node, _span in scenario.overrides
                     if any(isinstance(n, ir.Dist) for n in ir.walk(node)))
    for cid in graph.order:
        cell = graph.cells[cid]
        nodes = [cell.expr] if cell.kind != "solve" else [cell.lhs, cell.rhs]   # a bracket is not drawn from
        nodes = [n for n in nodes if n is not None]
        _name_streams(cell.name, nodes, found)
        _mark_statistics(nodes, found)
        if any(contains_uncertainty(n, uncertain) for n in nodes):
            uncertain.add(cid)
    for check in graph.checks:
        nodes = list(expressions(check))
        _name_streams(f"check:{check.span.line}", nodes, found)
        _mark_statistics(nodes, found)
    for scenario in graph.scenarios.values():
        for cid, node, _span in scenario.overrides:
            _name_streams(f"{scenario.name}.{graph.cells[cid].name}", [node], found)
            _mark_statistics([node], found)
    return found


def _name_streams(owner: str, nodes, found: Uncertainty) -> None:
    count = 0
    for root in nodes:
        for n in ir.walk(root):
            if isinstance(n, ir.Dist) and not n.stream and id(n) not in found.streams:
                found.streams[id(n)] = (n, owner if count == 0 else f"{owner}#{count}")
                count += 1


def _mark_statistics(nodes, found: Uncertainty) -> None:
    for root in nodes:
        for n in ir.walk(root):
            if isinstance(n, ir.Stat):
                found.over_samples[id(n)] = (n, contains_uncertainty(n.arg, found.cells))


# --- evaluation --------------------------------------------------------------------

def draw(node: ir.Dist, args: list):
    """Samples of a distribution whose parameters are ``args`` (base SI; floats or sample arrays)."""
    import numpy as np
    sampling = SAMPLING.get()
    stream = node.stream or node.text
    kind = node.kind
    arrays = [np.asarray(a, dtype=float) for a in args]
    if any(a.ndim and a.shape != (sampling.samples,) for a in arrays):
        raise IfrError("vector-bound", f"`{node.text}` cannot be swept in a table", node.span,
                       hint="vary a certain input instead, or give the distribution fixed parameters")
    if not all(np.isfinite(a).all() for a in arrays):
        raise IfrError("bad-argument", f"`{node.text}`: its parameters must be finite numbers", node.span)
    return SAMPLERS[kind](node, arrays, functools.partial(sampling.standard, stream), np)


def _lognormal(node, arrays, standard, np):
    """A lognormal by its 5th and 95th percentiles (also `lo to hi`)."""
    lo, hi = arrays
    if (lo <= 0).any() or (hi <= 0).any():
        raise IfrError("bad-argument", f"`{node.text}`: both ends of a range must be above zero "
                       f"(it is a lognormal)", node.span,
                       hint="for a range that includes 0 or negative values use uniform(lo, hi) or normal(mean, sd)")
    if (hi < lo).any():
        raise IfrError("bad-argument", f"`{node.text}`: the range ends below its start", node.span,
                       hint="write the smaller end first")
    mu, sigma = (np.log(lo) + np.log(hi)) / 2, (np.log(hi) - np.log(lo)) / (2 * Z95)
    return np.exp(mu + sigma * standard("normal"))


def _normal(node, arrays, standard, np):
    mean, sd = arrays
    if (sd < 0).any():
        raise IfrError("bad-argument", f"`{node.text}`: a standard deviation cannot be negative", node.span)
    return mean + sd * standard("normal")


def _uniform(node, arrays, standard, np):
    u = standard("uniform")
    lo, hi = arrays
    if (hi < lo).any():
        raise IfrError("bad-argument", f"`{node.text}`: the upper end is below the lower", node.span,
                       hint="write the smaller end first")
    return lo + (hi - lo) * u


def _triangular(node, arrays, standard, np):
    """By its inverse distribution function."""
    u = standard("uniform")
    lo, mode, hi = arrays
    if (mode < lo).any() or (hi < mode).any():
        raise IfrError("bad-argument", f"`{node.text}`: needs lo <= mode <= hi", node.span)
    width = hi - lo
    with np.errstate(invalid="ignore", divide="ignore"):
        cut = np.where(width > 0, (mode - lo) / np.where(width > 0, width, 1), 0.5)
        left = lo + np.sqrt(u * width * (mode - lo))
        right = hi - np.sqrt((1 - u) * width * (hi - mode))
    return np.where(u < cut, left, right)


# The sampler of each distribution of the registry (ifr.semantics.builtins):
# (the node, its parameters as arrays, standard(kind) -> its stream's standard
# "normal" or "uniform" numbers, numpy) -> the samples.
SAMPLERS = {"to": _lognormal, "lognormal": _lognormal, "normal": _normal, "uniform": _uniform,
            "triangular": _triangular}


def statistic(node: ir.Stat, x, q=None):
    """A statistic of ``x``: over its samples when the argument is uncertain;
    of a certain value (a number, or a table's rows) it is the value itself."""
    import numpy as np
    samples = node.over_samples and np.ndim(x) > 0
    if node.func == "prob":
        if samples:
            if np.asarray(x).dtype != bool:
                raise _not_condition(node)
            return float(np.mean(x))
        if isinstance(x, (bool, np.bool_)) or (np.ndim(x) and np.asarray(x).dtype == bool):
            return np.where(x, 1.0, 0.0) if np.ndim(x) else float(bool(x))
        raise _not_condition(node)
    if node.func == "percentile":
        q = percentile_level(node, q, samples)
    if not samples:
        if node.func == "sd":
            return x * 0.0
        return x
    x = np.asarray(x, dtype=float)
    if node.func == "mean":
        return float(np.mean(x))
    if node.func == "median":
        return float(np.median(x))
    if node.func == "sd":
        return float(np.std(x, ddof=1))
    return float(np.quantile(x, q))


def percentile_level(node: ir.Stat, q, samples: bool):
    """A percentile's level as a fraction from 0 to 1, whichever way it is
    written: a level from 0 to 1 is that fraction (`95%`, a cell of `95%`,
    `0.95`; 1 is the largest sample), one above 1 and up to 100 is in percent
    (`95`).  A table's rows may give an array of levels, a certain value's."""
    import numpy as np
    level = np.asarray(q, dtype=float)
    if level.ndim and samples:
        raise IfrError("uncertain-value", f"`{node.q.text}` is uncertain; a percentile's level is one number",
                       node.q.span, hint="write the level as a number, e.g. percentile(x, 95%)")
    if not (np.isfinite(level) & (level >= 0) & (level <= 100)).all():
        bad = float(level.flat[np.argmax(~(np.isfinite(level) & (level >= 0) & (level <= 100)))])
        raise IfrError("bad-argument", f"`{node.q.text}` is {bad:g}; a percentile's level is from 0 to 1 "
                       "(a fraction) or above 1 up to 100 (in percent)", node.q.span,
                       hint="percentile(x, 95%), percentile(x, 0.95) and percentile(x, 95) are the 95th percentile")
    fraction = np.where(level > 1, level / 100, level)
    return float(fraction) if not fraction.ndim else fraction


def _not_condition(node: ir.Stat) -> IfrError:
    return IfrError("not-a-condition", f"prob() takes a condition, `{node.arg.text}` is a value", node.arg.span,
                    hint="e.g. prob(t_load < t_recompute)")


@dataclass
class Summary:
    """What a person is shown of an uncertain value (base SI)."""

    mean: float
    median: float
    sd: float
    p5: float
    p95: float

    def scaled(self, f: float) -> Summary:
        return Summary(self.mean / f, self.median / f, self.sd / f, self.p5 / f, self.p95 / f)


def summary(samples) -> Summary:
    import numpy as np
    x = np.asarray(samples, dtype=float)
    p5, median, p95 = np.percentile(x, [5, 50, 95])
    return Summary(float(np.mean(x)), float(median), float(np.std(x, ddof=1)), float(p5), float(p95))


def is_samples(value) -> bool:
    """Whether a cell's value is a set of samples (an array) rather than one number."""
    return hasattr(value, "ndim") and value.ndim > 0


def histogram(samples, bins: int):
    """Counts and edges of the finite samples in ``bins`` bins of one width.

    Samples spread over fewer floats than there are bins (1e20 give or take a
    few units) have no such bins in numpy, which refuses them ("Too many bins
    for data range"): their range is widened, evenly, until the bins exist."""
    import numpy as np
    finite = np.asarray(samples, dtype=float)
    finite = finite[np.isfinite(finite)]
    if not finite.size:
        return np.zeros(bins, dtype=np.int64), np.linspace(0.0, 1.0, bins + 1)
    lo, hi = float(finite.min()), float(finite.max())
    pad = 0.0
    while True:
        try:
            return np.histogram(finite, bins=bins, range=(lo - pad, hi + pad))
        except ValueError:
            pad = max(pad * 16, abs(lo), abs(hi), 1e-300) * 1e-12 if pad == 0.0 else pad * 16
