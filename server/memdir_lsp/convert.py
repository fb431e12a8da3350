"""Between ``memdir`` values and LSP types: ranges in the client's encoding, workspace edits.

``memdir`` counts columns in code points; the client counts in its negotiated position encoding
(UTF-16 for VS Code, often UTF-8 for Neovim). Every conversion goes through the lines of the text
the client has: the open buffer when there is one, else the file on disk.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from lsprotocol import types
from memdir.fixes.model import CreateFile, Fix, TextEdit
from memdir.model import Span

from memdir_lsp.protocol import CMD_CREATE_FILE
from memdir_lsp.server import MemoryServer


def location(server: MemoryServer, path: Path, span: Span) -> types.Location:
    return types.Location(
        uri=server.path_to_uri(path), range=server.to_range(span, server.lines_of(path))
    )


def whole_line(server: MemoryServer, path: Path, line: int) -> types.Range:
    lines = server.lines_of(path)
    text = lines[line] if line < len(lines) else ""
    return server.to_range(Span.on_line(line, 0, len(text)), lines)


def _text_edits(
    server: MemoryServer, edits: Iterable[TextEdit]
) -> dict[Path, list[types.TextEdit]]:
    grouped: dict[Path, list[types.TextEdit]] = defaultdict(list)
    lines_cache: dict[Path, list[str]] = {}
    for edit in edits:
        lines = lines_cache.get(edit.path)
        if lines is None:
            lines = lines_cache[edit.path] = server.lines_of(edit.path)
        grouped[edit.path].append(
            types.TextEdit(range=server.to_range(edit.span, lines), new_text=edit.new_text)
        )
    return grouped


def workspace_edit(
    server: MemoryServer, fix: Fix
) -> tuple[types.WorkspaceEdit | None, types.Command | None]:
    """The fix as a WorkspaceEdit, plus a command for what the client cannot do in an edit.

    With ``create`` among the client's resource operations, new files are CreateFile operations
    (``ignoreIfExists``: never overwrite) followed by an edit inserting their text. Without it the
    edit carries only the text changes and a ``memdir.createFile`` command creates each new file
    afterwards (a code action's edit runs before its command); that command too refuses to
    overwrite. Deleted files (a merged memory) are DeleteFile operations after the edits; a
    client that cannot delete gets no edit at all (the action is then not offered).
    """
    text_edits = _text_edits(server, fix.edits)
    creates = [c for c in fix.creates if not c.path.exists()]
    operations = server.resource_operations()
    if fix.deletes and "delete" not in operations:
        return None, None  # half a merge (the text added, the copy kept) is no fix
    if "create" in operations or fix.deletes:
        changes: list[
            types.TextDocumentEdit | types.CreateFile | types.RenameFile | types.DeleteFile
        ] = []
        for creation in creates:
            uri = server.path_to_uri(creation.path)
            changes.append(
                types.CreateFile(
                    uri=uri,
                    options=types.CreateFileOptions(overwrite=False, ignore_if_exists=True),
                )
            )
            changes.append(
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=uri, version=None
                    ),
                    edits=[
                        types.TextEdit(
                            range=types.Range(
                                start=types.Position(line=0, character=0),
                                end=types.Position(line=0, character=0),
                            ),
                            new_text=creation.text,
                        )
                    ],
                )
            )
        for path, edits in text_edits.items():
            changes.append(
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=server.path_to_uri(path), version=server.open_version(path)
                    ),
                    edits=list(edits),
                )
            )
        for deletion in fix.deletes:
            changes.append(
                types.DeleteFile(
                    uri=server.path_to_uri(deletion.path),
                    options=types.DeleteFileOptions(recursive=False, ignore_if_not_exists=True),
                )
            )
        return (types.WorkspaceEdit(document_changes=changes) if changes else None), None
    edit = (
        types.WorkspaceEdit(changes={server.path_to_uri(p): list(e) for p, e in text_edits.items()})
        if text_edits
        else None
    )
    return edit, create_command(server, creates)


def create_command(server: MemoryServer, creates: list[CreateFile]) -> types.Command | None:
    if not creates:
        return None
    return types.Command(
        title="Create " + ", ".join(c.path.name for c in creates),
        command=CMD_CREATE_FILE,
        arguments=[[server.path_to_uri(c.path), c.text] for c in creates],
    )


def changes_edit(server: MemoryServer, edits: Iterable[TextEdit]) -> types.WorkspaceEdit | None:
    grouped = _text_edits(server, edits)
    if not grouped:
        return None
    return types.WorkspaceEdit(changes={server.path_to_uri(p): list(e) for p, e in grouped.items()})
