"""The charts `--plot out.png` draws: a table's shown columns against the
varied one, a distribution's histogram, a sensitivity's tornado; matplotlib
is imported only when one is drawn."""
from __future__ import annotations

from pathlib import Path

from ifr.errors import IfrError


def load_pyplot():
    """matplotlib's pyplot, drawing off screen; a missing matplotlib is the user's to install."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise IfrError("missing-dependency", "plotting needs matplotlib", None,
                       hint="pip install 'ifr[plot]'") from None
    return plt


def save_png(fig, path: Path, plt) -> None:
    """Write the figure as a PNG, as every file ifr writes (`ifr.storage.safe_write`)."""
    from ifr.storage.safe_write import atomic_output
    try:
        with atomic_output(path) as stream:
            fig.savefig(stream, format="png", dpi=100)
    finally:
        plt.close(fig)


def plot_histogram(name: str, unit: str, samples, stats, path: Path) -> None:
    """An uncertain cell's samples as a histogram, its median and 5-95% range marked."""
    plt = load_pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.2))
    from ifr.evaluation.uncertain import histogram
    counts, edges = histogram(samples, 60)
    ax.stairs(counts, edges, fill=True, color="#4C72B0", alpha=0.85)
    for x, style in ((stats.median, "-"), (stats.p5, "--"), (stats.p95, "--")):
        ax.axvline(x, color="black", linestyle=style, linewidth=1)
    ax.set_xlabel(name + (f" [{unit}]" if unit else ""))
    ax.set_ylabel("samples")
    ax.set_title(f"{name}: median {stats.median:.4g}, 90% between {stats.p5:.4g} and {stats.p95:.4g}"
                 + (f" {unit}" if unit else ""))
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    save_png(fig, path, plt)


def plot_table(table, path: Path) -> None:
    """Draw each shown column of a table against its varied column, to a PNG."""
    plt = load_pyplot()
    if table.keys > 2:
        raise IfrError("not-plotted", f"table `{table.name}` varies {table.keys} values; a plot shows one or two",
                       None, hint="print it, or plot a table that varies fewer values")
    labels = [c + (f" [{u}]" if u else "") for c, u in zip(table.columns, table.units)]
    rows = table.rows
    k = table.keys
    # with two varied values: one line per value of the second
    series = {None: rows} if k == 1 else {v: [r for r in rows if r[1] == v] for v in dict.fromkeys(r[1] for r in rows)}
    xs = [row[0] for row in rows]
    categorical = any(isinstance(x, str) for x in xs)
    # the shown columns; an uncertain one comes with its 5th and 95th percentiles, drawn as a band
    plotted, i = [], k
    while i < len(table.columns):
        name = table.columns[i]
        band = table.columns[i + 1:i + 3] == [f"{name} p5", f"{name} p95"]
        plotted.append((i, (i + 1, i + 2) if band else None))
        i += 3 if band else 1
    fig, axes = plt.subplots(len(plotted), 1, figsize=(7, 2.6 * len(plotted)), squeeze=False)
    for (i, band), ax in zip(plotted, axes[:, 0]):
        for key, part in series.items():
            label = None if key is None else f"{table.columns[1]} = {key:g} {table.units[1]}".rstrip() if isinstance(key, float) else str(key)
            px, ys = [r[0] for r in part], [r[i] for r in part]
            at = range(len(px)) if categorical else px
            if categorical and k == 1 and band is None:
                ax.bar(at, ys)
            else:
                line, = ax.plot(at, ys, marker="o", label=label)
                if band is not None:
                    ax.fill_between(at, [r[band[0]] for r in part], [r[band[1]] for r in part],
                                    color=line.get_color(), alpha=0.2, linewidth=0)
            if categorical:
                ax.set_xticks(range(len(px)), px, rotation=30, ha="right")
        if k == 2:
            ax.legend(fontsize="small")
        ax.set_ylabel(labels[i] + ("\nmedian, 5-95%" if band is not None else ""))
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel(labels[0])
    fig.suptitle(table.name)
    fig.tight_layout()
    save_png(fig, path, plt)


def plot_tornado(result, path: Path) -> None:
    """A tornado chart of a :class:`ifr.queries.sensitivity.Sensitivity`: each
    input's bar spans the result at its two ends, largest on top."""
    plt = load_pyplot()
    swings = list(reversed(result.swings))
    fig, ax = plt.subplots(figsize=(7, 0.5 * len(swings) + 1.5))
    for i, s in enumerate(swings):
        lo, hi = min(s.y_low, s.y_high), max(s.y_low, s.y_high)
        ax.barh(i, hi - lo, left=lo, color="#4C72B0" if s.y_high >= s.y_low else "#DD8452")
    ax.axvline(result.base, color="black", linewidth=1)
    ax.set_yticks(range(len(swings)), [s.input for s in swings])
    ax.set_xlabel(f"{result.output}" + (f" [{result.unit}]" if result.unit else ""))
    ax.set_title(f"What moves {result.output}")
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    save_png(fig, path, plt)


def plot_search(table, outcome, path: Path) -> None:
    """A search's first two goals (or its goal against its first varied value) over every
    feasible configuration, in grey, with the best ones (a Pareto front: the front) highlighted."""
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
    save_png(fig, path, plt)
