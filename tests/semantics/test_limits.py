"""Limits: every input that used to hang, blow up or crash ends in seconds
with one positioned error (exit 2), within bounded memory."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ifr.errors import Span
from ifr.evaluation.evaluate import compile_node
from ifr.semantics import ir
from ifr.semantics.units import DIMENSIONLESS

PEAK_MB = 500


def _run(tmp_path, text: str, *args, name="m.ifr", command="run"):
    """ifr COMMAND on ``text`` in a fresh process: (exit code, stderr, peak memory in MB)."""
    path = tmp_path / name
    if text is not None:
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    probe = ("import resource, subprocess, sys\n"
             "r = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=120)\n"
             "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
             "sys.stdout.write(f'{r.returncode}\\n{peak}\\n' + r.stderr)\n")
    out = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "ifr.cli", command, str(path), *args],
                         capture_output=True, text=True, timeout=150, cwd=tmp_path).stdout
    code, peak, err = out.split("\n", 2)
    return int(code), err, float(peak)


def _fails_cleanly(code, err, peak, error_code):
    assert code == 2, err
    assert f"error[{error_code}]" in err, err
    assert "Traceback" not in err and "internal error" not in err, err
    assert peak < PEAK_MB


@pytest.mark.parametrize("text,code", [
    ("fn sq(x) = x * x\ny = sq(" * 1 + "sq(" * 29 + "2" + ")" * 30 + "\n", "too-large"),
    ("x = max(sum(a * b for b in 1..10000000) for a in 1..10000000)\n", "too-much-work"),
    ("x = ep_imbalance(tokens=1024, topk=8, experts=256, ranks=8, batches=1000000000000, seed=0)\n", "too-much-work"),
    ("x = ep_imbalance(tokens=1000000000, topk=8, experts=256, ranks=8, batches=1, seed=0)\n", "too-much-work"),
    ("x = ep_imbalance(tokens=1, topk=1, experts=100000000, ranks=1, batches=1, seed=0)\n", "too-much-work"),
    ("x = ep_imbalance(tokens=16, topk=2, experts=8, ranks=0, batches=1, seed=0)\n", "bad-argument"),
    ("n = 1e300 * 1e300\nx = sum(k for k in 1..n)\n", "overflow"),
    ("x = " + "-" * 1500 + "1\n", "too-deep"),
    ("x = " + " + ".join(["1"] * 3000) + "\n", "too-deep"),
    ("a = 2\ncheck a = 1e400\n", "too-large"),
    ("x = round(1e400)\n", "too-large"),
    ("a = 2\nx = a ^ 1e400\n", "too-large"),
    ("t = 20 degC in K\n", "offset-unit"),
    ("u = 68 degF\n", "offset-unit"),
    ("w = 0 dBm in W\n", "offset-unit"),
])
def test_a_former_hang_blow_up_or_crash_is_one_error(tmp_path, text, code):
    _fails_cleanly(*_run(tmp_path, text), code)


def test_a_function_chain_is_bounded(tmp_path):
    lines = ["fn f0(x) = x * x"] + [f"fn f{i}(x) = f{i - 1}(x) + f{i - 1}(x)" for i in range(1, 40)]
    _fails_cleanly(*_run(tmp_path, "\n".join(lines) + "\ny = f39(2)\n"), "too-large")


def test_a_four_hundred_term_sum_and_deep_minus_work(tmp_path):
    code, err, _ = _run(tmp_path, "x = " + " + ".join(["1"] * 400) + "\ny = " + "-" * 600 + "1\n")
    assert code == 0, err


def test_a_reversed_table_range_says_so(tmp_path):
    code, err, peak = _run(tmp_path, "x = 1 s\ny = x\ntable t: vary x over 3 s..1 s by 1 s show y\n", "t",
                           command="table")
    _fails_cleanly(code, err, peak, "bad-range")
    assert "1 s..3 s" in err


def test_a_use_chain_of_500_files_is_bounded(tmp_path):
    for i in range(1, 501):
        (tmp_path / f"m{i}.ifr").write_text(f'use "m{i + 1}.ifr" as m\nx{i} = 1\n', encoding="utf-8")
    (tmp_path / "m501.ifr").write_text("y = 1\n", encoding="utf-8")
    _fails_cleanly(*_run(tmp_path, None, name="m1.ifr"), "too-deep")


# --- files that are not models -------------------------------------------------------

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_not_waited_for(tmp_path):
    os.mkfifo(tmp_path / "pipe.ifr")
    _fails_cleanly(*_run(tmp_path, None, name="pipe.ifr"), "unreadable")
    _fails_cleanly(*_run(tmp_path, 'use "pipe.ifr" as p\nx = 1\n'), "unreadable")
    (tmp_path / "ok.ifr").write_text("x = 1 s\ncheck x = 1 s\n", encoding="utf-8")
    code, err, _ = _run(tmp_path, None, name=".", command="check")   # a folder holding a FIFO
    assert "unreadable" in err and code == 2


def test_a_device_is_refused(tmp_path):
    code, err, peak = _run(tmp_path, 'use "/dev/zero" as z\nx = 1\n')
    _fails_cleanly(code, err, peak, "missing-module")
    (tmp_path / "zero.ifr").symlink_to("/dev/zero")
    _fails_cleanly(*_run(tmp_path, 'use "zero.ifr" as z\nx = 1\n'), "unreadable")


def test_a_file_too_large_to_be_a_model_is_refused(tmp_path):
    big = tmp_path / "big.ifr"
    with open(big, "wb") as f:
        f.truncate(64 * 1024 * 1024)
    _fails_cleanly(*_run(tmp_path, None, name="big.ifr"), "too-large")


def test_a_symlink_loop_is_one_error(tmp_path):
    (tmp_path / "a.ifr").symlink_to(tmp_path / "b.ifr")
    (tmp_path / "b.ifr").symlink_to(tmp_path / "a.ifr")
    _fails_cleanly(*_run(tmp_path, None, name="a.ifr"), "unreadable")


def test_a_file_that_is_no_model_is_never_quoted(tmp_path):
    (tmp_path / "secret.txt").write_text("root:TOPSECRET:19000\n", encoding="utf-8")
    code, err, _ = _run(tmp_path, 'use "secret.txt" as s\nx = 1\n')
    assert code == 2 and "TOPSECRET" not in err
    code, err, _ = _run(tmp_path, None, name="secret.txt")
    assert code == 2 and "TOPSECRET" not in err and "error[" in err


# --- text a terminal would misread ------------------------------------------------------

def test_control_characters_are_shown_not_obeyed(tmp_path):
    code, err, _ = _run(tmp_path, "x = 1 GB + 1 s  # \x1b[2J\x1b[31mred\n")
    assert code == 2 and "\x1b" not in err and "\\x1b" in err


def test_a_form_feed_does_not_shift_the_quoted_line(tmp_path):
    code, err, _ = _run(tmp_path, "a = 1 s\n\x0c\nb = 1 GB + a\n")
    assert code == 2 and "b = 1 GB + a" in err and ":3:" in err


def test_a_byte_order_mark_is_read_as_utf8(tmp_path):
    (tmp_path / "bom.ifr").write_bytes("\ufeffx = 2 s\ncheck x = 2 s\n".encode("utf-8"))
    code, err, _ = _run(tmp_path, None, name="bom.ifr", command="check")
    assert code == 0, err


def test_max_and_min_treat_nan_alike_in_any_order():
    span = Span("m", 1, 1, 1, 2)
    one = ir.Const(span, "1", 1.0, DIMENSIONLESS)
    nan = ir.Ref(span, "x", "x")
    values = []
    for name in ("max", "min"):
        for args in ([one, nan], [nan, one]):
            values.append(compile_node(ir.Func(span, name, name, args))({"x": float("nan")}, {}))
    assert all(np.isnan(v) for v in values)


def test_run_shows_control_characters_in_descriptions_as_escapes(tmp_path):
    (tmp_path / "m.ifr").write_text("x = 1 s  # \x1b[31mred\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "ifr.cli", "run", str(tmp_path / "m.ifr")], capture_output=True,
                         text=True).stdout
    assert "\x1b" not in out and "\\x1b[31mred" in out
