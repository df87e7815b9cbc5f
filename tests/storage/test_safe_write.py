"""Every file ifr writes (a formatted model, an export, a plot, a shipped data
file, a cache entry) replaces the old one whole or not at all: on a full disk
the old file is left as it was and nothing is left beside it."""
from __future__ import annotations

import errno
import os
import stat
import subprocess
from pathlib import Path

import pytest

import ifr
from ifr.cli import main
from ifr.errors import IfrError

ROOT = Path(__file__).resolve().parents[2]
PD_HANDOFF = ROOT / "models" / "pd_handoff.ifr"


def unaligned_model(cells: int = 400) -> str:
    """A model that `ifr fmt` makes about four times longer: each short name is padded to the long one."""
    return "a_very_long_name_that_sets_the_column_of_equals = 1\n" + "".join(f"x{i} = {i}\n" for i in range(cells))


@pytest.fixture
def small_disk(tmp_path):
    """A folder on a 64 KiB file system of its own (a tmpfs), unmounted afterwards."""
    folder = tmp_path / "disk"
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], capture_output=True)
    if done.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def fill(folder: Path, leave: int) -> None:
    """Fill the folder's file system until only about `leave` bytes are free."""
    vfs = os.statvfs(folder)
    free = vfs.f_bavail * vfs.f_frsize
    (folder / "filler").write_bytes(b"\0" * max(0, free - leave))


def others(folder: Path, *keep: str) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name not in ("filler", *keep))


def full_after(monkeypatch, written: int) -> None:
    """Make every file opened by `os.fdopen` fail with ENOSPC once `written` bytes went through it."""
    real = os.fdopen

    class Full:
        def __init__(self, stream):
            self.stream, self.count = stream, 0

        def write(self, data):
            if self.count + len(data) > written:
                self.stream.write(data[:written - self.count])
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            self.count += len(data)
            return self.stream.write(data)

        def __getattr__(self, name):
            return getattr(self.stream, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return self.stream.__exit__(*exc)

    monkeypatch.setattr(os, "fdopen", lambda *a, **k: Full(real(*a, **k)))


# --- ifr fmt ---------------------------------------------------------------------

def test_fmt_on_a_full_disk_is_write_failed_and_keeps_the_model(small_disk, capsys):
    model = small_disk / "plan.ifr"
    text = unaligned_model()
    model.write_text(text, encoding="utf-8")
    fill(small_disk, leave=8192)   # less than the formatted text's growth
    code = main(["fmt", str(model)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith(f"error[write-failed]: could not write {model}: No space left on device")
    assert "free some space" in err and "plan.ifr was left as it was" in err
    assert model.read_text(encoding="utf-8") == text
    assert others(small_disk, "plan.ifr") == []


def test_fmt_failing_midway_keeps_the_model(tmp_path, monkeypatch, capsys):
    model = tmp_path / "plan.ifr"
    text = unaligned_model()
    model.write_text(text, encoding="utf-8")
    full_after(monkeypatch, written=1000)
    code = main(["fmt", str(model)])
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error[write-failed]: ") and "No space left on device" in err
    assert model.read_text(encoding="utf-8") == text
    assert [p.name for p in tmp_path.iterdir()] == ["plan.ifr"]


def test_fmt_keeps_the_permissions(tmp_path):
    model = tmp_path / "plan.ifr"
    model.write_text(unaligned_model(3), encoding="utf-8")
    model.chmod(0o640)
    assert main(["fmt", str(model)]) == 0
    assert stat.S_IMODE(model.stat().st_mode) == 0o640
    assert model.read_text(encoding="utf-8").startswith("a_very_long_name_that_sets_the_column_of_equals = 1\nx0")


def test_fmt_through_ones_own_link_keeps_the_link(tmp_path):
    real = tmp_path / "models" / "plan.ifr"
    real.parent.mkdir()
    real.write_text(unaligned_model(3), encoding="utf-8")
    link = tmp_path / "plan.ifr"
    link.symlink_to(Path("models") / "plan.ifr")
    assert main(["fmt", str(link)]) == 0
    assert link.is_symlink() and os.readlink(link) == str(Path("models") / "plan.ifr")
    assert real.read_text(encoding="utf-8").splitlines()[1].startswith("x0" + " " * 46 + "= 0")
    assert sorted(p.name for p in real.parent.iterdir()) == ["plan.ifr"]


def someone_elses_link(link: Path, target: Path) -> None:
    link.symlink_to(target)
    try:
        os.lchown(link, os.getuid() + 4242, -1)
    except (OSError, AttributeError):
        pytest.skip("only root can give a link to another user")


def test_a_link_of_someone_elses_is_replaced_never_written_through(tmp_path):
    victim = tmp_path / "victim.ifr"
    victim.write_text(unaligned_model(3), encoding="utf-8")
    before = victim.read_bytes()
    shared = tmp_path / "shared"
    shared.mkdir()
    trap = shared / "plan.ifr"
    someone_elses_link(trap, victim)
    assert main(["fmt", str(trap)]) == 0
    assert victim.read_bytes() == before
    assert not trap.is_symlink() and trap.read_text(encoding="utf-8").splitlines()[1].startswith("x0 ")


# --- exports ------------------------------------------------------------------

@pytest.fixture(scope="module")
def model():
    return ifr.load(PD_HANDOFF)


def test_an_export_through_ones_own_link_keeps_the_link(model, tmp_path):
    real = tmp_path / "out" / "plan.md"
    real.parent.mkdir()
    real.write_text("old", encoding="utf-8")
    link = tmp_path / "plan.md"
    link.symlink_to(real)
    model.export(link)
    assert link.is_symlink() and link.resolve() == real
    assert real.read_text(encoding="utf-8").startswith("# ")


def test_an_export_over_someone_elses_link_replaces_the_link(model, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("the victim's file", encoding="utf-8")
    trap = tmp_path / "plan.md"
    someone_elses_link(trap, victim)
    model.export(trap)
    assert victim.read_text(encoding="utf-8") == "the victim's file"
    assert not trap.is_symlink() and trap.read_text(encoding="utf-8").startswith("# ")


def test_an_export_onto_a_pipe_is_refused_and_the_pipe_kept(model, tmp_path):
    pipe = tmp_path / "plan.md"
    os.mkfifo(pipe)
    with pytest.raises(IfrError) as info:
        model.export(pipe)
    assert info.value.code == "unwritable"
    assert info.value.message == f"cannot write {pipe}: it is not a regular file (a device, a pipe or a socket)"
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["plan.md"]


def test_an_export_onto_a_folder_is_refused(model, tmp_path):
    folder = tmp_path / "plan.md"
    folder.mkdir()
    with pytest.raises(IfrError) as info:
        model.export(folder)
    assert info.value.code == "unwritable" and info.value.message == f"cannot write {folder}: it is a folder"


# --- plots ------------------------------------------------------------------------

def test_a_plot_on_a_full_disk_is_write_failed_and_keeps_the_old_one(small_disk, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    plan = tmp_path / "plan.ifr"
    plan.write_text("x = 1 GB\ny = x * 2\ntable by_x: vary x over [1 GB, 2 GB, 4 GB] show y\n", encoding="utf-8")
    png = small_disk / "t.png"
    png.write_bytes(b"the old plot")
    fill(small_disk, leave=0)
    code = main(["table", str(plan), "by_x", "--plot", str(png)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"error[write-failed]: could not write {png}: No space left on device"), err
    assert png.read_bytes() == b"the old plot"
    assert others(small_disk, "t.png") == []


# --- shipped data files and cache entries ------------------------------------------

def test_the_build_on_a_full_disk_keeps_the_shipped_file(small_disk, monkeypatch, capsys):
    from ifr import build
    shipped = small_disk / "unit_table.json"
    shipped.write_text('{"old": true}\n', encoding="utf-8")
    fill(small_disk, leave=4096)
    monkeypatch.setattr(build, "artifacts", lambda: {shipped: (lambda path: False, lambda: "x" * 100_000)})
    assert build.main(["--models", str(ROOT / "models")]) == 2
    assert "error[write-failed]: could not write" in capsys.readouterr().err
    assert shipped.read_text(encoding="utf-8") == '{"old": true}\n'
    assert others(small_disk, "unit_table.json") == []


def test_a_cache_entry_on_a_full_disk_fails_quietly_and_leaves_nothing(small_disk):
    from ifr.solving.closed_form_cache import ClosedFormCache
    from ifr.storage import cache
    cache.write_atomic(small_disk / "entry.json", "small")
    fill(small_disk, leave=0)
    solutions = ClosedFormCache()
    solutions.folder = small_disk
    solutions.put("k" * 64, {"candidates": [["x", "y" * 100_000]], "complete": True, "flat": []})
    cache.write_atomic(small_disk / "other.json", "z" * 100_000)
    assert others(small_disk, "entry.json") == []
    assert (small_disk / "entry.json").read_text(encoding="utf-8") == "small"
    assert stat.S_IMODE((small_disk / "entry.json").stat().st_mode) == 0o600
