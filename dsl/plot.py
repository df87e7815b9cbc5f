"""`ifr table NAME --plot out.png`: the shown columns against the varied one."""
from __future__ import annotations

import os
from pathlib import Path

from .errors import IfrError


def plot_table(table, path: Path) -> None:
    """Draw each shown column of a table against its varied column, to a PNG."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise IfrError("missing-dependency", "plotting needs matplotlib", None,
                       hint="pip install 'ifr[plot]'") from None
    labels = [c + (f" [{u}]" if u else "") for c, u in zip(table.columns, table.units)]
    xs = [row[0] for row in table.rows]
    categorical = any(isinstance(x, str) for x in xs)
    fig, axes = plt.subplots(len(table.columns) - 1, 1, figsize=(7, 2.6 * (len(table.columns) - 1)),
                             squeeze=False)
    for i, ax in enumerate(axes[:, 0], start=1):
        ys = [row[i] for row in table.rows]
        if categorical:
            ax.bar(range(len(xs)), ys)
            ax.set_xticks(range(len(xs)), xs, rotation=30, ha="right")
        else:
            ax.plot(xs, ys, marker="o")
        ax.set_ylabel(labels[i])
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel(labels[0])
    fig.suptitle(table.name)
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp.png")
    try:
        fig.savefig(tmp, dpi=100)
        os.replace(tmp, path)
    except OSError as exc:
        raise IfrError("unwritable", f"cannot write {path}: {exc.strerror}", None) from None
    finally:
        plt.close(fig)
