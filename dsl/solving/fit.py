"""Fitting inputs to measured rows: `fit eff, t0 to bench: t_step = formula`.

The formula is compiled once and evaluated on every row at once (each column
a numpy array, the fitted cells set to the values tried, every other cell as
the model computed it); `scipy.optimize.least_squares` (trust-region
reflective, so bounds are kept) chooses the values.  A fit that does not
converge, has fewer usable rows than values to choose, cannot tell its
values apart (a rank-deficient Jacobian) or ends on a bound is the fitted
cells' error, never a number.  Standard errors are the Gauss-Newton ones
(the Jacobian's inverse normal matrix times the residuals' variance), as
`scipy.optimize.curve_fit` gives them."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ifr.errors import IfrError
from ifr.evaluation.evaluate import compile_node, is_array
from ifr.semantics import ir


@dataclass
class FitResult:
    values: list[float]                 # base SI, one per fitted cell
    stderr: list[float | None]          # base SI; None with as many rows as values
    rows: list[int]                     # the rows used (0-based)
    measured: list[float]
    predicted: list[float]
    rms: float                          # base SI, the measured column's dimension
    rms_relative: float
    r_squared: float | None
    evaluations: int
    method: str = "least squares (scipy.optimize.least_squares, trust-region reflective)"
    skipped: list[int] = field(default_factory=list)   # rows with a missing entry

    def worst(self, n: int = 3, relative: bool = True) -> list[tuple[int, float, float, float]]:
        """The ``n`` rows that fit worst: (row, measured, predicted, relative residual)."""
        out = [(i, m, p, (p - m) / m if m else math.inf) for i, m, p in zip(self.rows, self.measured, self.predicted)]
        return sorted(out, key=lambda r: -abs(r[3] if relative else r[2] - r[1]))[:n]


class _Overlay(dict):
    """The model's values with the fitted cells' trial values over them (no copy of the model per trial)."""

    def __init__(self, base, top):
        super().__init__(top)
        self.base = base

    def __missing__(self, key):
        return self.base[key]


# A fit's result by the fit and the values of the cells it reads: each fitted cell, its standard
# error, explain and the workbook ask for it, and a table's rows or a what-if ask again with others.
_CACHE: dict = {}
MAX_CACHED = 256


def needs(fit) -> set[str]:
    """The cells a fit reads besides those it chooses."""
    found = ir.refs(fit.expr).union(*(ir.refs(b) for pair in fit.bounds for b in pair if b is not None))
    return found - set(fit.params)


def run_fit(fit, env) -> FitResult:
    """The fit of ``fit`` given the model's values ``env``; an IfrError when it fails."""
    reads = sorted(needs(fit))
    values = [env[c] for c in reads]
    if any(is_array(v) for v in values):
        raise IfrError("fit-failed", "a fit's inputs must be numbers, and one is uncertain (a distribution)",
                       fit.span, hint="fit with fixed inputs; carry the fit's doubt on with fitted(name)")
    key = (id(fit), tuple(values))
    held = _CACHE.get(key)
    if held is None or held[0] is not fit:
        if len(_CACHE) >= MAX_CACHED:
            _CACHE.clear()
        # the fit is held with its result, so no other fit can take its id while it is cached
        held = _CACHE[key] = (fit, _fit(fit, env))
    found = held[1]
    if isinstance(found, IfrError):
        raise found
    return found


def fitted_value(cell, env) -> float:
    """A fitted cell's value, or its standard error (the cell `eff_se` beside `eff`)."""
    result = run_fit(cell.fit, env)
    if cell.id in cell.fit.params:
        return result.values[cell.fit.params.index(cell.id)]
    i = cell.fit.params.index(cell.id[: -len("_se")])
    if result.stderr[i] is None:
        raise IfrError("fit-underdetermined", f"`{cell.name}` needs more rows than fitted cells: "
                       f"{len(result.rows)} row(s) for {len(cell.fit.params)}", cell.fit.span,
                       hint="measure more rows to know how sure the fit is")
    return result.stderr[i]


def _fit(fit, env):
    try:
        return _least_squares(fit, env)
    except IfrError as e:
        return e


def _least_squares(fit, env) -> FitResult:
    import numpy as np
    from scipy.optimize import least_squares
    table, names = fit.table, [f"{fit.table.name}.{c.name}" for c in fit.table.columns]
    used = [fit.target, *fit.columns]
    rows = [i for i, row in enumerate(table.rows) if all(row[j] is not None for j in used)]
    skipped = [i for i in range(len(table.rows)) if i not in rows]
    n, p = len(rows), len(fit.params)
    if n < p:
        raise IfrError("fit-underdetermined", f"the fit chooses {p} values from {n} complete row(s) of "
                       f"`{table.name}`", fit.span, hint="give at least as many measured rows as fitted cells")
    var = {names[j]: np.array([table.rows[i][j] for i in rows]) for j in fit.columns}
    measured = np.array([table.rows[i][fit.target] for i in rows])
    formula = compile_node(fit.expr)
    start = np.array([_number(compile_node(s)(env, {}), fit) for s in fit.starts], dtype=float)
    lo = np.array([_bound(b[0], env, -np.inf, fit) for b in fit.bounds])
    hi = np.array([_bound(b[1], env, np.inf, fit) for b in fit.bounds])
    if fit.residual == "relative" and np.any(measured == 0):
        raise IfrError("fit-failed", f"relative residuals divide by the measured `{table.columns[fit.target].name}`, "
                       "and a row measures 0", fit.span, hint="fit with absolute residuals (`to table:`)")
    scale = measured if fit.residual == "relative" else np.full(n, math.sqrt(float(np.mean(measured ** 2))) or 1.0)
    start = np.clip(start, lo, hi)
    with np.errstate(all="ignore"):
        inside = np.where(np.isfinite(lo) & np.isfinite(hi), (lo + hi) / 2, start)
    start = np.where((start <= lo) | (start >= hi), inside, start)

    failures: list[IfrError] = []

    def predict(x):
        overlay = _Overlay(env, dict(zip(fit.params, (float(v) for v in x))))
        try:
            out = formula(overlay, var)
        except IfrError as e:
            failures.append(e)
            return np.full(n, np.nan)
        return np.broadcast_to(np.asarray(out, dtype=float), (n,))

    def residuals(x):
        r = (predict(x) - measured) / scale
        return np.where(np.isfinite(r), r, 1e150)

    with np.errstate(all="ignore"):
        result = least_squares(residuals, start, bounds=(lo, hi), x_scale="jac", method="trf",
                               xtol=1e-12, ftol=1e-12, gtol=1e-12, max_nfev=2000 * p)
    names_of = [fit_name(fit, i) for i in range(p)]
    if failures and not np.all(np.isfinite(predict(result.x))):
        raise IfrError("fit-failed", f"the fit's formula has no value on the rows of `{table.name}`: "
                       f"{failures[-1].message}", fit.span, hint="check the formula where the fitted cells are "
                       "near their starting values")
    if np.any(~np.isfinite(predict(result.x))):
        bad = [table.lines[rows[i]] for i in np.flatnonzero(~np.isfinite(predict(result.x)))[:3]]
        raise IfrError("fit-failed", f"the fit's formula has no finite value on the rows of `{table.name}` on "
                       f"line(s) {', '.join(map(str, bad))} of {table.file} (a division by zero, an overflow)",
                       fit.span, hint="check the formula where the fitted cells are near their starting values")
    if result.status <= 0 or not np.all(np.isfinite(result.fun)) or np.any(np.abs(result.fun) >= 1e149):
        raise IfrError("fit-failed", f"the fit of {', '.join(names_of)} to `{table.name}` did not converge "
                       f"({result.message})", fit.span,
                       hint="start from values nearer the answer, or bound them (`eff in 0..1`)")
    hit = [names_of[i] for i in range(p) if result.active_mask[i] != 0]
    if hit:
        raise IfrError("fit-bound", f"the fit ends on a bound of {', '.join(hit)}: the data want a value "
                       "outside it", fit.span, hint="widen the bound, or check the formula and the data's units")
    jac = np.asarray(result.jac, dtype=float)
    rank = np.linalg.matrix_rank(jac)
    if rank < p:
        raise IfrError("fit-underdetermined", f"the data cannot tell {', '.join(names_of)} apart (the fit's "
                       f"Jacobian has rank {rank} of {p})", fit.span,
                       hint="fit fewer cells, or measure rows that vary what the formula's terms depend on")
    predicted = predict(result.x)
    stderr: list[float | None] = [None] * p
    if n > p:
        cov = np.linalg.pinv(jac.T @ jac) * float(np.sum(result.fun ** 2)) / (n - p)
        stderr = [float(math.sqrt(max(cov[i, i], 0.0))) for i in range(p)]
    errors = predicted - measured
    total = float(np.sum((measured - measured.mean()) ** 2))
    return FitResult([float(v) for v in result.x], stderr, rows, [float(v) for v in measured],
                     [float(v) for v in predicted], float(math.sqrt(np.mean(errors ** 2))),
                     float(math.sqrt(np.mean((errors / measured) ** 2))) if np.all(measured != 0) else math.nan,
                     1.0 - float(np.sum(errors ** 2)) / total if total > 0 else None, int(result.nfev),
                     skipped=skipped)


def fit_name(fit, i: int) -> str:
    cid = fit.params[i]
    return cid.rsplit(".", 1)[-1] if "." in cid else cid


def _number(value, fit) -> float:
    if is_array(value) or not isinstance(value, float) or not math.isfinite(value):
        raise IfrError("fit-failed", "a fitted cell's starting value must be a number", fit.span,
                       hint="write a plain starting value, such as eff = 0.5")
    return value


def _bound(node, env, default: float, fit) -> float:
    return default if node is None else _number(compile_node(node)(env, {}), fit)
