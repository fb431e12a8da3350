"""The background extraction agent: turns a finished conversation into memories (spec section 8).

After a turn, when the recent messages show no memory write, Claude Code forks an agent that
reads the conversation and saves what is worth keeping. :func:`run_extraction` does the same for
any transcript, with the real ``anthropic`` SDK (``AsyncAnthropic``, imported only when a run
starts):

* **Skip** when the last turn(s) already wrote memory (Write/Edit/MultiEdit into the memory dir,
  or a mutating memory-tool call): the main agent has done it, and a second writer would
  duplicate it. No API call is made.
* **One at a time** per memory dir: a non-blocking lock (``extract.lock`` in the dir's state
  folder, :func:`memdir.writing.journal.dir_state`, outside the memory dir; held across processes)
  is taken for the whole run; a second extraction reports ``busy``.
* **Tools**: the API memory tool over the memory dir
  (:class:`memdir.writing.memory_tool.MemdirMemoryTool`, so every write is confined, atomic, locked
  and keeps MEMORY.md in step; only ``*.md`` files) and read-only ``read``, ``grep`` and ``glob``
  confined to the project root, each with output caps. Nothing else: no shell, no MCP, no
  sub-agents. As in Claude Code, the prompt keeps the agent to the conversation: the project tools
  are there, but not for checking what was said.
* **At most 5 turns** (:data:`memdir.constants.EXTRACTION_MAX_TURNS`): the tools of the last turn
  run, then the loop stops without another model call, as the agent's turn limit does.
* **Prompt**: the system prompt carries the four-type taxonomy, the "do not save" list, the rule
  to read existing memories before writing (and to delete wrong ones), the frontmatter layout
  Claude Code writes (``metadata:`` / ``  type:``), and the current manifest; the user message
  carries the rendered conversation.
* **Dry run** works on a copy of the memory dir, so the model sees its own writes while the real
  dir is never touched; the result shows the writes it would make, with diffs. The copy holds
  whatever files the dir holds (secrets included; a FIFO or a device is never opened): it is
  private (folders 0700, files 0600, in a 0700 temporary folder), removed when the run ends
  however it ends, and a copy left by a killed run is removed by the next dry run.
* **Errors** from the API (429, 5xx, connection) end the run with ``status="error"`` and the
  message recorded, never a traceback; writes made before the error are listed. An endpoint
  may echo the request's key, and the model may quote one it read: every text of the result
  (tool-call inputs and diffs included), progress and logs passes
  :func:`memdir.secrets.redact` (the credentials in use, and anything that looks like one).

The language server calls :func:`run_extraction` directly (it is async and reports progress
through a callback); the CLI uses :func:`extract`.
"""
