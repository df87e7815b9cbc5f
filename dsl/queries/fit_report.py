"""What a fit found, as `ifr explain` and the JSON output show it: the
method, the residual (RMS in the measured column's unit, and relative), R²,
each fitted cell's standard error and the rows that fit worst."""
from __future__ import annotations

from ifr.display import factor, format_number


def fit_report(model, cid: str) -> dict | None:
    """The statistics of the fit that chooses cell ``cid``; None when it is no fitted cell or the fit failed."""
    from ifr.errors import IfrError
    from ifr.solving.fit import fit_name, run_fit
    cell = model.graph.cells[cid]
    fit = cell.fit
    if fit is None or cid in model.errors:
        return None
    try:
        result = run_fit(fit, model.values)
    except IfrError:
        return None
    column = fit.table.columns[fit.target]
    shown = column.factor
    params = []
    for i, pid in enumerate(fit.params):
        unit = model.units.get(pid, "")
        scale = 1.0 / factor(unit)
        params.append({"name": fit_name(fit, i), "value": model.value(pid), "unit": unit,
                       "stderr": None if result.stderr[i] is None or scale is None else result.stderr[i] * scale,
                       "stderr_text": None if result.stderr[i] is None else model.value_text(pid + "_se", 4)
                       if pid + "_se" in model.values else None})
    worst = [{"line": fit.table.lines[i], "label": fit.table.labels[i], "measured": m / shown,
              "predicted": p / shown, "relative": r} for i, m, p, r in result.worst(3, fit.residual == "relative")]
    return {"method": result.method + f", {fit.residual} residuals", "table": fit.table.name,
            "file": fit.table.file, "column": column.name, "unit": column.unit or "", "rows": len(result.rows),
            "skipped": len(result.skipped), "rms": result.rms / shown, "rms_relative": result.rms_relative,
            "r_squared": result.r_squared, "evaluations": result.evaluations, "parameters": params, "worst": worst}


def render_fit(report: dict) -> list[str]:
    """`ifr explain`'s lines for a fit."""
    unit = f" {report['unit']}" if report["unit"] else ""
    lines = [f"  method:      {report['method']}",
             f"  data:        {report['rows']} rows of {report['table']} ({report['file']})"
             + (f", {report['skipped']} with a missing entry left out" if report["skipped"] else ""),
             f"  residual:    RMS {format_number(report['rms'])}{unit} of {report['column']}, "
             f"{format_number(100 * report['rms_relative'])}% relative",
             f"  R²:          {'n/a' if report['r_squared'] is None else format(report['r_squared'], '.6f')}"]
    for p in report["parameters"]:
        lines.append(f"  {p['name']}:{' ' * max(1, 12 - len(p['name']))}standard error "
                     f"{p['stderr_text'] or 'n/a (as many rows as fitted cells)'}")
    lines.append("  worst rows:")
    for w in report["worst"]:
        label = f" ({w['label']})" if w["label"] else ""
        lines.append(f"    line {w['line']}{label}: measured {format_number(w['measured'])}{unit}, predicted "
                     f"{format_number(w['predicted'])}{unit} ({100 * w['relative']:+.2f}%)")
    return lines


def summary_text(report: dict) -> str:
    """One line under a fitted cell in `ifr run`: the rows, the residual and R²."""
    unit = f" {report['unit']}" if report["unit"] else ""
    r2 = "n/a" if report["r_squared"] is None else format(report["r_squared"], ".5f")
    return (f"fit: {report['rows']} rows of {report['table']}, RMS residual {format_number(report['rms'])}{unit} "
            f"({format_number(100 * report['rms_relative'])}%), R² {r2}; `ifr explain` for more")
