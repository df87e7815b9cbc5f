"""The ifr language server (`ifr lsp`): diagnostics, hover, inlay hints,
navigation, completion and formatting for .ifr files, over stdio.

    analysis      the only door to the engine: a buffer -> a Result (plain data)
    occurrences   where each name is defined and used (used by analysis)
    positions     spans <-> LSP ranges, in the position encoding agreed with the client
    navigation    definition, references, rename, outline
    workspace_files  the .ifr files under the workspace folders (rename and references reach closed ones)
    presentation  diagnostics, hover, inlay hints, completion, quick fixes
    lenses        code lenses that run explain, table and check
    extras        document highlight, folding ranges, links on `use`, workspace symbols, signature help
    documents     the open documents, their lines split as the editor splits them
    protocol      reading messages within bounds; the JSON-RPC errors pygls leaves out
    worker        the warm analysis processes, stopped cooperatively
    server        documents, scheduling off the event loop, the handlers
"""
from __future__ import annotations


def main(args=None) -> int:
    """`ifr lsp`: serve over stdio."""
    try:
        from ifr.lsp.server import main as serve
    except ImportError as exc:
        from ifr.errors import IfrError
        raise IfrError("missing-dependency", f"`ifr lsp` needs pygls and lsprotocol ({exc})", None,
                       hint="pip install 'ifr[lsp]'") from None
    return serve()
