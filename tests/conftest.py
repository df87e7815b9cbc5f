"""Shared pytest fixtures, and the option that rewrites the golden files."""

import os

import pytest
from recalc import find_soffice

# No command a test runs leaves a background closed-form search behind (solving/deferral.py;
# tests/solving/test_solve_paths.py runs one on purpose).
os.environ.setdefault("IFR_NO_BACKGROUND", "1")

@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """A cache folder of this test's own: nothing solved, drawn or parsed before is read back
    (a solve's closed form is then looked for now)."""
    from ifr.storage.cache import cache_dir
    monkeypatch.setenv("IFR_CACHE_DIR", str(tmp_path / "cache"))
    cache_dir.cache_clear()
    yield
    cache_dir.cache_clear()


@pytest.fixture
def numeric_first(tmp_path, monkeypatch):
    """Values from the numeric search, no sympy asked (as `ifr run` with nothing cached:
    no closed form shipped or cached, none looked for in the background)."""
    from ifr.semantics.units import cache_dir
    from ifr.solving import closed_form_cache, deferral
    monkeypatch.setenv("IFR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("IFR_NO_BACKGROUND", "1")
    monkeypatch.setattr(closed_form_cache, "shipped", lambda: {})
    cache_dir.cache_clear()
    deferral.numeric_first(True)
    yield
    deferral.numeric_first(False)
    deferral.PENDING.clear()
    cache_dir.cache_clear()


# The golden files --update-goldens rewrote in this run, for the summary.
GOLDENS_REWRITTEN = pytest.StashKey[list]()


def pytest_addoption(parser):
    parser.addoption("--update-goldens", action="store_true",
                     help="rewrite the expected output of the golden tests (tests/errors/*.out) from what ifr "
                          "prints now, instead of comparing; the summary lists the files that changed")


@pytest.fixture
def rewritten_goldens(request) -> list | None:
    """With --update-goldens, the list a golden test adds each file it rewrote to; None without."""
    if not request.config.getoption("--update-goldens"):
        return None
    return request.config.stash.setdefault(GOLDENS_REWRITTEN, [])


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not config.getoption("--update-goldens"):
        return
    rewritten = config.stash.get(GOLDENS_REWRITTEN, [])
    terminalreporter.section("golden files")
    for path in sorted(rewritten):
        terminalreporter.write_line(f"rewrote {path.relative_to(config.rootpath).as_posix()}")
    terminalreporter.write_line(f"{len(rewritten)} golden file(s) rewritten; review them with git diff"
                                if rewritten else "no golden file changed")


@pytest.fixture(scope="session")
def soffice() -> str:
    """Path of LibreOffice's soffice, for tests that recalculate workbooks.

    Without LibreOffice such tests are skipped, unless IFR_REQUIRE_SOFFICE=1
    (as in CI), where a missing engine must fail rather than pass unnoticed.
    """
    path = find_soffice()
    if path is None:
        message = "LibreOffice (soffice) not found; install it with .ci/install-libreoffice.sh"
        if os.environ.get("IFR_REQUIRE_SOFFICE") == "1":
            pytest.fail(message + " (IFR_REQUIRE_SOFFICE=1)")
        pytest.skip(message)
    return path
