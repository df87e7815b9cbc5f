"""The wire: reading messages from stdin within bounds, and the JSON-RPC rules pygls leaves open.

A message is headers, each a line, a blank line, then a body of
``Content-Length`` bytes.  The reader holds at most one header line of
MAX_HEADER_LINE bytes and one body of MAX_MESSAGE_BYTES (room for a buffer of
MAX_SOURCE_BYTES, escaped as JSON):

- a header line longer than that is discarded as it is read, and the message
  it belongs to is skipped;
- a message whose ``Content-Length`` is over the limit (or is no number) is
  skipped: its body is read and thrown away a chunk at a time, so memory
  stays bounded, and the message after it is read as usual.  When the length
  was a lie the stream cannot be resynchronised: the reader takes the next
  messages' bytes for that body until the editor closes the pipe, and then
  the server ends as at any end of its input.

Each skipped message is logged on stderr.  Then, as JSON-RPC 2.0 and LSP 3.17
say: a body that is no JSON is answered with -32700 (ParseError); a request
whose params do not fit its method, with -32602 (InvalidParams) naming what is
wrong; a request before ``initialize``, with -32002 (ServerNotInitialized),
and a notification then is dropped; an error in a handler is -32603
(InternalError) with a one-line message, its traceback going to stderr only.
"""
from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, BinaryIO

import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcParseError, JsonRpcServerNotInitialized
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import RPCRequest

from ifr.lsp.documents import Documents
from ifr.syntax.sources import MAX_SOURCE_BYTES

logger = logging.getLogger(__name__)

MAX_HEADER_LINE = 8 * 1024
# A buffer at its limit, each byte escaped as JSON may escape it (\u0000: 6 bytes), and the rest of a message.
MAX_MESSAGE_BYTES = 6 * MAX_SOURCE_BYTES + 1024 * 1024
_CHUNK = 64 * 1024


def read_message(stream: BinaryIO) -> bytes | None:
    """The body of the next message that fits the bounds; None at the end of the stream."""
    while True:
        headers = _read_headers(stream)
        if headers is None:
            return None
        length, problem = headers
        if problem is None and length is None:
            continue   # a blank line between messages
        if problem is None and length > MAX_MESSAGE_BYTES:
            problem = f"its Content-Length, {length:,}, is over {MAX_MESSAGE_BYTES:,}"
        if problem is not None:
            logger.error("a message is skipped: %s", problem)
            if length and not _discard(stream, length):
                return None
            continue
        body = stream.read(length)
        return body if len(body) == length else None


def _read_headers(stream: BinaryIO) -> tuple[int | None, str | None] | None:
    """(Content-Length, why the message is skipped or None) once the blank line after the
    headers is read; (None, None) for a blank line alone; None at the end of the stream."""
    length, problem, seen = None, None, False
    while True:
        line = stream.readline(MAX_HEADER_LINE + 1)
        if not line:
            return None
        if len(line) > MAX_HEADER_LINE and not line.endswith(b"\n"):
            problem, seen = f"a header line is over {MAX_HEADER_LINE:,} bytes", True
            while line and not line.endswith(b"\n"):   # the rest of the line, a bounded piece at a time
                line = stream.readline(_CHUNK)
            continue
        if not line.strip():
            if seen and length is None and problem is None:
                problem = "it has no Content-Length"
            return length, problem
        seen = True
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            digits = value.strip()
            if digits.isdigit() and len(digits) <= 18:
                length = int(digits)
            else:
                problem = "its Content-Length is no number of bytes"


def _discard(stream: BinaryIO, length: int) -> bool:
    """Read ``length`` bytes and keep none; whether they were all there."""
    while length > 0:
        got = len(stream.read(min(length, _CHUNK)))
        if not got:
            return False
        length -= got
    return True


class IfrProtocol(LanguageServerProtocol):
    """pygls' language server protocol, with the answers JSON-RPC and LSP ask for where pygls gives none."""

    def lsp_initialize(self, params: types.InitializeParams):
        result = yield from super().lsp_initialize(params)
        self._workspace = Documents.like(self._workspace)   # no document is open yet
        return result

    lsp_initialize.method_name = types.INITIALIZE

    @property
    def initialized(self) -> bool:
        """Whether ``initialize`` was received (and so the workspace exists)."""
        return self._workspace is not None

    def handle_message(self, message) -> None:
        if not self.initialized and getattr(message, "method", None) not in (types.INITIALIZE, types.EXIT):
            if isinstance(message, RPCRequest):
                self._send_response(message.id, error=JsonRpcServerNotInitialized(
                    f"{message.method} before initialize: the server is not initialized yet").to_response_error())
            return
        super().handle_message(message)

    def handle_body(self, body: bytes) -> None:
        """Handle one message's body, answering a request that cannot be read with an error."""
        try:
            data = json.loads(body)
        except ValueError as exc:   # not UTF-8, or not JSON
            self._send_response(None, error=JsonRpcParseError(f"the message is not JSON: {exc}").to_response_error())
            return
        try:
            message = self.structure_message(data) if isinstance(data, dict) else data
        except JsonRpcInvalidParams as exc:
            self._refuse(data, exc)
            return
        except Exception as exc:   # cattrs raises more than its validation error on odd params
            self._refuse(data, exc)
            return
        if not hasattr(message, "jsonrpc"):
            logger.error("a message that is no JSON-RPC 2.0 message is dropped")
            return
        self.handle_message(message)

    def _refuse(self, data: dict, exc: Exception) -> None:
        method = data.get("method")
        why = _why(exc)
        if "id" in data and isinstance(method, str):
            self._send_response(data["id"], error=JsonRpcInvalidParams(
                f"invalid params for {method}: {why}").to_response_error())
        else:
            logger.error("a notification %s with invalid params is dropped: %s", method, why)

    def _send_response(self, msg_id, result: Any | None = None, error: types.ResponseError | None = None) -> None:
        if error is not None and isinstance(error.data, dict) and "traceback" in error.data:
            # pygls sends an exception's traceback; the editor gets its one line (stderr has the rest)
            error = types.ResponseError(code=error.code, message=f"internal error in ifr: {error.message}")
        super()._send_response(msg_id, result, error)


def _why(exc: Exception) -> str:
    cause = exc.__cause__ or exc
    if isinstance(cause, cattrs.ClassValidationError):
        return "; ".join(cattrs.transform_error(cause, path="params")[:5])
    return str(cause) or type(cause).__name__


async def serve(protocol: IfrProtocol, stdin: BinaryIO, stop, executor) -> None:
    """Read messages from ``stdin`` (in ``executor``) and hand each to the protocol,
    until the end of the input or ``stop`` is set."""
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        body = await loop.run_in_executor(executor, read_message, stdin)
        if body is None:
            return
        try:
            protocol.handle_body(body)
        except Exception:   # a bug of ours or of pygls: the next message is still read
            logger.exception("the message could not be handled")
