"""The cache folder: only the user's own private folder is read, entries are
plain data checked on load, and a cache cut short is rebuilt."""
from __future__ import annotations

import json
import os
import pickle
import stat
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "tests" / "cache_entries.ifr"   # writes an entry of every kind


class _Payload:
    """Unpickling this touches a marker file: proof that code from the cache ran."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _ifr(*args, env=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "ifr.cli", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("IFR_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(extra)
    return env


def _filled_cache(tmp_path) -> Path:
    """A cache folder as normal runs leave it: the names a planted file would take.  (The second
    run, whose Monte Carlo result is cached, solves without numpy and keeps where its scan crossed.)"""
    folder = tmp_path / "own"
    for _ in range(2):
        assert _ifr("check", str(MODEL), "-q", env=_env(IFR_CACHE_DIR=str(folder))).returncode == 0
    return folder


def _plant(folder: Path, names: list[Path], marker: Path) -> None:
    """Put a payload at every name a cache entry takes, plus the names of the
    old pickle layout (syntax/<key>.pickle)."""
    payload = pickle.dumps(_Payload(marker))
    for rel in names:
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(payload)
        if target.suffix == ".json":
            target.with_suffix(".pickle").write_bytes(payload)


# Where older versions kept pickles (lark's parser tables, pint's registry):
# a payload planted there must not run either.
_OLD_PICKLES = [Path("parser.lark.cache"), Path("pint") / "registry.pickle"]


def _cache_names(folder: Path) -> list[Path]:
    return [p.relative_to(folder) for p in folder.rglob("*") if p.is_file()] + _OLD_PICKLES


def test_a_world_writable_cache_folder_is_not_read(tmp_path):
    names = _cache_names(_filled_cache(tmp_path))
    assert any(n.parts[0] == "syntax" for n in names)
    hostile = tmp_path / "shared"
    hostile.mkdir()
    marker = tmp_path / "ran"
    _plant(hostile, names, marker)
    hostile.chmod(0o1777)
    run = _ifr("check", str(MODEL), "-q", env=_env(IFR_CACHE_DIR=str(hostile)))
    assert run.returncode == 0, run.stderr
    assert not marker.exists()
    assert "passed, 0 failed" in run.stdout


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to hand a folder to another user")
def test_a_cache_folder_owned_by_another_user_is_not_read(tmp_path):
    names = _cache_names(_filled_cache(tmp_path))
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    marker = tmp_path / "ran"
    _plant(foreign, names, marker)
    for p in [foreign, *foreign.rglob("*")]:
        os.chown(p, 65534, 65534)
    foreign.chmod(0o755)
    run = _ifr("check", str(MODEL), "-q", env=_env(IFR_CACHE_DIR=str(foreign)))
    assert run.returncode == 0, run.stderr
    assert not marker.exists()


def test_a_premade_fallback_folder_is_not_used(tmp_path):
    """Without a usable home, the run takes a fresh private folder, never a
    predictable name someone else may have made first."""
    names = _cache_names(_filled_cache(tmp_path))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    marker = tmp_path / "ran"
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    premade = tmp / f"ifr-cache-{uid}"
    premade.mkdir()
    _plant(premade, names, marker)
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o555)   # ~/.cache cannot be made (root ignores this; then XDG points at a file)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    env = _env(HOME=str(home), TMPDIR=str(tmp), XDG_CACHE_HOME=str(blocker))
    run = _ifr("check", str(MODEL), "-q", env=env)
    assert run.returncode == 0, run.stderr
    assert not marker.exists()
    assert sorted(p.name for p in tmp.iterdir()) == [premade.name]   # its scratch folder is gone


def test_the_cache_folder_is_made_private(tmp_path):
    folder = tmp_path / "new" / "ifr"
    assert _ifr("check", str(MODEL), "-q", env=_env(IFR_CACHE_DIR=str(folder))).returncode == 0
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for p in folder.rglob("*"):   # JSON entries and the units' definitions text only: nothing to unpickle
        assert p.is_dir() or p.suffix in (".json", ".txt") or p.name == "CACHEDIR.TAG", p


def test_a_planted_units_file_is_not_believed(tmp_path):
    """A definitions file that is not ifr's (here: a gigabit of 8e9 bits) is rewritten."""
    model = tmp_path / "rare.ifr"
    model.write_text("x = 3 Gb/fortnight\ny = x * 2\n")   # a unit not in the shipped table: pint is asked
    folder = tmp_path / "own"
    first = _ifr("run", str(model), "--format", "json", env=_env(IFR_CACHE_DIR=str(folder)))
    assert first.returncode == 0, first.stderr
    planted = list(folder.glob("units-*.txt"))
    assert planted
    for units in planted:
        units.write_text(units.read_text().replace("gigabit", "gigabit_") + "\nGb = 8e9 * bit\n")
    (folder / "units-lookups.json").unlink()
    run = _ifr("run", str(model), "--format", "json", env=_env(IFR_CACHE_DIR=str(folder)))
    assert run.returncode == 0, run.stderr
    assert run.stdout == first.stdout


def test_every_cache_file_cut_short_is_rebuilt(tmp_path):
    folder = _filled_cache(tmp_path)
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert len(files) >= 4
    for p in files:
        data = p.read_bytes()
        p.write_bytes(data[: len(data) // 2])
    for _ in range(2):   # the run after the repair too
        run = _ifr("check", str(MODEL), env=_env(IFR_CACHE_DIR=str(folder)))
        assert run.returncode == 0, run.stderr
        assert "passed, 0 failed" in run.stdout


def test_twenty_parallel_runs_on_a_fresh_cache_all_succeed(tmp_path):
    folder = tmp_path / "fresh"
    env = _env(IFR_CACHE_DIR=str(folder))
    with ThreadPoolExecutor(max_workers=20) as pool:
        runs = list(pool.map(lambda _: _ifr("check", str(MODEL), "-q", env=env), range(20)))
    failed = [r.stderr for r in runs if r.returncode != 0]
    assert not failed, failed[0]


def test_the_cache_is_bounded_and_can_be_listed_and_cleared(tmp_path):
    folder = tmp_path / "small"
    env = _env(IFR_CACHE_DIR=str(folder), IFR_CACHE_MAX_MB="0.05")
    assert _ifr("check", str(MODEL), "-q", env=env).returncode == 0
    assert sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) <= 0.05 * 2**20
    info = _ifr("cache", "info", env=_env(IFR_CACHE_DIR=str(folder)))
    assert info.returncode == 0 and "entries" in info.stdout and str(folder) in info.stdout
    cleared = _ifr("cache", "clear", env=_env(IFR_CACHE_DIR=str(folder)))
    assert cleared.returncode == 0
    assert [p.name for p in folder.rglob("*") if p.is_file()] == ["CACHEDIR.TAG"]   # it stays ifr's folder


def test_one_file_under_two_names_is_parsed_once(tmp_path):
    folder = tmp_path / "c"
    env = _env(IFR_CACHE_DIR=str(folder))
    model = tmp_path / "m.ifr"
    model.write_text("x = 1 s\ncheck x = 1 s\n", encoding="utf-8")
    assert _ifr("check", str(model), env=env).returncode == 0
    before = sorted(p.name for p in (folder / "syntax").iterdir())
    assert _ifr("check", "m.ifr", env=env, cwd=tmp_path).returncode == 0
    assert sorted(p.name for p in (folder / "syntax").iterdir()) == before


def test_a_cold_and_a_warm_cache_give_the_same_digits(tmp_path):
    """The first run solves with sympy and a search, later ones read the closed
    form: both print the closed form's own value."""
    env = _env(IFR_CACHE_DIR=str(tmp_path / "c"))
    model = ROOT / "models" / "d002_transfer_vs_recompute.ifr"
    cold = _ifr("run", str(model), "--format", "json", env=env)
    warm = _ifr("run", str(model), "--format", "json", env=env)
    assert cold.returncode == 0 and cold.stdout == warm.stdout


# --- a folder that is not only ifr's --------------------------------------------------

# The Cache Directory Tagging spec's signature (https://bford.info/cachedir/).
CACHEDIR_SIGNATURE = b"Signature: 8a477f597d28d172789f06886806bc55"
KEY = "ab" * 32   # a name of ifr's entries


def _users_files(folder: Path) -> dict[Path, bytes]:
    """A project's files where a cache might be pointed, some named as ifr names its entries."""
    files = {Path("plan.ifr"): b"x = 1 s\ncheck x = 1 s\n", Path("notes.txt"): b"mine\n",
             Path("units-lookups.json"): b"{}\n", Path("syntax") / f"{KEY}.json": b"{}\n",
             Path("syntax") / "keep.json": b"{}\n"}
    for rel, data in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    return files


def _unchanged(folder: Path, files: dict[Path, bytes]) -> None:
    assert {rel: (folder / rel).read_bytes() for rel in files} == files
    assert not (folder / "CACHEDIR.TAG").exists()


def test_a_folder_holding_other_files_is_neither_used_nor_emptied(tmp_path):
    project = tmp_path / "project"
    files = _users_files(project)
    env = _env(IFR_CACHE_DIR=str(project), IFR_CACHE_MAX_MB="0")   # evict everything ifr may
    run = _ifr("run", str(MODEL), "--format", "json", env=env)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["cells"]   # the warning is on stderr only
    assert run.stderr.count("warning[cache-folder]") == 1, run.stderr
    assert f"{project} holds files ifr did not write; using a temporary cache" in run.stderr
    assert "hint: point IFR_CACHE_DIR at an empty or new folder" in run.stderr
    _unchanged(project, files)
    cleared = _ifr("cache", "clear", env=env)
    assert cleared.returncode == 2 and "error[cache-folder]" in cleared.stderr, cleared.stderr
    _unchanged(project, files)
    info = _ifr("cache", "info", env=env)
    assert info.returncode == 0 and "holds files ifr did not write" in info.stdout, info.stdout
    assert "warning" not in info.stderr


def test_eviction_and_clear_delete_only_ifrs_entries(tmp_path):
    folder = _filled_cache(tmp_path)
    tag = (folder / "CACHEDIR.TAG").read_bytes()
    assert tag.startswith(CACHEDIR_SIGNATURE)
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / f"{KEY}.json"
    victim.write_text("the target of a planted link\n")
    link = folder / "syntax" / f"{'cd' * 32}.json"   # an entry's name, but a link
    link.symlink_to(victim)
    foreign = [link]
    for rel, text in [("solutions/readme.txt", "not an entry's name"), (f"montecarlo/{KEY}", "not an entry's name"),
                      ("units-notes.txt", "not an entry's name"), (f"pint/{KEY}.json", "an earlier version's"),
                      (f"elsewhere/{KEY}.json", "not in ifr's subfolders")]:
        (folder / rel).parent.mkdir(exist_ok=True)
        (folder / rel).write_text(text + "\n")
        foreign.append(folder / rel)
    env = _env(IFR_CACHE_DIR=str(folder), IFR_CACHE_MAX_MB="0")
    run = _ifr("check", str(MODEL), "-q", env=env)   # writes, then evicts all it may
    assert run.returncode == 0 and "warning" not in run.stderr, run.stderr
    assert all(p.is_symlink() or p.exists() for p in foreign)
    cleared = _ifr("cache", "clear", env=env)
    assert cleared.returncode == 0, cleared.stderr
    left = sorted(p for p in folder.rglob("*") if p.is_symlink() or not p.is_dir())
    assert left == sorted([*foreign, folder / "CACHEDIR.TAG"])
    assert victim.read_text() == "the target of a planted link\n"
    assert (folder / "CACHEDIR.TAG").read_bytes() == tag


def test_an_earlier_versions_cache_is_adopted(tmp_path):
    """A folder of ifr's entries without a tag (as versions before it left one) is still ifr's."""
    folder = _filled_cache(tmp_path)
    (folder / "CACHEDIR.TAG").unlink()
    (folder / "parser.lark.cache").write_bytes(b"an old pickle")
    (folder / "pint").mkdir()
    (folder / "pint" / "registry.pickle").write_bytes(b"an old pickle")
    entries = sorted(p for p in folder.rglob("*.json"))
    run = _ifr("check", str(MODEL), "-q", env=_env(IFR_CACHE_DIR=str(folder)))
    assert run.returncode == 0 and "warning" not in run.stderr, run.stderr
    assert (folder / "CACHEDIR.TAG").read_bytes().startswith(CACHEDIR_SIGNATURE)
    assert sorted(p for p in folder.rglob("*.json")) == entries   # read, not written elsewhere


def test_a_new_or_empty_folder_is_tagged(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    for folder in (empty, tmp_path / "new" / "cache"):
        run = _ifr("check", str(MODEL), "-q", env=_env(IFR_CACHE_DIR=str(folder)))
        assert run.returncode == 0 and "warning" not in run.stderr, run.stderr
        tag = (folder / "CACHEDIR.TAG").read_bytes()
        assert tag.startswith(CACHEDIR_SIGNATURE) and b"ifr" in tag.splitlines()[-1]
        assert (folder / "syntax").is_dir()
