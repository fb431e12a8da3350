"""The project a memory dir belongs to: its files, their renames, and the words the memories cite.

The citation rules (MEM117, MEM118) check a memory's paths and identifiers against this. Where the
project is a git repository the file list is git's own (``git ls-files``: tracked and untracked
files, the project's ``.gitignore`` respected by git itself) and renames and deletions come from
git's rename detection over about the last :data:`MAX_HISTORY_COMMITS` commits (older renames are
not named: a path gone that long ago is reported as not existing, when it is reported at all);
elsewhere a bounded walk lists the files. Nothing outside the project root is read: symlinks
are never followed, and a file read here is capped at :data:`MAX_FILE_BYTES`.

Words are looked up only for the words the memories cite: :class:`Project` keeps, for each word
asked about, the set of files that contain it (its postings), filled for new words in one pass
over the project's files by the system's ``grep -F -w`` (one automaton for all the words, run
on git's file list in a few parallel chunks), or by reading the files here when there is no
``grep``. One file changing (:meth:`Project.update_file`) re-reads that file alone and updates
the postings; its answer (:class:`Changed`) names the words and paths whose answer changed, so a
language server re-checks only the memories whose check asked about one of them
(:meth:`Project.recording`).
"""
