"""Soak: generated models through every command, export and both spreadsheet engines.

    .venv/bin/python bench/soak_models.py [--models 10000] [--start 0] [--batch 50] [--jobs 2]
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
from dataclasses import dataclass, field
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
    parser.add_argument("--jobs", type=int, default=1, help="batches run side by side, a process each")
    parser.add_argument("--engines", default="libreoffice,gnumeric")
    parser.add_argument("--no-edit", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the models' folders")
    parser.add_argument("--all", action="store_true", help="print every finding, as it is found")
    parser.add_argument("--kind", action="append", default=[],
                        help="only the seeds whose model has this statement kind (repeat for any of several)")
    args = parser.parse_args(argv)
    engines = tuple(e for e in args.engines.split(",") if e)
    end = args.start + args.models
    batches = [(range(lo, min(lo + args.batch, end)), engines, not args.no_edit, tuple(args.kind), args.keep)
               for lo in range(args.start, end, args.batch)]
    total = Batch()
    started = time.time()
    if args.jobs > 1:
        import multiprocessing
        with multiprocessing.get_context("fork").Pool(args.jobs, maxtasksperchild=4) as pool:
            done = pool.imap(soak, batches)
            for batch in done:
                total.add(batch, args.all)
                report(total, time.time() - started)
    else:
        for batch in batches:
            total.add(soak(batch), args.all)
            report(total, time.time() - started)
    return 1 if total.findings else 0


@dataclass
class Batch:
    """What the oracle counted over some models."""
    models: int = 0
    commands: int = 0
    codes: Counter = field(default_factory=Counter)
    kinds: Counter = field(default_factory=Counter)
    findings: Counter = field(default_factory=Counter)
    first: dict = field(default_factory=dict)     # kind -> the first findings of that kind, as text
    found: list = field(default_factory=list)     # every finding, as text
    kept: str | None = None

    def add(self, other: Batch, every: bool) -> None:
        if every:
            for line in other.found:
                print(f"  finding {line}", flush=True)
        if other.kept:
            print(f"  kept {other.kept}", flush=True)
        self.models += other.models
        self.commands += other.commands
        self.codes.update(other.codes)
        self.kinds.update(other.kinds)
        self.findings.update(other.findings)
        for kind, lines in other.first.items():
            mine = self.first.setdefault(kind, [])
            mine.extend(lines[:max(0, 5 - len(mine))])


def soak(batch) -> Batch:
    """One batch of seeds through the oracle, in a folder of its own."""
    seeds, engines, edit, only, keep = batch
    out = Batch()
    folder = Path(tempfile.mkdtemp(prefix="ifr-soak-"))
    oracle = Oracle(folder)
    cases = []
    for seed in seeds:
        generated = generate(seed)
        if only and not any(generated.kinds[k] for k in only):
            continue
        out.kinds.update(generated.kinds)
        cases.append(oracle.prepare(generated))
    if engines:
        try:
            oracle.workbooks(cases, engines=engines, edit=edit)
        except subprocess.TimeoutExpired as late:
            # an engine past its limit on a workbook (one too big for its model, or a hang) is a
            # finding, not the end of the soak; the batch's workbooks after it go unchecked
            out.findings["slow"] += 1
            command = " ".join(map(str, late.cmd)) if isinstance(late.cmd, (list, tuple)) else str(late.cmd)
            out.first.setdefault("slow", []).append(f"over {late.timeout:.0f} s: {command[:300]}; the rest of "
                                                    f"seeds {seeds.start}..{seeds.stop - 1} not recalculated")
    for case in cases:
        out.models += 1
        out.commands += case.commands
        out.codes.update(case.exit_codes)
        for f in case.findings:
            out.found.append(str(f)[:600])
            out.findings[f.kind] += 1
            lines = out.first.setdefault(f.kind, [])
            if len(lines) < 5:
                lines.append(str(f)[:400])
    if keep:
        out.kept = str(folder)
    else:
        shutil.rmtree(folder, ignore_errors=True)
    return out


def report(total: Batch, seconds: float) -> None:
    covered = [k for k in STATEMENT_KINDS if total.kinds[k]]
    print(f"{total.models} models, {total.commands} commands ({dict(sorted(total.codes.items()))} by exit code), "
          f"{seconds:.0f} s", flush=True)
    print(f"  statement kinds covered: {len(covered)} of {len(STATEMENT_KINDS)}"
          + (f" (missing: {', '.join(sorted(set(STATEMENT_KINDS) - set(covered)))})" if
             len(covered) < len(STATEMENT_KINDS) else ""))
    for kind in ("internal", "disagree", "dead", "wrong", "slow"):
        print(f"  {kind}: {total.findings[kind]}")
        for line in total.first.get(kind, []):
            print(f"    {line}")


if __name__ == "__main__":
    sys.exit(main())
