"""Golden error messages: each tests/errors/<mistake>.ifr beside <mistake>.out.

An .out file opens with the command (`$ ifr check {file}`) and the exit code
(`exit 2`); the rest is what ifr prints, stderr then stdout.
"""
from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ifr.cli import main
from ifr.codes import CODES

ROOT = Path(__file__).resolve().parent.parent
CASES = sorted((ROOT / "tests" / "errors").glob("*.out"))


def _read(case: Path):
    lines = case.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("$ ifr "), f"{case.name}: first line must be the command"
    assert lines[1].startswith("exit "), f"{case.name}: second line must be the exit code"
    source = case.with_suffix(".ifr").relative_to(ROOT).as_posix()
    argv = [a.replace("{file}", source) for a in shlex.split(lines[0][len("$ ifr "):])]
    return argv, int(lines[1].split()[1]), "\n".join(lines[2:]).strip()


def test_there_are_golden_cases():
    assert len(CASES) >= 19


def rewrite_golden(case: Path, code: int, output: str) -> bool:
    """Make ``case`` expect ``output`` and exit ``code`` under its command, if
    it does not already (then the file is left as it is); True if rewritten."""
    command, exit_line, *expected = case.read_text(encoding="utf-8").splitlines()
    if (exit_line, "\n".join(expected).strip()) == (f"exit {code}", output.strip()):
        return False
    case.write_text(f"{command}\nexit {code}\n{output.strip()}\n", encoding="utf-8")
    return True


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_golden_message(case, capsys, monkeypatch, rewritten_goldens):
    monkeypatch.chdir(ROOT)
    argv, expected_code, expected = _read(case)
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    if rewritten_goldens is not None:     # pytest --update-goldens
        if rewrite_golden(case, code, err + out):
            rewritten_goldens.append(case)
        return
    assert (err + out).strip() == expected
    assert code == expected_code


def test_a_stale_golden_is_rewritten_and_a_current_one_left_alone(tmp_path):
    case = tmp_path / "stale.out"
    case.write_text("$ ifr check {file}\nexit 2\nerror[syntax]: an old message\n", encoding="utf-8")
    assert rewrite_golden(case, 1, "✗ a new message\n0 checks passed\n\n")
    assert case.read_text(encoding="utf-8") == "$ ifr check {file}\nexit 1\n✗ a new message\n0 checks passed\n"
    case.write_text("$ ifr check {file}\nexit 1\n✗ a new message\n0 checks passed\n\n", encoding="utf-8")
    assert not rewrite_golden(case, 1, "✗ a new message\n0 checks passed")
    assert case.read_text(encoding="utf-8").endswith("passed\n\n")   # byte for byte as it was


def test_every_golden_code_is_a_listed_one():
    """A golden pins a code ifr.codes lists, and its exit code is the code's."""
    found = 0
    for case in CASES:
        _, exit_code, expected = _read(case)
        codes = re.findall(r"^(?:\S+: )?(error|warning)\[([a-z0-9-]+)\]", expected, flags=re.M)
        assert all(code in CODES for _, code in codes), f"{case.stem}: {codes}"
        errors = [code for severity, code in codes if severity == "error"]
        found += bool(errors)
        if errors:
            assert exit_code == max(CODES[code].exit_code for code in errors), case.stem
    assert found == sum(_read(case)[1] == 2 for case in CASES)   # every failing golden is read


def test_every_error_case_has_a_position_and_no_traceback(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    for case in CASES:
        argv, code, expected = _read(case)
        if code != 2:
            continue
        first = expected.splitlines()[0]
        assert "error[" in first and first.split(":")[1].isdigit(), f"{case.stem}: {first}"


def test_the_installed_command_prints_no_traceback():
    """The real entry point, in a fresh process, on a broken file."""
    broken = ROOT / "tests" / "errors" / "unit_mismatch_add.ifr"
    result = subprocess.run([sys.executable, "-m", "ifr.cli", "run", str(broken)], capture_output=True, text=True)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "cannot add [information]" in result.stderr


def test_usage_errors_exit_2(capsys):
    assert main(["frobnicate"]) == 2
    assert "error[usage]" in capsys.readouterr().err
    assert main([]) == 2
    assert main(["check", "no/such/folder"]) == 2
