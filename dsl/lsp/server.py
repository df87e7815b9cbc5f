"""The language server: documents, scheduling of analyses, and the LSP handlers.

Only documents the editor opened are analysed and have their diagnostics
pushed (the closed files that read one are reported to a `workspace/diagnostic`
pull: :mod:`ifr.lsp.closed_importers`), and only those of at most
MAX_SOURCE_BYTES (a larger one gets one `too-large` error); a request about a
document that is not open gets an empty answer (null, or an empty list), and
nothing is read from its URI.  The messages themselves are read by
:mod:`ifr.lsp.protocol`, within bounds.

Analyses run in one warm worker process (the engine keeps shared parser
state, so one owner runs it; :mod:`ifr.lsp.worker` stops an analysis of an old
text that runs long, cooperatively, and keeps a warm reserve), after a short
debounce; a result for a version that has since changed is still published
(with its version: it is newer than what the editor shows), and the latest
version is always analysed (a stop that hits it is retried).  Requests wait for the analysis of the latest
version, so an answer never describes text the editor no longer shows.
"""
from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from ifr import __version__
from ifr.lsp import closed_importers, extras, lenses, navigation, positions, presentation, workspace_files
from ifr.lsp.analysis import Result, too_large
from ifr.lsp.documents import SYNC_KIND, Document, utf8_size_over_limit
from ifr.lsp.positions import Lines
from ifr.lsp.protocol import IfrProtocol, serve
from ifr.lsp.worker import AnalysisWorker, Stopped

logger = logging.getLogger(__name__)

DEBOUNCE_SECONDS = 0.02
REFRESH_SECONDS = 0.05   # refresh requests wait this long, to be sent once for a burst of re-analyses
# A request waits this long for the analysis of the latest text, then answers from the one before.
WAIT_SECONDS = 2.0


@dataclass
class _Document:
    version: int = 0
    task: asyncio.Task | None = None
    result: Result | None = None
    scope_result: Result | None = None    # the latest result in which the file's names resolved
    too_large: bool = False                # over MAX_SOURCE_BYTES: not analysed, not a buffer for others


class IfrServer(LanguageServer):
    def __init__(self):
        super().__init__("ifr", __version__, text_document_sync_kind=SYNC_KIND, protocol_cls=IfrProtocol)
        self.documents: dict[str, _Document] = {}
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ifr-analysis")  # waits on the process
        self.analysis: AnalysisWorker | None = None
        self.running: tuple[str, int] | None = None   # (uri, version) being analysed
        self._refresh_pending = False

    def start_io(self, stdin=None, stdout=None) -> None:
        """Serve over stdio until the input ends or the client says exit (pygls' loop, with a bounded reader)."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(serve(self.protocol, stdin or sys.stdin.buffer, self._stop_event, self.thread_pool))
        except BrokenPipeError:
            logger.error("the connection to the editor is lost")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    @property
    def encoding(self) -> str:
        """The position encoding agreed with the client at ``initialize`` (UTF-16 before it)."""
        if not self.protocol.initialized:
            return positions.UTF16
        encoding = self.workspace.position_encoding
        return str(getattr(encoding, "value", encoding) or positions.UTF16)

    def open_document(self, uri: str) -> Document | None:
        """The text the editor opened at ``uri``; None before ``initialize`` and for a document not open."""
        if not self.protocol.initialized:
            return None
        return self.workspace.open_document(uri)

    # --- scheduling
    def schedule(self, uri: str, debounce: float = DEBOUNCE_SECONDS, cascade: bool = True) -> None:
        """Analyse a document soon; with ``cascade``, then the open documents that import it."""
        document = self.open_document(uri)
        if not uri.startswith("file:") or document is None:
            return  # an unsaved, untitled buffer has no folder to find its modules in; or it is not open
        doc = self.documents.setdefault(uri, _Document())
        doc.version += 1
        size = utf8_size_over_limit(document.source)
        doc.too_large = size is not None
        if doc.too_large:
            doc.task, doc.result, doc.scope_result = None, too_large(to_fs_path(uri), size), None
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=uri, diagnostics=presentation.diagnostics(doc.result, self.encoding), version=document.version))
            return
        doc.task = asyncio.ensure_future(self._analyse(uri, doc.version, debounce, cascade))

    async def _analyse(self, uri: str, version: int, debounce: float, cascade: bool) -> None:
        doc = self.documents[uri]
        if debounce:
            await asyncio.sleep(debounce)
        if doc.version != version or uri not in self.documents:
            return  # a newer change is scheduled, or the document was closed
        document = self.open_document(uri)
        if document is None:
            return
        text_version = document.version
        buffers = {to_fs_path(u): self.open_document(u).source for u in self._buffers()}
        published = []

        def publish(ticket: int, found: Result) -> None:
            """The diagnostics, as soon as they arrive (the rest of the result follows).  A text typed
            over since is still newer than what the editor shows: its diagnostics are published with
            its version (while someone types faster than analyses run, every result would otherwise be
            dropped and none arrive until the typing stops), and the rest of its analysis is skipped;
            requests keep waiting for the newer text's analysis, which follows."""
            if uri not in self.documents or self.documents[uri] is not doc:
                return   # closed meanwhile
            published.append(ticket)
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=uri, diagnostics=presentation.diagnostics(found, self.encoding),
                version=text_version))
            if doc.version != version:
                self.analysis.finish_early(ticket)

        result = await self._in_worker(uri, version, document.source, buffers, publish)
        if result is None or uri not in self.documents or doc.version != version:
            return  # stopped, superseded (its diagnostics are published), or the document was closed
        doc.result = result
        mid_statement = any(d.code in ("syntax", "unclosed-bracket") for d in result.diagnostics)
        if result.scope and not (mid_statement and doc.scope_result is not None):
            # While a line is half typed, names come from the last text whose lines all parsed
            # (the line being typed defines nothing yet).
            doc.scope_result = result
        if not published:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=uri, diagnostics=presentation.diagnostics(result, self.encoding), version=text_version))
        if not cascade:   # analysed again because a file it reads changed: hints and colours too
            self.refresh_views()
            return
        for other, odoc in list(self.documents.items()):  # files that import this one see the new text
            if other != uri and odoc.result is not None and result.path in odoc.result.files:
                self.schedule(other, cascade=False)

    async def _in_worker(self, uri: str, version: int, text: str, buffers: dict[str, str],
                         on_diagnostics=None) -> Result | None:
        """The analysis in the worker process; None if it was superseded or stopped.  While it
        waits behind an analysis of an outdated text that runs long, that one is stopped.
        ``on_diagnostics(ticket, diagnostics)`` is called in the event loop as soon as they arrive."""
        doc = self.documents[uri]
        loop = asyncio.get_running_loop()
        early = None if on_diagnostics is None else (
            lambda ticket, found: loop.call_soon_threadsafe(on_diagnostics, ticket, found))

        def run() -> Result | None:
            for _attempt in range(3):   # a text that kills its process each time is not tried forever
                if doc.version != version or uri not in self.documents:
                    return None   # superseded while it waited for the worker
                self.running = (uri, version)
                try:
                    return self.analysis.analyse(to_fs_path(uri), text, buffers, early)
                except Stopped:
                    continue   # a stop meant for the analysis before it, or its process died: the latest
                    # text is always analysed
                finally:
                    self.running = None
            return None

        if self.analysis is None:
            self.analysis = AnalysisWorker()
        pending = loop.run_in_executor(self.worker, run)
        while not pending.done():
            running = self.running
            if running is not None and running != (uri, version) and self._stale(running):
                # an outdated text whose diagnostics are out skips the rest; one still before them is
                # stopped if it runs long
                self.analysis.finish_early() or self.analysis.stop_if_slow()
            await asyncio.wait([pending], timeout=0.1)
        return pending.result()

    def refresh_views(self) -> None:
        """Ask the client to ask again for inlay hints and semantic tokens (all documents: the
        protocol has no finer request), once for a burst of re-analyses, if it can."""
        if self._refresh_pending:
            return
        self._refresh_pending = True

        def send() -> None:
            self._refresh_pending = False
            capabilities = self.protocol.client_capabilities
            if get_capability(capabilities, "workspace.inlay_hint.refresh_support", False):
                self.workspace_inlay_hint_refresh(None)
            if get_capability(capabilities, "workspace.semantic_tokens.refresh_support", False):
                self.workspace_semantic_tokens_refresh(None)

        asyncio.get_running_loop().call_later(REFRESH_SECONDS, send)

    def reanalyse_readers(self, path: str) -> None:
        """Analyse again the open documents that read ``path`` (a file changed on disk or in its buffer)."""
        for other, doc in list(self.documents.items()):
            if doc.result is not None and path in doc.result.files and os.path.abspath(to_fs_path(other)) != path:
                self.schedule(other, cascade=False)

    def folders(self) -> list[str]:
        """The workspace folders' paths (the root's when the client named no folder)."""
        if not self.protocol.initialized:
            return []
        folders = [to_fs_path(f.uri) for f in self.workspace.folders.values()]
        if not folders and self.workspace.root_path:
            folders = [self.workspace.root_path]
        return [f for f in folders if f]

    async def workspace_results(self, result: Result, line: int, column: int) -> list[Result]:
        """The open documents' analyses, and those of the workspace's files not open whose text names
        the symbol at (line, column): a rename or a search for references reaches a closed importer."""
        results = await self.results()
        symbol = navigation.symbol_at(result, line, column)
        if symbol is None:
            return results
        opened = {os.path.abspath(to_fs_path(u)) for u in self.documents}
        word = symbol.name.rsplit(".", 1)[-1]
        module = os.path.splitext(os.path.basename(symbol.span.file))[0]   # a file that reads it names it
        closed = [f for f in workspace_files.ifr_files(self.folders()) if _absolute(f) not in opened]
        if module != word:
            named = {f for f, _text in workspace_files.naming(closed, module)}
            closed = [f for f in closed if f in named or _absolute(f) == _absolute(symbol.span.file)]
        buffers = {to_fs_path(u): self.open_document(u).source for u in self._buffers()}
        loop = asyncio.get_running_loop()
        if self.analysis is None:
            self.analysis = AnalysisWorker()
        for path, text in workspace_files.naming(closed, word):
            try:
                results.append(await loop.run_in_executor(
                    self.worker, lambda p=path, t=text: self.analysis.analyse(p, t, buffers)))
            except Stopped:
                continue
        return results

    def _buffers(self) -> list[str]:
        """The open documents other analyses read from their buffers (not one too large to analyse)."""
        return [u for u, d in self.documents.items() if not d.too_large and self.open_document(u) is not None]

    def _stale(self, running: tuple[str, int]) -> bool:
        doc = self.documents.get(running[0])
        return doc is None or doc.version != running[1]

    async def current(self, uri: str, wait: float = WAIT_SECONDS) -> Result | None:
        """The analysis of the document's latest version, or, if that takes longer than
        ``wait`` seconds (a slow solve), the latest analysis there is (the first one is always awaited)."""
        doc = self.documents.get(uri)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while doc is not None and doc.task is not None and not doc.task.done():
            remaining = deadline - loop.time()
            if remaining <= 0 and doc.result is not None:
                break
            if remaining <= 0:
                remaining = None
            await asyncio.wait([doc.task], timeout=remaining)
        return doc.result if doc is not None else None

    async def results(self) -> list[Result]:
        return [r for r in [await self.current(u) for u in list(self.documents)] if r is not None]


server = IfrServer()


def _cursor(ls: IfrServer, result: Result, position: types.Position) -> tuple[int, int]:
    return Lines(result.texts, ls.encoding).column(result.path, position)


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: IfrServer, params: types.DidOpenTextDocumentParams):
    ls.schedule(params.text_document.uri, debounce=0)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: IfrServer, params: types.DidChangeTextDocumentParams):
    ls.schedule(params.text_document.uri)


@server.feature(types.INITIALIZED)
async def initialized(ls: IfrServer, params: types.InitializedParams):
    """Watch the workspace's .ifr files, if the client can register watchers."""
    if get_capability(ls.protocol.client_capabilities, "workspace.did_change_watched_files.dynamic_registration",
                      False):
        try:
            await ls.client_register_capability_async(types.RegistrationParams(registrations=[types.Registration(
                id="ifr-watch", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(
                    watchers=[types.FileSystemWatcher(glob_pattern="**/*.ifr")]))]))
        except Exception as exc:   # a client that refuses: files changed on disk are seen on the next edit
            logger.warning("the client did not register file watchers: %s", exc)


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: IfrServer, params: types.DidChangeWatchedFilesParams):
    """A file changed on disk: the open documents that read it are analysed again (a document open
    in the editor is read from its buffer, so its own change on disk is not its text); a file created
    or deleted may be a module a `use` names, so then every open document is."""
    created_or_deleted = False
    for change in params.changes:
        if not change.uri.startswith("file:"):
            continue
        if change.type != types.FileChangeType.Changed:
            created_or_deleted = True
        ls.reanalyse_readers(os.path.abspath(to_fs_path(change.uri)))
    if created_or_deleted:
        for uri in list(ls.documents):
            ls.schedule(uri, cascade=False)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: IfrServer, params: types.DidCloseTextDocumentParams):
    uri = params.text_document.uri
    closed = ls.documents.pop(uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
    if closed is not None and closed.result is not None:  # files that use it read it from disk again
        for other, doc in list(ls.documents.items()):
            if doc.result is not None and closed.result.path in doc.result.files:
                ls.schedule(other, cascade=False)


@server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, types.DiagnosticOptions(
    identifier="ifr", inter_file_dependencies=True, workspace_diagnostics=True))
def document_diagnostic(ls: IfrServer, params: types.DocumentDiagnosticParams):
    """An open document's diagnostics are pushed as it is analysed: its pull is answered empty, so a
    client that does both shows them once.  (The pull is offered for `workspace/diagnostic`.)"""
    return types.RelatedFullDocumentDiagnosticReport(items=[])


@server.feature(types.WORKSPACE_DIAGNOSTIC)
async def workspace_diagnostic(ls: IfrServer, params: types.WorkspaceDiagnosticParams):
    """The diagnostics of the closed files that read an open document (see ifr.lsp.closed_importers)."""
    await ls.results()   # the open documents' latest texts are analysed first
    open_paths = {_absolute(to_fs_path(u)) for u in ls.documents}
    buffers = {to_fs_path(u): ls.open_document(u).source for u in ls._buffers()}
    previous = {p.uri: p.value for p in params.previous_result_ids or []}
    loop = asyncio.get_running_loop()
    if ls.analysis is None:
        ls.analysis = AnalysisWorker()
    items: list = []
    for path, text in closed_importers.candidates(ls.folders(), open_paths):
        uri, result_id = from_fs_path(path), closed_importers.result_id(text, buffers)
        if previous.get(uri) == result_id:
            items.append(types.WorkspaceUnchangedDocumentDiagnosticReport(uri=uri, result_id=result_id, version=None))
            continue
        try:
            result = await loop.run_in_executor(ls.worker, lambda p=path, t=text: ls.analysis.analyse(p, t, buffers))
        except Stopped:
            continue
        if result is None or not closed_importers.reads_open(result.files, path, open_paths):
            continue
        items.append(types.WorkspaceFullDocumentDiagnosticReport(
            uri=uri, items=presentation.diagnostics(result, ls.encoding), result_id=result_id, version=None))
    return types.WorkspaceDiagnosticReport(items=items)


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: IfrServer, params: types.HoverParams):
    result = await ls.current(params.text_document.uri)
    if result is None:
        return None
    return presentation.hover(result, *_cursor(ls, result, params.position), ls.encoding)


@server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
async def inlay_hint(ls: IfrServer, params: types.InlayHintParams):
    result = await ls.current(params.text_document.uri)
    if result is None:
        return []
    return presentation.inlay_hints(result, params.range, ls.encoding)


@server.feature(types.TEXT_DOCUMENT_DEFINITION)
async def definition(ls: IfrServer, params: types.DefinitionParams):
    result = await ls.current(params.text_document.uri)
    return navigation.definition(result, *_cursor(ls, result, params.position), ls.encoding) if result else None


@server.feature(types.TEXT_DOCUMENT_REFERENCES)
async def references(ls: IfrServer, params: types.ReferenceParams):
    result = await ls.current(params.text_document.uri)
    if result is None:
        return []
    line, column = _cursor(ls, result, params.position)
    return navigation.references(result, await ls.workspace_results(result, line, column), line, column,
                                 params.context.include_declaration, ls.encoding)


def _absolute(path: str) -> str:
    return os.path.normpath(os.path.abspath(path))


def _open_files(ls: IfrServer) -> set[str]:
    return {os.path.abspath(to_fs_path(u)) for u in ls.documents}


def _editable(ls: IfrServer) -> set[str]:
    """The files a rename may edit: the open ones and every .ifr under the workspace folders."""
    return _open_files(ls) | {_absolute(f) for f in workspace_files.ifr_files(ls.folders())}


@server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
async def prepare_rename(ls: IfrServer, params: types.PrepareRenameParams):
    result = await ls.current(params.text_document.uri)
    if result is None:
        return None
    answer = navigation.prepare_rename(result, *_cursor(ls, result, params.position), _editable(ls),
                                       ls.encoding)
    if isinstance(answer, str):
        raise JsonRpcException(answer, code=int(types.LSPErrorCodes.RequestFailed))
    return answer


@server.feature(types.TEXT_DOCUMENT_RENAME)
async def rename(ls: IfrServer, params: types.RenameParams):
    """Rename across the workspace: every file that uses the name is edited, open or not."""
    result = await ls.current(params.text_document.uri)
    if result is None:
        return None
    line, column = _cursor(ls, result, params.position)
    answer = navigation.rename(result, await ls.workspace_results(result, line, column), line, column,
                               params.new_name, _editable(ls), ls.encoding)
    if isinstance(answer, str):
        raise JsonRpcException(answer, code=int(types.LSPErrorCodes.RequestFailed))
    return answer


@server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=[".", "/", "*"]))
async def completion(ls: IfrServer, params: types.CompletionParams):
    uri = params.text_document.uri
    result = await ls.current(uri)
    if result is None:
        return []
    doc, document = ls.documents.get(uri), ls.open_document(uri)
    if doc is None or document is None:
        return []   # closed while its analysis was awaited
    lines = document.lines
    line = lines[params.position.line] if params.position.line < len(lines) else ""
    prefix = positions.prefix(line, params.position.character, ls.encoding)
    return types.CompletionList(is_incomplete=False,
                                items=presentation.completion(result, doc.scope_result or result, prefix,
                                                              params.position.line, ls.encoding))


@server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, types.SemanticTokensLegend(
    token_types=presentation.TOKEN_TYPES, token_modifiers=presentation.TOKEN_MODIFIERS))
async def semantic_tokens(ls: IfrServer, params: types.SemanticTokensParams):
    result = await ls.current(params.text_document.uri)
    return presentation.semantic_tokens(result, ls.encoding) if result else types.SemanticTokens(data=[])


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
async def document_symbol(ls: IfrServer, params: types.DocumentSymbolParams):
    result = await ls.current(params.text_document.uri)
    return navigation.document_symbols(result, ls.encoding) if result else []


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
async def document_highlight(ls: IfrServer, params: types.DocumentHighlightParams):
    result = await ls.current(params.text_document.uri)
    return extras.highlights(result, *_cursor(ls, result, params.position), ls.encoding) if result else []


@server.feature(types.TEXT_DOCUMENT_FOLDING_RANGE)
async def folding_range(ls: IfrServer, params: types.FoldingRangeParams):
    result = await ls.current(params.text_document.uri)
    return extras.folding_ranges(result) if result else []


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK)
async def document_link(ls: IfrServer, params: types.DocumentLinkParams):
    result = await ls.current(params.text_document.uri)
    return extras.document_links(result, ls.encoding) if result else []


@server.feature(types.WORKSPACE_SYMBOL)
async def workspace_symbol(ls: IfrServer, params: types.WorkspaceSymbolParams):
    return extras.workspace_symbols(await ls.results(), params.query, ls.encoding)


@server.feature(types.TEXT_DOCUMENT_SIGNATURE_HELP, types.SignatureHelpOptions(trigger_characters=["(", ","]))
async def signature_help(ls: IfrServer, params: types.SignatureHelpParams):
    uri = params.text_document.uri
    result = await ls.current(uri)
    doc, document = ls.documents.get(uri), ls.open_document(uri)
    if result is None or doc is None or document is None:
        return None
    lines = document.lines
    line = lines[params.position.line] if params.position.line < len(lines) else ""
    return extras.signature_help(doc.scope_result or result, positions.prefix(line, params.position.character,
                                                                              ls.encoding))


@server.feature(types.TEXT_DOCUMENT_CODE_LENS)
async def code_lens(ls: IfrServer, params: types.CodeLensParams):
    result = await ls.current(params.text_document.uri)
    return lenses.code_lenses(result, ls.encoding) if result else []


async def _run_lens(ls: IfrServer, command: str, arguments) -> str:
    said = await asyncio.get_running_loop().run_in_executor(None, lenses.run, command, list(arguments or []))
    ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=said))
    return said


@server.command("ifr.explain")
async def explain_command(ls: IfrServer, *arguments):
    return await _run_lens(ls, "ifr.explain", arguments)


@server.command("ifr.table")
async def table_command(ls: IfrServer, *arguments):
    return await _run_lens(ls, "ifr.table", arguments)


@server.command("ifr.check")
async def check_command(ls: IfrServer, *arguments):
    return await _run_lens(ls, "ifr.check", arguments)


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
def code_action(ls: IfrServer, params: types.CodeActionParams):
    return presentation.quick_fixes(params.text_document.uri, params)


@server.feature(types.TEXT_DOCUMENT_FORMATTING)
def formatting(ls: IfrServer, params: types.DocumentFormattingParams):
    from ifr.syntax.fmt import format_text
    uri = params.text_document.uri
    doc = ls.open_document(uri)
    if doc is None or utf8_size_over_limit(doc.source) is not None:
        return []   # nothing to edit: not open, or too large to read as a model
    formatted = format_text(doc.source)
    if formatted == doc.source:
        return []
    end = types.Position(line=len(doc.lines), character=0)
    return [types.TextEdit(range=types.Range(start=types.Position(line=0, character=0), end=end),
                           new_text=formatted)]


def main() -> int:
    """Serve over stdio until the client says exit."""
    server.analysis = AnalysisWorker()   # it starts while the client says hello
    server.start_io()
    return 0
