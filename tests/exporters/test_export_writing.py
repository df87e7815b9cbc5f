"""Writing an export: an exclusive temporary file beside the target, renamed
over it; nothing left behind, and the old file kept, when writing fails."""
from __future__ import annotations

import errno
import importlib
import os
import signal
import stat
from pathlib import Path

import pytest
from openpyxl import load_workbook

import ifr
from ifr.cli import main
from ifr.errors import IfrError
from ifr.exporters import exporter

ROOT = Path(__file__).resolve().parents[2]
PD_HANDOFF = ROOT / "models" / "pd_handoff.ifr"
SUFFIXES = [".xlsx", ".md", ".json"]


@pytest.fixture(scope="module")
def model():
    return ifr.load(PD_HANDOFF)


def old_temporary_names(target: Path) -> list[Path]:
    """Every name the former scheme (`.plan.<pid>.tmp.xlsx`) would have written through,
    for this process and the pids around it."""
    pid = os.getpid()
    return [target.parent / f".{target.stem}.{p}.tmp{target.suffix}" for p in range(max(pid - 50, 1), pid + 50)]


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_a_planted_symlink_is_never_written_through(model, tmp_path, suffix):
    shared, private = tmp_path / "shared", tmp_path / "private"
    shared.mkdir()
    private.mkdir()
    victim = private / "thesis.txt"
    victim.write_bytes(b"the victim's file")
    target = shared / f"plan{suffix}"
    traps = old_temporary_names(target)
    for trap in traps:
        trap.symlink_to(victim)
    model.export(target)
    assert victim.read_bytes() == b"the victim's file"
    assert all(trap.is_symlink() and trap.resolve() == victim for trap in traps)
    assert target.is_file() and not target.is_symlink() and target.stat().st_size > 0
    assert sorted(p.name for p in shared.iterdir() if not p.is_symlink()) == [target.name]


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_a_failing_export_leaves_no_temporary_file_and_the_old_file(model, tmp_path, monkeypatch, suffix):
    target = tmp_path / f"plan{suffix}"
    target.write_bytes(b"the good file")
    # the exporter's module, as `export` finds it, and the step of it that writes the file's content
    module = importlib.import_module(exporter(target).module)
    step = {".xlsx": "WorkbookWriter", ".md": "render", ".json": "document"}[suffix]

    def broken(*args, **kwargs):
        raise RuntimeError("a bug halfway")
    monkeypatch.setattr(module, step, broken)
    with pytest.raises(RuntimeError):
        model.export(target)
    assert target.read_bytes() == b"the good file"
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_a_full_disk_is_a_write_failed_error_and_the_old_file_survives(model, tmp_path, monkeypatch, suffix):
    target = tmp_path / f"plan{suffix}"
    target.write_bytes(b"the good file")

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(IfrError) as info:
        model.export(target)
    error = info.value
    assert error.code == "write-failed"
    assert error.message == f"could not write {target}: No space left on device"
    assert "free some space" in error.hint
    assert target.read_bytes() == b"the good file"
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


def test_a_full_disk_while_the_workbook_is_zipped(model, tmp_path, monkeypatch, capsys):
    """The command line's view: one message, exit 2, no traceback, the old file kept."""
    import xlsxwriter
    target = tmp_path / "plan.xlsx"
    target.write_bytes(b"the good file")

    def full(self):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(xlsxwriter.Workbook, "close", full)
    code = main(["export", str(PD_HANDOFF), "-o", str(target)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.startswith(f"error[write-failed]: could not write {target}: No space left on device")
    assert target.read_bytes() == b"the good file"
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


@pytest.mark.parametrize("interrupt", ["KeyboardInterrupt", "SIGTERM"])
def test_an_interrupted_export_removes_its_temporary_file(model, tmp_path, monkeypatch, interrupt):
    from ifr.exporters.xlsx import workbook as xlsx
    target = tmp_path / "plan.xlsx"

    def stopped(self):
        if interrupt == "SIGTERM":
            os.kill(os.getpid(), signal.SIGTERM)
        raise KeyboardInterrupt
    monkeypatch.setattr(xlsx.WorkbookWriter, "write", stopped)
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit if interrupt == "SIGTERM" else KeyboardInterrupt) as info:
        model.export(target)
    if interrupt == "SIGTERM":
        assert info.value.code == 128 + signal.SIGTERM
    assert list(tmp_path.iterdir()) == []
    assert signal.getsignal(signal.SIGTERM) is before


def test_the_export_keeps_the_usual_permissions(model, tmp_path):
    target = tmp_path / "plan.xlsx"
    umask = os.umask(0o022)
    try:
        model.export(target)
    finally:
        os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    target.chmod(0o640)
    model.export(target)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert load_workbook(target).sheetnames[0] == "Model"
