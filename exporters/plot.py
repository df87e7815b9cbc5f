"""The charts ifr draws: a table's shown columns against the varied one, a
distribution's histogram, a sensitivity's tornado.  `--plot out.png` writes
them as PNG, the HTML report inlines them as SVG; the same figure either way.

Drawn to be read: columns of one unit share a panel (a roofline's `t_mem`
and `t_comp` cross on it), a panel whose values span more than two decades
has a log axis, an integer cell's histogram has one bar per integer (or per
run of integers), and a tornado's two ends have two colours, a legend and
the input's value written at each bar end.  matplotlib is imported only when
a chart is drawn.
"""
from __future__ import annotations

import io
import math
from pathlib import Path

from ifr.errors import IfrError

LOW_COLOUR = "#4C72B0"    # a tornado bar's end with the input at its low end
HIGH_COLOUR = "#DD8452"   # ... at its high end
DECADES_FOR_LOG = 2       # a panel spanning more than this many decades gets a log axis
HISTOGRAM_BINS = 60


def load_pyplot():
    """matplotlib's pyplot, drawing off screen (matplotlib is a dependency of ifr;
    a broken installation is still said as one)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise IfrError("missing-dependency", "plotting needs matplotlib", None,
                       hint="reinstall ifr (`pip install .`), which installs matplotlib") from None
    return plt


def save_png(fig, path: Path, plt) -> None:
    """Write the figure as a PNG, as every file ifr writes (`ifr.storage.safe_write`)."""
    from ifr.storage.safe_write import atomic_output
    try:
        with atomic_output(path) as stream:
            fig.savefig(stream, format="png", dpi=100)
    finally:
        plt.close(fig)


def svg_text(fig, plt) -> str:
    """The figure as an SVG document (text only: no font or image it links to),
    the figure closed."""
    import matplotlib
    buffer = io.StringIO()
    try:
        with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": "ifr"}):
            fig.savefig(buffer, format="svg", metadata={"Date": None})
    finally:
        plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg"):]


# --- histograms --------------------------------------------------------------

def integer_edges(finite, most: int = HISTOGRAM_BINS):
    """Bin edges that put whole numbers in the middle of bins of a whole width,
    or None when the samples are not all whole numbers."""
    import numpy as np
    if not finite.size or not np.all(finite == np.round(finite)) or np.ptp(finite) > 1e9:
        return None
    lo, hi = float(finite.min()), float(finite.max())
    width = max(1, math.ceil((hi - lo + 1) / most))
    return np.arange(lo - 0.5, hi + width + 0.5, width)[: int((hi - lo) // width) + 2]


def histogram_figure(name: str, unit: str, samples, stats, size=(7, 3.2)):
    """An uncertain cell's samples as a histogram, its median and 5-95% range
    marked and said in the legend (the title carries no number)."""
    import numpy as np
    plt = load_pyplot()
    fig, ax = plt.subplots(figsize=size)
    finite = np.asarray(samples, dtype=float)
    finite = finite[np.isfinite(finite)]
    edges = integer_edges(finite)
    if edges is None:
        from ifr.evaluation.uncertain import histogram
        counts, edges = histogram(samples, HISTOGRAM_BINS)
    else:
        counts, edges = np.histogram(finite, bins=edges)
    ax.stairs(counts, edges, fill=True, color=LOW_COLOUR, alpha=0.85)
    u = f" {unit}" if unit else ""
    ax.axvline(stats.median, color="black", linestyle="-", linewidth=1, label=f"median {stats.median:.4g}{u}")
    ax.axvline(stats.p5, color="black", linestyle="--", linewidth=1,
               label=f"90% between {stats.p5:.4g} and {stats.p95:.4g}{u}")
    ax.axvline(stats.p95, color="black", linestyle="--", linewidth=1)
    ax.set_xlabel(name + (f" [{unit}]" if unit else ""))
    ax.set_ylabel("samples")
    ax.set_title(f"Distribution of {name}", loc="left")
    ax.grid(True, alpha=0.3)
    legend_below(fig, ax)
    return fig, plt


def plot_histogram(name: str, unit: str, samples, stats, path: Path) -> None:
    """The histogram of :func:`histogram_figure`, to a PNG."""
    fig, plt = histogram_figure(name, unit, samples, stats)
    save_png(fig, path, plt)


def legend_below(fig, ax, rect_bottom: float = 0.0) -> None:
    """The legend in one row under the chart (where it covers nothing), the
    layout made to leave it room; ``rect_bottom`` inches kept free below it."""
    handles, labels = ax.get_legend_handles_labels()
    height = fig.get_figheight()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False, fontsize="small",
               bbox_to_anchor=(0.5, rect_bottom / height))
    fig.tight_layout(rect=(0, (rect_bottom + 0.3) / height, 1, 1))


# --- tables ------------------------------------------------------------------

def table_panels(table) -> list[tuple[str, list[tuple[int, tuple[int, int] | None]]]]:
    """The panels of a table's chart: one per unit, in the order the units are
    first met, each with its columns (index, and the indexes of its 5th and
    95th percentiles when it is uncertain).  Text columns are not drawn; conditions
    (true/false in every row) have panels of their own, apart from unitless numbers."""
    panels: dict[tuple[str, bool], list] = {}
    i = table.keys
    while i < len(table.columns):
        name = table.columns[i]
        band = table.columns[i + 1:i + 3] == [f"{name} p5", f"{name} p95"]
        if not any(isinstance(r[i], str) for r in table.rows):
            truth = bool(table.rows) and all(_is_truth(r[i]) for r in table.rows)
            panels.setdefault((table.units[i], truth), []).append((i, (i + 1, i + 2) if band else None))
        i += 3 if band else 1
    return [(unit, columns) for (unit, _), columns in panels.items()]


def _is_truth(value) -> bool:
    import numpy as np
    return isinstance(value, (bool, np.bool_))


def _truth_axis(ax, table, columns) -> None:
    """A panel of conditions reads false and true, not 0.00 to 1.00."""
    if all(_is_truth(r[i]) for i, _ in columns for r in table.rows):
        ax.set_yticks([0, 1], ["false", "true"])
        ax.set_ylim(-0.25, 1.25)


def wants_log_axis(values) -> bool:
    """Whether values span more than two decades (all positive): on a linear
    axis a 1.5 ms bar is invisible beside 986 ms."""
    positive = [float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    if not positive or min(positive) <= 0:
        return False
    return math.log10(max(positive) / min(positive)) > DECADES_FOR_LOG


def table_figure(table):
    """Each shown column of a table against its varied column, columns of one
    unit on one panel."""
    plt = load_pyplot()
    if table.keys > 2:
        raise IfrError("not-plotted", f"table `{table.name}` varies {table.keys} values; a plot shows one or two",
                       None, hint="print it, or plot a table that varies fewer values")
    rows, k = table.rows, table.keys
    panels = table_panels(table)
    if not panels:
        raise IfrError("not-plotted", f"table `{table.name}` shows no number to draw", None,
                       hint="print it instead")
    # with two varied values: one line per value of the second
    series = {None: rows} if k == 1 else {v: [r for r in rows if r[1] == v] for v in dict.fromkeys(r[1] for r in rows)}
    first = [r[0] for r in rows]
    categorical = any(isinstance(x, str) for x in first)
    fig, axes = plt.subplots(len(panels), 1, figsize=(7, 2.2 + 1.6 * len(panels)), squeeze=False, sharex=True)
    for (unit, columns), ax in zip(panels, axes[:, 0]):
        _draw_panel(ax, table, series, columns, categorical, k)
        _truth_axis(ax, table, columns)
        ax.set_ylabel(unit or "(no unit)" if len(columns) > 1 else _label(table.columns[columns[0][0]], unit))
        if len(columns) > 1 or k == 2:
            ax.legend(fontsize="small")
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel(_label(table.columns[0], table.units[0]))
    fig.suptitle(f"Table {table.name}")
    fig.tight_layout()
    return fig, plt


def _label(name: str, unit: str) -> str:
    return name + (f" [{unit}]" if unit else "")


def _key_label(table, key) -> str:
    if isinstance(key, float):
        return f"{table.columns[1]} = {key:g} {table.units[1]}".rstrip()
    return f"{table.columns[1]} = {key}"


def _draw_panel(ax, table, series, columns, categorical, k) -> None:
    """One panel: a line per column (and per value of a second varied cell), a
    band for an uncertain one; grouped bars for one categorical key."""
    import numpy as np
    drawn = []
    if categorical and k == 1 and all(band is None for _, band in columns):
        names = [r[0] for r in table.rows]
        width = 0.8 / len(columns)
        for n, (i, _) in enumerate(columns):
            ys = [r[i] for r in table.rows]
            drawn += ys
            ax.bar(np.arange(len(names)) + (n - (len(columns) - 1) / 2) * width, ys, width,
                   label=table.columns[i] if len(columns) > 1 else None)
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    else:
        for i, band in columns:
            for key, part in series.items():
                label = ", ".join(p for p in (table.columns[i] if len(columns) > 1 else "",
                                              "" if key is None else _key_label(table, key)) if p) or None
                px, ys = [r[0] for r in part], [r[i] for r in part]
                at = range(len(px)) if categorical else px
                drawn += ys
                line, = ax.plot(at, ys, marker="o", label=label)
                if band is not None:
                    lows, highs = [r[band[0]] for r in part], [r[band[1]] for r in part]
                    drawn += lows + highs
                    ax.fill_between(at, lows, highs, color=line.get_color(), alpha=0.2, linewidth=0)
                if categorical:
                    ax.set_xticks(range(len(px)), px, rotation=30, ha="right")
        if any(band is not None for _, band in columns):
            ax.set_title("median and 5-95% band", fontsize="small")
    if wants_log_axis(drawn):
        ax.set_yscale("log")


def plot_table(table, path: Path) -> None:
    """The chart of :func:`table_figure`, to a PNG."""
    fig, plt = table_figure(table)
    save_png(fig, path, plt)


# --- the tornado -------------------------------------------------------------

def tornado_figure(result, most: int = 15):
    """A tornado chart of a :class:`ifr.queries.sensitivity.Sensitivity`: each
    input's bar goes from the base result to the result at the input's low end
    (one colour) and at its high end (the other), the input's value written at
    each bar end, largest swing on top, the ``most`` largest drawn (how many
    more move it is said).  Inputs that do not move the result are named
    below the chart rather than drawn as empty rows."""
    from ifr.display import format_number
    plt = load_pyplot()
    moving = [s for s in result.swings if s.swing > 0]
    still = [s.input for s in result.swings if not s.swing > 0]
    swings = list(reversed(moving[:most]))
    fig, ax = plt.subplots(figsize=(7.5, 0.55 * max(len(swings), 1) + 1.9))
    base = result.base
    for i, s in enumerate(swings):
        u = f" {s.unit}" if s.unit else ""
        for y, x, colour, label in ((s.y_low, s.low, LOW_COLOUR, "input at its low end"),
                                    (s.y_high, s.high, HIGH_COLOUR, "input at its high end")):
            ax.barh(i, y - base, left=base, color=colour, height=0.6, label=label if i == 0 else None)
            if y != base:
                ax.annotate(f"{format_number(x)}{u}", (y, i), xytext=(4 if y > base else -4, 0),
                            textcoords="offset points", va="center", ha="left" if y > base else "right",
                            fontsize="small")
    ax.axvline(base, color="black", linewidth=1)
    ax.set_yticks(range(len(swings)), [s.input for s in swings])
    ax.set_xlabel(_label(result.output, result.unit) + f"; base {format_number(base)}", labelpad=2)
    ax.set_title(f"What moves {result.output}", loc="left")
    ax.margins(x=0.25)
    ax.grid(True, axis="x", alpha=0.3)
    if swings:
        legend_below(fig, ax, rect_bottom=0.3 if still else 0.0)
    else:
        ax.text(0.5, 0.5, "no input moves it", transform=ax.transAxes, ha="center")
    below = ([f"{len(moving) - most} more inputs move it less"] if len(moving) > most else []) + \
        (["not moved by: " + ", ".join(still[:20]) + (f" and {len(still) - 20} more" if len(still) > 20 else "")]
         if still else [])
    still = "; ".join(below)
    if still:
        fig.text(0.01, 0.01, still, fontsize="small", wrap=True)
    if not swings:
        fig.tight_layout(rect=(0, 0.3 / fig.get_figheight() if still else 0, 1, 1))
    return fig, plt


def plot_tornado(result, path: Path) -> None:
    """The tornado of :func:`tornado_figure`, to a PNG."""
    fig, plt = tornado_figure(result)
    save_png(fig, path, plt)


def search_figure(table, outcome):
    """A search's first two goals over every feasible configuration, in grey, with the
    best ones (a Pareto front: the front) highlighted; (figure, pyplot)."""
    import numpy as np
    plt = load_pyplot()
    goals = outcome.search.goals
    first = table.keys                       # the goals' columns follow the varied ones
    if len(goals) < 2:
        raise IfrError("not-plotted", f"search `{outcome.search.name}` has one goal; a plot draws two against "
                       "each other", None, hint="add a second goal (a pareto search), or print the search")
    x_unit, y_unit = table.units[first], table.units[first + 1]
    from ifr.display import factor
    fig, ax = plt.subplots(figsize=(7, 4.2))
    if outcome.points:
        every = np.concatenate(outcome.points, axis=1)
        ax.scatter(every[0] / factor(x_unit), every[1] / factor(y_unit), s=6, color="#B0B0B0",
                   label=f"feasible ({outcome.feasible:,})")
    xs, ys = np.asarray(table.data[first], dtype=float), np.asarray(table.data[first + 1], dtype=float)
    order = np.argsort(xs)
    label = "Pareto front" if outcome.search.pareto else "best"
    ax.plot(xs[order], ys[order], marker="o", color="#C44E52", label=f"{label} ({len(xs):,})")
    ax.set_xlabel(table.columns[first] + (f" [{x_unit}]" if x_unit else ""))
    ax.set_ylabel(table.columns[first + 1] + (f" [{y_unit}]" if y_unit else ""))
    ax.set_title(f"{outcome.search.name}: {outcome.size:,} configurations")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig, plt


def plot_search(table, outcome, path: Path) -> None:
    """The chart of :func:`search_figure`, to a PNG."""
    fig, plt = search_figure(table, outcome)
    save_png(fig, path, plt)
