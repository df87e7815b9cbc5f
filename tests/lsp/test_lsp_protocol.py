"""`ifr lsp` on the wire: messages read within bounds, and the JSON-RPC errors for what
cannot be answered (before initialize, invalid params, not JSON, a failing handler)."""
from __future__ import annotations

import asyncio
import io
import json
import queue
import subprocess
import sys
import threading
import time

import pytest
from lsprotocol import types
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from ifr.lsp.protocol import MAX_HEADER_LINE, MAX_MESSAGE_BYTES, IfrProtocol, read_message, serve

MiB = 1024 * 1024


def frame(message: dict | bytes) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def request(msg_id: int, method: str, params) -> bytes:
    return frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})


INITIALIZE = request(1, "initialize", {"processId": None, "rootUri": None, "capabilities": {}})
HOVER = {"textDocument": {"uri": "file:///nowhere.ifr"}, "position": {"line": 0, "character": 0}}


def bodies(data: bytes) -> list[dict]:
    stream, out = io.BytesIO(data), []
    while (body := read_message(stream)) is not None:
        out.append(json.loads(body))
    return out


def exchange(data: bytes) -> dict:
    """The server's answers, by id, to the messages in ``data`` (a server with a hover that answers
    null and a definition that fails)."""
    ls = LanguageServer("test", "0", protocol_cls=IfrProtocol)

    @ls.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls, params):
        return None

    @ls.feature(types.TEXT_DOCUMENT_DEFINITION)
    def definition(ls, params):
        raise ValueError("a bug")

    out = io.BytesIO()
    ls.protocol.set_writer(StdoutWriter(out))
    asyncio.run(serve(ls.protocol, io.BytesIO(data), threading.Event(), None))
    return {m.get("id"): m for m in bodies(out.getvalue()) if "method" not in m}


def test_a_request_before_initialize_is_refused_and_a_notification_dropped():
    opened = {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": "file:///a.ifr", "languageId": "ifr", "version": 1, "text": "a = 1\n"}}}
    answers = exchange(request(7, "textDocument/hover", HOVER) + frame(opened) + INITIALIZE
                       + request(8, "textDocument/hover", HOVER))
    assert answers[7]["error"]["code"] == -32002   # ServerNotInitialized
    assert "capabilities" in answers[1]["result"]
    assert answers[8]["result"] is None
    assert set(answers) == {1, 7, 8}


def test_invalid_params_get_an_invalid_params_reply():
    answers = exchange(INITIALIZE + request(2, "textDocument/hover", {"textDocument": 5})
                       + request(3, "textDocument/hover", HOVER))
    assert answers[2]["error"]["code"] == -32602
    assert "textDocument" in answers[2]["error"]["message"]
    assert answers[3]["result"] is None   # and the next request is answered


def test_a_body_that_is_no_json_gets_a_parse_error():
    answers = exchange(INITIALIZE + frame(b"{not json") + request(2, "textDocument/hover", HOVER))
    assert answers[None]["error"]["code"] == -32700
    assert answers[2]["result"] is None


def test_an_error_in_a_handler_is_an_internal_error_without_a_traceback():
    answers = exchange(INITIALIZE + request(2, "textDocument/definition", HOVER))
    error = answers[2]["error"]
    assert error["code"] == -32603 and "a bug" in error["message"] and "\n" not in error["message"]
    assert not error.get("data") and "Traceback" not in json.dumps(error)


def test_an_overlong_header_line_or_length_skips_that_message_only():
    long_line = b"X-Junk: " + b"a" * (MAX_HEADER_LINE * 4) + b"\r\n"
    hover = request(2, "textDocument/hover", HOVER)
    data = (long_line + b"Content-Length: 2\r\n\r\n{}"                     # a header line too long
            + b"Content-Length: %d\r\n\r\n" % (MAX_MESSAGE_BYTES + 1) + b" " * (MAX_MESSAGE_BYTES + 1)
            + b"Content-Length: 99999999999999999999999\r\n\r\n"            # no length read: nothing skipped
            + b"\r\n" + hover)
    assert bodies(data) == [json.loads(hover.split(b"\r\n\r\n", 1)[1])]
    lying = hover + b"Content-Length: 1000000\r\n\r\n" + hover             # the rest is taken for its body
    assert len(bodies(lying)) == 1


# --- the real server, in its own process ------------------------------------------

class Server:
    """`ifr lsp` in a process: send bytes, read answers, ask its peak memory."""

    def __init__(self, tmp_path):
        self.log = open(tmp_path / "stderr.txt", "wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "ifr.cli", "lsp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log)
        self.answers: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while (body := read_message(self.proc.stdout)) is not None:
            message = json.loads(body)
            if "method" not in message:
                self.answers.put(message)

    def send(self, data: bytes) -> None:
        for i in range(0, len(data), MiB):
            self.proc.stdin.write(data[i:i + MiB])
        self.proc.stdin.flush()

    def answer(self) -> dict:
        return self.answers.get(timeout=60)

    def peak_rss(self) -> int:
        with open(f"/proc/{self.proc.pid}/status", encoding="ascii") as status:
            line = next(line for line in status if line.startswith("VmHWM:"))
        return int(line.split()[1]) * 1024


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the peak memory from /proc")
def test_the_server_reads_within_bounds_stays_responsive_and_ends_at_the_end_of_its_input(tmp_path):
    server = Server(tmp_path)
    try:
        server.send(INITIALIZE)
        assert "capabilities" in server.answer()["result"]
        baseline = server.peak_rss()
        server.send(b"X-Junk: " + b"a" * (128 * MiB) + b"\r\nContent-Length: 2\r\n\r\n{}")
        server.send(request(2, "textDocument/hover", HOVER))
        assert server.answer() == {"jsonrpc": "2.0", "id": 2, "result": None}
        server.send(b"Content-Length: %d\r\n\r\n" % (MAX_MESSAGE_BYTES + 1) + b" " * (MAX_MESSAGE_BYTES + 1))
        server.send(request(3, "textDocument/hover", HOVER))
        assert server.answer()["id"] == 3
        assert server.peak_rss() - baseline < 32 * MiB   # neither the line nor the body was held
        server.send(b"Content-Length: 1000000000000000\r\n\r\n")   # a length no input will reach
        server.proc.stdin.close()
        started = time.monotonic()
        assert server.proc.wait(timeout=30) == 0
        assert time.monotonic() - started < 30
        assert b"Traceback" not in (tmp_path / "stderr.txt").read_bytes()
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
        server.log.close()
