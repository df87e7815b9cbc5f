"""Workbooks that came back broken or crafted: `--inputs-from` reads each into
one IfrError (code, file, sheet and cell where known, hint), never a
traceback, and never more memory than the caps allow."""
from __future__ import annotations

import re
import struct
import subprocess
import sys
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from workbooks import part, rebuild

import ifr
from ifr.errors import IfrError
from ifr.readers.roundtrip import read_inputs
from ifr.readers.xlsx_parts import MAX_PART_BYTES

ROOT = Path(__file__).resolve().parents[2]
PD_HANDOFF = ROOT / "models" / "pd_handoff.ifr"
SHEET = "xl/worksheets/sheet1.xml"          # the Model sheet


@pytest.fixture(scope="module")
def model():
    return ifr.load(PD_HANDOFF)


@pytest.fixture(scope="module")
def exported(model, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("exported") / "plan.xlsx"
    model.export(path)
    return path


def refused(model, path: Path) -> IfrError:
    with pytest.raises(IfrError) as info:
        read_inputs(model, path)
    error = info.value
    assert error.hint, error
    assert str(path) in str(error), error          # the rendered error names the file
    return error


def test_bad_xml(model, exported, tmp_path):
    broken = rebuild(exported, tmp_path / "bad.xlsx", part(SHEET, lambda text: text[: len(text) // 2]))
    error = refused(model, broken)
    assert error.code == "unreadable" and "xl/worksheets/sheet1.xml is not well-formed XML" in error.message


def test_a_doctype_is_refused_before_any_entity_is_expanded(model, exported, tmp_path):
    laughs = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
              + "".join(f'<!ENTITY lol{i + 1} "{"&lol" + str(i) + ";" if i else "&lol;"}' * 10 + '">'
                        for i in range(9)) + ']>')
    broken = rebuild(exported, tmp_path / "laughs.xlsx",
                     part("xl/sharedStrings.xml", lambda text: laughs + text[text.index("?>") + 2:]))
    error = refused(model, broken)
    assert error.code == "unreadable" and "DOCTYPE" in error.message


def test_deep_nesting_is_refused(model, exported, tmp_path):
    nested = "<x>" * 2_000_000 + "</x>" * 2_000_000
    broken = rebuild(exported, tmp_path / "nested.xlsx",
                     part("xl/sharedStrings.xml", lambda text: text.replace("</sst>", nested + "</sst>")))
    tracemalloc.start()
    try:
        error = refused(model, broken)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert error.code == "unreadable" and "nests elements more than" in error.message
    assert peak < 32 * 2 ** 20


def test_a_shared_string_index_out_of_range_names_the_cell(model, exported, tmp_path):
    broken = rebuild(exported, tmp_path / "strings.xlsx",
                     part(SHEET, lambda text: re.sub(r'(<c r="A7" s="\d+" t="s"><v>)\d+', r"\g<1>99999", text)))
    error = refused(model, broken)
    assert error.code == "unreadable" and error.message.startswith("Model!A7: ")
    assert "shared string 99999" in error.message and (error.span.line, error.span.column) == (7, 1)


def test_a_style_index_out_of_range_names_the_cell(model, exported, tmp_path):
    broken = rebuild(exported, tmp_path / "styles.xlsx",
                     part(SHEET, lambda text: re.sub(r'<c r="C7" s="\d+"', '<c r="C7" s="4000"', text)))
    error = refused(model, broken)
    assert error.code == "unreadable" and error.message.startswith("Model!C7: ") and "style 4000" in error.message


def test_no_styles_part(model, exported, tmp_path):
    broken = rebuild(exported, tmp_path / "nostyles.xlsx",
                     lambda name, data: None if name == "xl/styles.xml" else data)
    error = refused(model, broken)
    assert error.code == "unreadable" and "no styles part" in error.message


@pytest.mark.parametrize("target, what", [("Model!$B$7:$B$9", "a range"), ("Model!$B$1048577", "Excel's grid"),
                                          ("Model!$XFE$7", "Excel's grid"), ("Nowhere!$B$7", "not a cell"),
                                          ("#REF!", "not a cell")])
def test_a_defined_name_that_is_not_one_cell(model, exported, tmp_path, target, what):
    broken = rebuild(exported, tmp_path / "name.xlsx", part("xl/workbook.xml", lambda text: re.sub(
        '<definedName name="context">[^<]*</definedName>', f'<definedName name="context">{target}</definedName>',
        text)))
    error = refused(model, broken)
    assert error.code == "workbook-mismatch" and "`context`" in error.message and what in error.message


def test_a_cell_past_the_last_row(model, exported, tmp_path):
    broken = rebuild(exported, tmp_path / "row.xlsx",
                     part(SHEET, lambda text: text.replace('<row r="39"', '<row r="1048577"')))
    error = refused(model, broken)
    assert error.code == "unreadable" and "1048577" in error.message


def test_a_huge_string_is_refused_from_the_zip_directory_unread(model, exported, tmp_path):
    """500 MB of text in a part that compresses to half a megabyte."""
    bomb = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(exported) as old, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            if info.filename != "xl/sharedStrings.xml":
                new.writestr(info.filename, old.read(info))
        with new.open("xl/sharedStrings.xml", "w", force_zip64=True) as stream:
            stream.write(b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t>')
            chunk = b"a" * 2 ** 20
            for _ in range(500):
                stream.write(chunk)
            stream.write(b"</t></si></sst>")
    assert bomb.stat().st_size < 2 ** 20
    tracemalloc.start()
    try:
        error = refused(model, bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert error.code == "workbook-too-large" and "xl/sharedStrings.xml" in error.message
    assert peak < 32 * 2 ** 20


def test_a_zip_directory_that_understates_a_part_is_caught(model, exported, tmp_path):
    """The directory says 100 bytes; the part inflates to far more: reading stops
    at 100 bytes and the CRC check fails, so a lie buys no memory."""
    honest = rebuild(exported, tmp_path / "honest.xlsx", part("xl/sharedStrings.xml",
                                                             lambda text: text.replace("</sst>", "")
                                                             + "<si><t>" + "b" * (MAX_PART_BYTES // 64) + "</t></si></sst>"))
    data = bytearray(honest.read_bytes())
    with zipfile.ZipFile(honest) as archive:
        info = archive.getinfo("xl/sharedStrings.xml")
    true_size = info.file_size.to_bytes(4, "little")
    for signature, offset in ((b"PK\x01\x02", 24), (b"PK\x03\x04", 22)):   # central, local header
        start = data.find(signature + b"", info.header_offset if signature == b"PK\x03\x04" else 0)
        while start != -1:
            if data[start + offset:start + offset + 4] == true_size:
                data[start + offset:start + offset + 4] = (100).to_bytes(4, "little")
                break
            start = data.find(signature, start + 1)
    liar = tmp_path / "liar.xlsx"
    liar.write_bytes(bytes(data))
    error = refused(model, liar)
    assert error.code == "unreadable"


def test_not_a_zip_and_a_missing_file(model, tmp_path):
    junk = tmp_path / "junk.xlsx"
    junk.write_bytes(b"PK\x03\x04 but not really")
    assert refused(model, junk).code == "unreadable"
    with pytest.raises(IfrError) as info:
        read_inputs(model, tmp_path / "missing.xlsx")
    assert info.value.code == "no-such-file"


def test_the_command_line_prints_one_error_and_no_traceback(exported, tmp_path):
    broken = rebuild(exported, tmp_path / "bad.xlsx", part(SHEET, lambda text: text[: len(text) // 2]))
    run = subprocess.run([sys.executable, "-m", "ifr.cli", "run", str(PD_HANDOFF), "--inputs-from", str(broken)],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.startswith("error[unreadable]: ") and str(broken) in run.stderr and "hint:" in run.stderr



# --- damaged zip data --------------------------------------------------------------------

def member_data(path: Path, name: str) -> tuple[int, int]:
    """Where a member's compressed data starts in the file, and its length (from its local header)."""
    raw = path.read_bytes()
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(name)
    start = info.header_offset
    assert raw[start:start + 4] == b"PK\x03\x04"
    name_length, extra_length = struct.unpack("<HH", raw[start + 26:start + 30])
    return start + 30 + name_length + extra_length, info.compress_size


def central_entry(data: bytes, name: str) -> int:
    """Where a member's central directory entry starts."""
    entry = data.find(b"PK\x01\x02")
    while data[entry + 46:entry + 46 + len(name)] != name.encode():
        entry = data.find(b"PK\x01\x02", entry + 1)
    return entry


def in_headers(exported: Path, local: int | None, central: int | None, value: bytes):
    """A damage writing `value` at a field of the Model sheet's local header and
    of its central directory entry (offsets into each; None leaves that one)."""
    with zipfile.ZipFile(exported) as archive:
        header = archive.getinfo(SHEET).header_offset

    def damage(data: bytearray) -> None:
        if local is not None:
            data[header + local:header + local + len(value)] = value
        if central is not None:
            entry = central_entry(data, SHEET) + central
            data[entry:entry + len(value)] = value
    return damage


def flipped(start: int, length: int):
    def damage(data: bytearray) -> None:
        for i in range(start, start + length):
            data[i] ^= 0xA5
    return damage


def cut(start: int):
    def damage(data: bytearray) -> None:
        del data[start:]
    return damage


def at_end(offset: int, value: bytes):
    """A damage of the end of central directory record (the file's last 22 bytes)."""
    def damage(data: bytearray) -> None:
        start = len(data) - 22 + offset
        data[start:start + len(value)] = value
    return damage


def damages(exported: Path) -> dict:
    """Each way a zip comes back broken, as a change of the exported file's bytes,
    and what Python's zipfile raises for it unless caught."""
    start, size = member_data(exported, SHEET)
    method = lambda code: in_headers(exported, 8, 10, struct.pack("<H", code))   # noqa: E731
    total = exported.stat().st_size
    return {
        "deflate data flipped": flipped(start + size // 3, 16),                 # zlib.error
        "deflate data's end flipped": flipped(start + size - 6, 4),             # zlib.error or a short stream
        "crc in both headers": in_headers(exported, 14, 16, bytes(4)),          # BadZipFile: Bad CRC-32
        "unknown compression method": method(99),                               # NotImplementedError
        "lzma method on deflate data": method(zipfile.ZIP_LZMA),                # lzma.LZMAError
        "bzip2 method on deflate data": method(zipfile.ZIP_BZIP2),              # OSError
        "encrypted flag": in_headers(exported, 6, 8, struct.pack("<H", 1)),     # RuntimeError
        "local header's name length": in_headers(exported, 26, None, struct.pack("<H", 0xFFFF)),
        "member offset past the end": in_headers(exported, None, 42, struct.pack("<I", total + 10)),
        "truncated in a member": cut(start + size // 2),
        "truncated in the directory": cut(total - 30),
        "directory size": at_end(12, b"\xff\xff\x00\x00"),
        "directory offset": at_end(16, b"\xff\xff\xff\x7f"),
    }


DAMAGES = ["deflate data flipped", "deflate data's end flipped", "crc in both headers", "unknown compression method",
           "lzma method on deflate data", "bzip2 method on deflate data", "encrypted flag",
           "local header's name length", "member offset past the end", "truncated in a member",
           "truncated in the directory", "directory size", "directory offset"]


def damaged(exported: Path, out: Path, damage) -> Path:
    data = bytearray(exported.read_bytes())
    damage(data)
    out.write_bytes(bytes(data))
    return out


@pytest.mark.parametrize("how", DAMAGES)
def test_a_damaged_zip_is_one_unreadable_error(model, exported, tmp_path, how):
    broken = damaged(exported, tmp_path / "damaged.xlsx", damages(exported)[how])
    assert broken.read_bytes() != exported.read_bytes()
    error = refused(model, broken)
    assert error.code == "unreadable", error


def test_any_flipped_byte_is_an_ifr_error_or_read(model, exported, tmp_path):
    """Every byte of the file is in some member's data, a header or the directory: a
    flip anywhere is an IfrError naming the file (or, in a part ifr does not read, nothing)."""
    size = exported.stat().st_size
    for position in range(0, size, max(1, size // 400)):
        broken = damaged(exported, tmp_path / "flipped.xlsx", flipped(position, 1))
        try:
            read_inputs(model, broken)
        except IfrError as error:
            assert error.hint and str(broken) in str(error), (position, error)


def test_a_damaged_zip_exits_2_on_the_command_line(exported, tmp_path):
    start, size = member_data(exported, SHEET)
    broken = damaged(exported, tmp_path / "damaged.xlsx", flipped(start + size // 3, 16))
    run = subprocess.run([sys.executable, "-m", "ifr.cli", "run", str(PD_HANDOFF), "--inputs-from", str(broken)],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert run.stderr.startswith("error[unreadable]: ") and "hint:" in run.stderr
