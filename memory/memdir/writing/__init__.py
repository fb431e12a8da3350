r"""The one write path into a memory directory: every mutation memdir makes goes through here.

The CLI (``memdir tool``), the API memory tool (:mod:`memdir.writing.memory_tool`), the extraction
agent and the language server all call :class:`MemoryWriter`, so the rules of spec sections 8 and 10
hold for all of them:

* **Confined.** A path names something inside the memory dir or is refused with an
  :class:`UnsafePathError` before anything is touched: ``..`` segments, absolute paths elsewhere,
  percent-encodings (``%2e%2e``, double-encoded ``%252e``), backslashes, NUL and control
  characters, Unicode look-alikes of ``/``, ``\`` and ``.`` (fullwidth solidus, division slash,
  one-dot leader ...), names starting with ``.`` (reserved for memdir's temp files), names too
  long for a temp file to sit beside them, and symlinks that resolve outside the dir (decided by
  :func:`memdir.containment.relative_inside` on the resolved path, when the operation starts under
  the lock). At the moment of writing, the folder is reached from the memory dir one name at a time
  without following a symlink, and the write acts relative to it (:data:`FD_WALK`), so a folder
  swapped for a symlink after the check stops the write. The memory dir itself can never be
  deleted or renamed, MEMORY.md is not deleted or renamed away unless the caller asks for that
  by name (``allow_index``: the memory tool never does), and a folder is deleted only when all
  it holds are memory files (``*.md``) and folders of them. A create or rename adds no name
  that macOS or Windows would take for an existing one's (case and Unicode normalisation
  ignored there), nor a Windows device name, a trailing dot or space, or an invisible
  character (:func:`_check_new_names`).
* **Bounded.** No write produces a file larger than :data:`MAX_EDIT_BYTES` (what memdir loads
  for editing): a memory is a page, not a data set.
* **Atomic.** New content is written to a temp file in the same directory, fsynced and moved into
  place (:func:`write_atomic`), so a reader or a crash sees the old file or the new
  one, never half of either. ``create`` and ``rename`` never replace an existing file: they
  publish with ``link(2)``, which fails with ``EEXIST`` atomically (see :func:`_publish_noreplace`
  for why this and not a check followed by ``os.replace``).
* **Recoverable.** An operation that is killed part way (``kill -9``, a crash, a power cut after
  the fsyncs) is finished by the next writer, whichever face it comes through (CLI, server, MCP,
  hook, extraction). Before touching anything, an operation writes its intent to its journal,
  :data:`JOURNAL_NAME` in the dir's state folder (:func:`dir_state`, outside the memory dir); it
  removes it when done. The next writer to take the lock and find an intent finishes it against
  what is on disk (see :meth:`MemoryWriter.recover`): the temp files it left are removed, a
  publish cut between its two names is completed, a folder made for a file never written is
  removed again, and MEMORY.md gets the entry the operation owed it (created, dropped, renamed
  or refreshed). Temp files are provably stale then: only a lock holder makes them, while its
  intent exists. Every field of a journal passes the containment check before anything is
  done with it (:func:`intent_problem`); one that does not is reported and dropped, never acted
  on. A write whose index update fails (a full disk) raises :class:`IndexNotUpdatedError` after
  its file operation and leaves its journal, so the next writer makes the update it owes.
* **Serialised.** Each operation runs under an exclusive file lock, :data:`LOCK_NAME` in the
  dir's state folder, so two editors, agents or processes doing read-modify-write cannot
  interleave. memdir's bookkeeping lives in the per-user state dir (``$XDG_STATE_HOME/memdir``),
  keyed by the dir's real path (:func:`memdir.agent.paths.dir_state_path`), never in the memory dir:
  a repository cannot plant a lock or a journal, and nothing of memdir's enters ``git status``.
  The files older versions kept in the dir (:data:`LEGACY_FILENAMES`) are never opened; lint
  reports them (MEM122).
* **Indexed.** In index mode (``recall_mode = "index"``) creating or renaming a topic file adds or
  relinks its ``MEMORY.md`` line, rendered with :func:`memdir.agent.index.fit_entry` under the
  line limit, deleting removes it; in prefetch mode the index is left alone. memdir rewrites only
  its own lines (:func:`memdir.agent.index.is_generated`: what it writes for the frontmatter
  before the edit), and drops its own line for a file another entry links too (the agent's words
  win). Every result says what it did to the index
  (:class:`memdir.writing.results.IndexOutcome`).
* **Stamped.** A write to a topic file that already has frontmatter sets its ``modified`` field to
  the current UTC time with milliseconds, where the agent keeps it (``metadata.modified`` in a
  file the agent wrote), as the agent does.

Errors are :class:`WriteError` subclasses whose message a user can read; the structured fields
let the memory tool rebuild the API's exact error strings.
"""
