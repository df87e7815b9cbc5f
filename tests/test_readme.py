"""Every ifr example in README loads without a mistake and its checks pass."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import ifr

README = Path(__file__).resolve().parent.parent / "README.md"
# whole examples open with a docstring; other blocks are fragments of them
BLOCKS = [b for b in re.findall(r"```ifr\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
          if b.startswith('"""')]


# data files the examples read: a ```csv block whose first line is `# name.csv`
DATA_FILES = dict(re.findall(r"```csv\n# (\S+)\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S))


def test_readme_has_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_a_readme_example_runs_and_its_checks_pass(tmp_path, index):
    path = tmp_path / "example.ifr"
    for name, text in DATA_FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    path.write_text(BLOCKS[index], encoding="utf-8")
    analysis = ifr.analyse(path)
    assert not analysis.errors, [e.message for e in analysis.errors]
    model = analysis.evaluate()
    assert not model.errors, {c: e.message for c, e in model.errors.items()}
    failed = [r.source for r in model.check() if not r.passed]
    assert not failed


def test_the_search_example_prints_what_readme_shows(tmp_path, capsys):
    """README's `ifr search` output is the search of its example, line for line."""
    from ifr.cli import main
    text = README.read_text(encoding="utf-8")
    example = next(b for b in BLOCKS if "search best:" in b)
    shown = text[text.index("$ ifr search plan.ifr best --top 3"):]
    shown = shown[:shown.index("```")].splitlines()
    path = tmp_path / "plan.ifr"
    path.write_text(example, encoding="utf-8")
    assert main(["search", str(path), "best", "--top", "3"]) == 0
    out, err = capsys.readouterr()
    assert (out + err).splitlines() == shown[1:]
