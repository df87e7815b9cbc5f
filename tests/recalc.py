"""Recalculate .xlsx workbooks in LibreOffice and read back what it computed.

Exported workbooks store each formula together with a cached result. A test
that only reads those cached results checks ifr against itself; this module
lets a test check ifr against an independent engine instead:

    out = recalculate(workbook, tmp_path / "recalculated")
    values = read_values(out)          # {("Sheet1", "B7"): 42, ...}
    assert errors_in(out) == []

LibreOffice, by default, keeps the cached results of an .xlsx it loads
instead of recalculating them, so a wrong cached value would survive the
round trip and the test would pass whatever the formulas say. Every
conversion here therefore runs with a private profile that tells Calc to
always recalculate on load (see `_PROFILE_SETTINGS`);
tests/exporters/test_recalc_engine.py proves it does.
"""

from __future__ import annotations

import atexit
import functools
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from openpyxl import load_workbook

# Where Debian's packages put the binary when it is not on PATH.
_SOFFICE_FALLBACKS = ("/usr/bin/soffice", "/usr/lib/libreoffice/program/soffice")

TIMEOUT_SECONDS = 120.0
# A batch shares one start-up; each further file adds only its own load,
# recalculation and save, which take well under a second for our workbooks.
_EXTRA_SECONDS_PER_FILE = 5.0

# Calc's "Recalculation on file load" options: 0 = always, 1 = never (how a
# default profile treated xlsxwriter's files: cached values kept), 2 = ask,
# which headless turns into a failed load ("source file could not be
# loaded", exit status 0). Both formats are set so an .ods fed through the
# same path is recalculated too.
_PROFILE_SETTINGS = """\
<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry"
           xmlns:xs="http://www.w3.org/2001/XMLSchema"
           xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="ODFRecalcMode" oor:op="fuse"><value>0</value></prop></item>
</oor:items>
"""

# What Excel shows for a failed formula. LibreOffice's .xlsx export maps every
# one of its own errors onto these (by experiment with LibreOffice 7.4:
# =1/0 -> #DIV/0!, =FOO() -> #NAME?, =SQRT(-1) and =LN(0) -> #VALUE! where
# Excel says #NUM!, a circular reference -> #VALUE!, =2^1024 -> #NUM!,
# a non-intersecting range -> #REF! where Excel says #NULL!).
EXCEL_ERROR_VALUES = frozenset(
    {"#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A"}
)
# LibreOffice's own codes, as its user interface, .ods and .csv show them
# (Err:502 = invalid argument, Err:522 = circular reference, ...). They do not
# appear in its .xlsx output but are listed so a value read from elsewhere is
# still recognised as an error.
LIBREOFFICE_ERROR_VALUES = frozenset(f"Err:{code}" for code in range(501, 541))
ERROR_VALUES = EXCEL_ERROR_VALUES | LIBREOFFICE_ERROR_VALUES

# LibreOffice writes numbers to .xlsx with 15 significant digits (=1/3 is
# stored as 0.333333333333333), so a recalculated value can differ from a
# Python float by a few parts in 1e15; compare with
# math.isclose(got, expected, rel_tol=NUMBER_REL_TOLERANCE).
NUMBER_REL_TOLERANCE = 1e-13

# Text that can only be an error code leaking out as a string, never a value
# a model would write (unlike "#N/A", which a description might contain).
_LIBREOFFICE_ERROR_TEXT = re.compile(r"Err:\d{3}|#ERR\d{3}!")

# One conversion at a time: concurrent soffice processes on one profile
# hand their work to each other or fail on the profile lock.
_soffice_lock = threading.Lock()


def find_soffice() -> str | None:
    """Return the path of LibreOffice's soffice binary, or None if absent."""
    for name in ("soffice", "libreoffice"):
        found = shutil.which(name)
        if found:
            return found
    for candidate in _SOFFICE_FALLBACKS:
        if os.access(candidate, os.X_OK):
            return candidate
    return None


@functools.cache
def _private_profile() -> Path:
    """Create, once per process, a LibreOffice profile that always recalculates.

    A private profile also keeps the conversion away from the user's own
    LibreOffice settings and from any LibreOffice window they have open.
    """
    profile = Path(tempfile.mkdtemp(prefix="ifr-libreoffice-profile-"))
    atexit.register(shutil.rmtree, profile, ignore_errors=True)
    user = profile / "user"
    user.mkdir()
    (user / "registrymodifications.xcu").write_text(_PROFILE_SETTINGS, encoding="utf-8")
    return profile


def recalculate(src: Path, out_dir: Path, *, timeout: float = TIMEOUT_SECONDS) -> Path:
    """Recalculate one workbook; return the path of the recalculated .xlsx.

    The result is `out_dir/<src stem>.xlsx`; `src` and its folder are left
    untouched. Raises RuntimeError, with LibreOffice's output, if it fails.
    """
    return recalculate_many([src], out_dir, timeout=timeout)[0]


def recalculate_with_gnumeric(src: Path, out_dir: Path) -> Path:
    """Recalculate one workbook with Gnumeric's `ssconvert --recalc` (the second
    engine); return the path of the recalculated .xlsx, `out_dir/<src name>`.
    The test is skipped where Gnumeric is not installed."""
    import pytest
    ssconvert = shutil.which("ssconvert")
    if ssconvert is None:
        pytest.skip("Gnumeric's ssconvert is not installed")
    out = out_dir / src.name
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([ssconvert, "--recalc", str(src), str(out)], check=True, timeout=120, capture_output=True)
    return out


def recalculate_many(
    srcs: Sequence[Path], out_dir: Path, *, timeout: float | None = None
) -> list[Path]:
    """Recalculate several workbooks with one LibreOffice run.

    Returns one recalculated .xlsx per source, in the order given. Each lands
    at `out_dir/<stem>.xlsx`; a source whose stem an earlier one already
    used goes to `out_dir/2/<stem>.xlsx`, `out_dir/3/...`, so sources with
    the same name from different folders never overwrite each other.
    Existing files at those paths are replaced. `timeout` covers the whole
    run (default: 120 s plus 5 s per file after the first). Raises
    RuntimeError naming every file LibreOffice did not produce.
    """
    srcs = [Path(src).resolve() for src in srcs]
    if not srcs:
        return []
    for src in srcs:
        if not src.is_file():
            raise FileNotFoundError(f"no workbook to recalculate at {src}")
    out_dir = Path(out_dir).resolve()
    targets = _target_paths(srcs, out_dir)
    if timeout is None:
        timeout = TIMEOUT_SECONDS + _EXTRA_SECONDS_PER_FILE * (len(srcs) - 1)

    with tempfile.TemporaryDirectory(prefix="ifr-recalc-") as staging:
        staged_in = Path(staging, "in")
        staged_out = Path(staging, "out")
        staged_in.mkdir()
        # LibreOffice names each output after its input and writes all of a
        # run's outputs into one folder, so the inputs are staged under
        # unique names. The fresh output folder also means a file that is
        # there was written by this run, not left over from an earlier one.
        staged = [
            shutil.copyfile(src, staged_in / f"{index}-{src.name}")
            for index, src in enumerate(srcs)
        ]
        completed = _run_soffice(
            ["--convert-to", "xlsx", "--outdir", str(staged_out), *map(str, staged)],
            timeout,
        )
        produced = [staged_out / f"{Path(path).stem}.xlsx" for path in staged]
        missing = [src for src, path in zip(srcs, produced) if not path.is_file()]
        if missing:
            raise RuntimeError(
                "LibreOffice did not produce a recalculated workbook for "
                + ", ".join(map(str, missing))
                + _describe(completed)
            )
        for path, target in zip(produced, targets):
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(path, target)
    return targets


def _target_paths(srcs: Sequence[Path], out_dir: Path) -> list[Path]:
    """Choose where each recalculated workbook goes (see recalculate_many)."""
    seen: dict[str, int] = {}
    targets = []
    for src in srcs:
        name = f"{src.stem}.xlsx"
        seen[name] = seen.get(name, 0) + 1
        folder = out_dir if seen[name] == 1 else out_dir / str(seen[name])
        target = folder / name
        if target in srcs:
            raise ValueError(
                f"recalculating {src} into {out_dir} would overwrite a source "
                "workbook; choose another output folder"
            )
        targets.append(target)
    return targets


def _run_soffice(args: list[str], timeout: float) -> subprocess.CompletedProcess:
    """Run headless soffice on the private profile; raise RuntimeError on failure.

    A zero exit status proves little (soffice reports a file it cannot load
    on stdout and still exits 0), so callers check for the output files.
    """
    soffice = find_soffice()
    if soffice is None:
        raise RuntimeError("LibreOffice (soffice) is not installed or not on PATH")
    command = [
        soffice,
        f"-env:UserInstallation={_private_profile().as_uri()}",
        "--headless",
        "--norestore",
        *args,
    ]
    with _soffice_lock:
        # soffice is a launcher that starts soffice.bin as a child; its own
        # session lets a timeout kill both, so no orphan keeps the profile.
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
            raise RuntimeError(
                f"LibreOffice did not finish within {timeout:g} s"
                + _describe(subprocess.CompletedProcess(command, None, stdout, stderr))
            ) from None
    completed = subprocess.CompletedProcess(command, process.returncode, stdout, stderr)
    if completed.returncode != 0:
        raise RuntimeError(
            f"LibreOffice failed with exit status {completed.returncode}"
            + _describe(completed)
        )
    return completed


def _describe(completed: subprocess.CompletedProcess) -> str:
    """Format a soffice run's command and output for an error message."""
    return (
        f"\ncommand: {subprocess.list2cmdline(completed.args)}"
        f"\nstdout:\n{(completed.stdout or '').strip() or '(empty)'}"
        f"\nstderr:\n{(completed.stderr or '').strip() or '(empty)'}"
    )


def read_values(path: Path) -> dict[tuple[str, str], object]:
    """Return every non-empty cell's value, keyed by (sheet title, "A1" ref).

    Formula cells give the result stored in the file (after recalculate():
    LibreOffice's result, rounded to 15 significant digits, see
    NUMBER_REL_TOLERANCE); error results come back as their text, "#DIV/0!".
    """
    stat = Path(path).stat()
    key = (str(Path(path).resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _READ:
        if len(_READ) >= 32:
            _READ.clear()
        workbook = load_workbook(_with_comment_authors(path), data_only=True)
        try:
            _READ[key] = {
                (sheet.title, cell.coordinate): cell.value
                for sheet in workbook.worksheets
                for row in sheet.iter_rows()
                for cell in row
                if cell.value is not None
            }
        finally:
            workbook.close()
    return dict(_READ[key])


# read_values's last answers, by file, time and size: the oracle reads one recalculated
# workbook for its Model sheet, its Checks sheet and its data sheets
_READ: dict = {}


def _with_comment_authors(path: Path):
    """The workbook, or a copy of it in memory whose comments have an author.

    Gnumeric writes a note's comments part with an empty `<authors/>`, and
    openpyxl then fails on the first comment (an IndexError for author 0)."""
    import io
    import zipfile
    with zipfile.ZipFile(path) as src:
        names = [n for n in src.namelist() if n.startswith("xl/comments")]
        if not any(b"<authors/>" in src.read(n) for n in names):
            return path
        copy = io.BytesIO()
        with zipfile.ZipFile(copy, "w", zipfile.ZIP_DEFLATED) as dst:
            for item in src.infolist():
                data = src.read(item)
                if item.filename in names:
                    data = data.replace(b"<authors/>", b"<authors><author></author></authors>")
                dst.writestr(item, data)
    copy.seek(0)
    return copy


def errors_in(path: Path) -> list[tuple[str, str, str]]:
    """Return (sheet title, "A1" ref, error text) for every cell holding an error.

    A cell counts when the file marks it as an error (how LibreOffice and
    Excel store a failed formula), or when its text is one of LibreOffice's
    own error codes. Text that merely reads "#N/A" is a value, not an error.
    """
    workbook = load_workbook(_with_comment_authors(path), data_only=True)
    try:
        return [
            (sheet.title, cell.coordinate, cell.value)
            for sheet in workbook.worksheets
            for row in sheet.iter_rows()
            for cell in row
            if cell.data_type == "e"
            or (
                isinstance(cell.value, str)
                and _LIBREOFFICE_ERROR_TEXT.fullmatch(cell.value)
            )
        ]
    finally:
        workbook.close()


def export_and_recalculate(sources: Sequence[Path], folder: Path) -> dict:
    """{source: (model, exported .xlsx, LibreOffice-recalculated .xlsx)} for .ifr files."""
    import ifr
    found = {}
    for index, path in enumerate(sources):
        model = ifr.load(path)
        out = folder / f"{index:02d}-{path.stem}.xlsx"
        model.export(out)
        found[path] = (model, out)
    recalcs = recalculate_many([out for _, out in found.values()], folder / "recalculated")
    return {path: (model, out, rec) for (path, (model, out)), rec in zip(found.items(), recalcs)}
