"""Soak: generated models through every command, export and both spreadsheet engines.

    .venv/bin/python bench/soak_models.py [--models 10000] [--start 0] [--batch 50]
                                          [--engines libreoffice,gnumeric] [--no-edit]
                                          [--kind data_table]

Prints, at the end (and every batch), the counts the oracle keeps: models,
commands run and their exit codes, statement kinds covered, and findings by
kind (internal errors, disagreements, dead cells in unedited workbooks,
wrong numbers after edits, an engine past its time limit on a workbook),
with the first findings of each kind and their seeds (`tests/modelgen.py`'s
`generate(seed)` writes the model again).
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from modelgen import STATEMENT_KINDS, generate  # noqa: E402
from oracle import Oracle  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=10_000)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--engines", default="libreoffice,gnumeric")
    parser.add_argument("--no-edit", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the models' folders")
    parser.add_argument("--all", action="store_true", help="print every finding, as it is found")
    parser.add_argument("--kind", action="append", default=[],
                        help="only the seeds whose model has this statement kind (repeat for any of several)")
    args = parser.parse_args(argv)
    engines = tuple(e for e in args.engines.split(",") if e)
    kinds, codes, findings, first = Counter(), Counter(), Counter(), {}
    models = commands = 0
    started = time.time()
    for lo in range(args.start, args.start + args.models, args.batch):
        folder = Path(tempfile.mkdtemp(prefix="ifr-soak-"))
        oracle = Oracle(folder)
        cases = []
        for seed in range(lo, min(lo + args.batch, args.start + args.models)):
            generated = generate(seed)
            if args.kind and not any(generated.kinds[k] for k in args.kind):
                continue
            kinds.update(generated.kinds)
            cases.append(oracle.prepare(generated))
        if engines:
            try:
                oracle.workbooks(cases, engines=engines, edit=not args.no_edit)
            except subprocess.TimeoutExpired as late:
                # an engine past its limit on a workbook (one too big for its model, or a hang) is a
                # finding, not the end of the soak; the batch's workbooks after it go unchecked
                findings["slow"] += 1
                command = " ".join(map(str, late.cmd)) if isinstance(late.cmd, (list, tuple)) else str(late.cmd)
                first.setdefault("slow", []).append(f"over {late.timeout:.0f} s: {command[:300]}; the rest of "
                                                    f"seeds {lo}..{lo + args.batch - 1} not recalculated")
        for case in cases:
            models += 1
            commands += case.commands
            codes.update(case.exit_codes)
            for f in case.findings:
                if args.all:
                    print(f"  finding {str(f)[:600]}", flush=True)
                findings[f.kind] += 1
                first.setdefault(f.kind, []).append(str(f)[:400]) if len(first.get(f.kind, [])) < 5 else None
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
        else:
            print(f"  kept {folder}", flush=True)
        report(models, commands, codes, kinds, findings, first, time.time() - started)
    return 1 if findings else 0


def report(models, commands, codes, kinds, findings, first, seconds) -> None:
    covered = [k for k in STATEMENT_KINDS if kinds[k]]
    print(f"{models} models, {commands} commands ({dict(sorted(codes.items()))} by exit code), "
          f"{seconds:.0f} s", flush=True)
    print(f"  statement kinds covered: {len(covered)} of {len(STATEMENT_KINDS)}"
          + (f" (missing: {', '.join(sorted(set(STATEMENT_KINDS) - set(covered)))})" if
             len(covered) < len(STATEMENT_KINDS) else ""))
    for kind in ("internal", "disagree", "dead", "wrong", "slow"):
        print(f"  {kind}: {findings[kind]}")
        for line in first.get(kind, []):
            print(f"    {line}")


if __name__ == "__main__":
    sys.exit(main())
