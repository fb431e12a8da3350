"""git without side effects: the one place memdir builds and runs a git command.

A project is untrusted input: a cloned or unpacked repository brings its own ``.git/config``,
and git runs commands named there (``core.fsmonitor`` on every command that reads the index; a
partial clone's lazy fetch runs the transport of the remote it names: ``ext::`` commands,
``core.sshCommand``, ``core.gitProxy``, credential helpers). memdir only reads (which files
there are, what was renamed or deleted, what is ignored), so every git call here runs with what
config can run switched off:

- ``-c`` overrides, which win over every config file: no fsmonitor, no hooks, no pager, no
  editor, no askpass or credential helper, no signature checks, no submodule recursion, no
  transport at all (``protocol.*.allow=never``, so no lazy fetch reaches a remote: on git 2.45+
  ``GIT_NO_LAZY_FETCH`` stops it before that), no bare repository found by accident;
- ``--no-ext-diff --no-textconv`` on the diff-like commands (external diff drivers and textconv
  filters are named by a driver the repository chooses, so no ``-c`` can name them all);
- only the subcommands in :data:`SUBCOMMANDS`, each of which reads no file through a clean or
  smudge filter (``filter.<driver>.*``: also named by the repository);
- a clean environment: no inherited ``GIT_*`` variable (``GIT_DIR``, ``GIT_CONFIG_*``,
  ``GIT_EXTERNAL_DIFF``, ``GIT_SSH_COMMAND`` ... set by a hook or a shell for their own git),
  neither the system's nor the user's git config (memdir's answers must not depend on them,
  and the repository's own config is the one that matters: ``.gitignore`` files and
  ``~/.config/git/ignore`` still count; a repository owned by another user is refused by git,
  as ``safe.directory`` from the user's config is not read), no prompt, no optional locks, and
  no repository found above the project root (``GIT_CEILING_DIRECTORIES``);
- stdin closed (or the given input), output capped at :data:`MAX_OUTPUT_BYTES`, a timeout after
  which git and anything it started are killed.

Callers that must not run git at all (an untrusted workspace) simply do not call it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from io import BufferedReader
from pathlib import Path

#: A git command taking longer than this is killed (its answer is then "no answer").
GIT_TIMEOUT = 30.0
#: More output than this is no answer either: a listing of a few hundred thousand files fits.
MAX_OUTPUT_BYTES = 64 * 1024 * 1024
#: The subcommands memdir runs. None of them reads a work-tree file through a filter driver,
#: runs a diff driver (``--no-ext-diff --no-textconv`` are added where they apply) or writes
#: anything (``GIT_OPTIONAL_LOCKS=0``). A new one is added here only after checking that.
SUBCOMMANDS = frozenset({"rev-parse", "ls-files", "diff", "log", "rev-list", "check-ignore"})
#: Every transport git has built in: a remote named with one of them is never contacted.
_PROTOCOLS = ("ext", "fd", "file", "git", "ssh", "http", "https", "ftp", "ftps")
#: ``-c`` settings: command-line configuration wins over the repository's.
OVERRIDES: tuple[str, ...] = (
    "core.fsmonitor=false",
    f"core.hooksPath={os.devnull}",
    "core.pager=cat",
    "core.editor=:",  # git never starts an editor named ":"
    "sequence.editor=:",
    "core.askPass=",  # empty: no askpass program (not even $SSH_ASKPASS)
    "credential.helper=",  # empty: forget every helper configured before
    "core.sshCommand=false",
    "log.showSignature=false",
    "submodule.recurse=false",
    "safe.bareRepository=explicit",
    "protocol.allow=never",
    *(f"protocol.{name}.allow=never" for name in _PROTOCOLS),
)
_DIFF_OPTIONS = {"diff": ("--no-ext-diff", "--no-textconv"),
                 "log": ("--no-ext-diff", "--no-textconv", "--no-show-signature")}  # fmt: skip
_POSIX = os.name == "posix"


def git_command(root: Path | str, subcommand: str, *args: str) -> list[str]:
    """The argument vector of ``git <subcommand> <args>`` on the repository at ``root``, with
    the overrides above. ValueError for a subcommand not known to be free of side effects."""
    if subcommand not in SUBCOMMANDS:
        raise ValueError(f"memdir does not run `git {subcommand}` (see memdir.git.SUBCOMMANDS)")
    overrides = [arg for setting in OVERRIDES for arg in ("-c", setting)]
    return [
        "git", "--no-pager", *overrides, "-C", os.fspath(root), subcommand,
        *_DIFF_OPTIONS.get(subcommand, ()), *args,
    ]  # fmt: skip


def git_environment(root: Path | str, base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) without any ``GIT_*`` variable, plus
    the variables that keep git from reading other config, prompting, locking, fetching lazily
    or finding a repository above ``root``."""
    inherited = os.environ if base is None else base
    env = {k: v for k, v in inherited.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_ATTR_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_PROTOCOL_FROM_USER="0",
        GIT_NO_LAZY_FETCH="1",
        GIT_CEILING_DIRECTORIES=os.path.dirname(os.path.realpath(root)),
        LC_ALL="C",
    )
    return env


@dataclass(frozen=True, slots=True)
class Completed:
    """A command run to its end: its exit status and (bounded) output."""

    returncode: int
    stdout: bytes
    stderr: bytes = b""


def run_git(
    root: Path | str,
    subcommand: str,
    *args: str,
    input: bytes | None = None,
    timeout: float | None = None,
    max_output: int = MAX_OUTPUT_BYTES,
) -> Completed | None:
    """``git <subcommand> <args>`` on the repository at ``root`` (see the module's doc), run to
    its end; None when git could not start, outlived ``timeout`` (default :data:`GIT_TIMEOUT`)
    or wrote more than ``max_output`` bytes. git itself blocks on a FIFO where it reads a
    ``.gitignore`` or an include: the timeout is what ends that."""
    return run_bounded(
        git_command(root, subcommand, *args),
        env=git_environment(root),
        input=input,
        timeout=GIT_TIMEOUT if timeout is None else timeout,
        max_output=max_output,
    )


#: What is kept of a command's error output (for telling an error from a warning).
_MAX_STDERR_BYTES = 64 * 1024


def run_bounded(
    command: list[str],
    *,
    env: dict[str, str],
    cwd: Path | str | None = None,
    input: bytes | None = None,
    timeout: float,
    max_output: int = MAX_OUTPUT_BYTES,
) -> Completed | None:
    """``command`` run to its end with stdin closed (or fed ``input``), in its own process group;
    None when it could not start, outlived ``timeout`` or wrote more than ``max_output`` bytes:
    then it is killed, with anything it started. memdir's helper processes (git, grep) run
    through here, so none of them can hang a caller or fill its memory."""
    try:
        child = subprocess.Popen(
            command,
            cwd=cwd,
            stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=_POSIX,  # its own process group: a kill reaches its children
            creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
        )
    except (OSError, ValueError):
        return None
    out: list[bytes] = []
    err: list[bytes] = []
    overflow = threading.Event()

    def pump(stream: BufferedReader, into: list[bytes], limit: int, fatal: bool) -> None:
        size = 0
        with stream:  # closed here, by its only reader: the writer then stops on SIGPIPE
            while chunk := stream.read1(256 * 1024):
                size += len(chunk)
                if size > limit:
                    if fatal:
                        overflow.set()
                        return
                    continue  # error output past the cap is read and dropped
                into.append(chunk)

    def feed() -> None:
        assert child.stdin is not None
        try:
            child.stdin.write(input or b"")
            child.stdin.close()
        except OSError:
            pass  # the command stopped reading: its exit status says the rest

    assert child.stdout is not None and child.stderr is not None
    reader = threading.Thread(target=pump, args=(child.stdout, out, max_output, True))
    errors = threading.Thread(target=pump, args=(child.stderr, err, _MAX_STDERR_BYTES, False))
    threads = [reader, errors]
    if input is not None:
        threads.append(threading.Thread(target=feed))
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.daemon = True  # a stuck pipe never holds the interpreter's exit
        thread.start()
    try:
        reader.join(max(0.0, deadline - time.monotonic()))
        if reader.is_alive() or overflow.is_set():
            return None
        returncode = child.wait(max(0.0, deadline - time.monotonic()))
        errors.join(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return None
    finally:
        if child.returncode is None:
            _kill(child)
    return Completed(returncode, b"".join(out), b"".join(err))


def _kill(child: subprocess.Popen[bytes]) -> None:
    try:
        if _POSIX:
            os.killpg(child.pid, signal.SIGKILL)
        else:
            child.kill()
    except OSError:
        pass
    child.wait()
