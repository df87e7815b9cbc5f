"""A test client for `ifr lsp`: open, change and ask, over stdio."""
from __future__ import annotations

import sys
from pathlib import Path

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

# The standard library the server reads: the installed package's (in site-packages
# when ifr is installed, the repository's stdlib/ when it is installed editable).
import ifr.stdlib as _stdlib  # noqa: E402
from ifr.syntax.lines import split_lines

STDLIB = Path(_stdlib.__file__).resolve().parent
ROOT = Path(__file__).resolve().parent.parent
SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "ifr.cli", "lsp"])


async def start(client: LanguageClient) -> None:
    for method in (types.CLIENT_REGISTER_CAPABILITY, types.WORKSPACE_INLAY_HINT_REFRESH,
                   types.WORKSPACE_SEMANTIC_TOKENS_REFRESH):
        # the capabilities below say the client registers file watchers and refreshes when asked: it does
        if method not in client.protocol.fm.features:
            client.feature(method)(lambda _params: None)
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=ROOT.as_uri()))


def uri_of(path: Path) -> str:
    return path.resolve().as_uri()


def doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


def open_file(client: LanguageClient, path: Path, text: str | None = None) -> str:
    uri = uri_of(path)
    text = path.read_text(encoding="utf-8") if text is None else text
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="ifr", version=1, text=text)))
    return uri


_versions: dict[str, int] = {}


def replace_text(client: LanguageClient, uri: str, text: str) -> None:
    _versions[uri] = _versions.get(uri, 1) + 1
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=_versions[uri]),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


def close(client: LanguageClient, uri: str) -> None:
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=doc(uri)))


async def diagnostics(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    """The diagnostics of the document's latest text: a request waits for its analysis,
    and the server publishes before it answers."""
    await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=doc(uri)))
    return sorted(client.diagnostics.get(uri, []), key=lambda d: (d.range.start.line, d.range.start.character))


async def hover(client: LanguageClient, uri: str, line: int, character: int) -> str | None:
    h = await client.text_document_hover_async(types.HoverParams(
        text_document=doc(uri), position=types.Position(line=line, character=character)))
    return h.contents.value if h is not None else None


async def definition(client: LanguageClient, uri: str, line: int, character: int):
    return await client.text_document_definition_async(types.DefinitionParams(
        text_document=doc(uri), position=types.Position(line=line, character=character)))


async def completion_labels(client: LanguageClient, uri: str, line: int, character: int) -> list[str]:
    answer = await client.text_document_completion_async(types.CompletionParams(
        text_document=doc(uri), position=types.Position(line=line, character=character)))
    items = answer.items if isinstance(answer, types.CompletionList) else answer or []
    return [i.label for i in items]


async def inlay_hints(client: LanguageClient, uri: str, lines: int) -> list[types.InlayHint]:
    return await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=doc(uri), range=types.Range(start=types.Position(line=0, character=0),
                                                   end=types.Position(line=lines, character=0)))) or []


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP text edits (ASCII columns) to a text, last first, its lines split as an editor splits them."""
    lines = split_lines(text, keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def offset(p: types.Position) -> int:
        return offsets[p.line] + p.character

    for e in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end):]
    return text
