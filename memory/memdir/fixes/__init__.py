"""Fixes: one model of an edit to a memory directory, one planner, one way to apply them.

* :mod:`~memdir.fixes.model`: :class:`TextEdit`, :class:`CreateFile` and :class:`Fix`, plain data;
* :mod:`~memdir.fixes.text`: names, YAML scalars and drafts (titles, descriptions, types) for the
  text a fix writes;
* :mod:`~memdir.fixes.plan`: every fix memdir offers (lint's, the editor's quick fixes, moves,
  renames), as pure functions of the parsed files;
* :mod:`~memdir.fixes.apply`: edits applied to text, and the one overlap check;
* :mod:`~memdir.fixes.dates` and :mod:`~memdir.fixes.citations`: the freshness rules' fixes
  (MEM119, MEM120; MEM117's renamed path), built beside the facts only those rules know.

Lint attaches the planner's fix to its diagnostic; the language server only converts fixes into
WorkspaceEdits; ``memdir lint --fix`` writes them through
:class:`memdir.writing.writer.MemoryWriter`. Submodules are imported on use: the edit types are
needed by every lint run, the planners only when something has a fix.
"""
