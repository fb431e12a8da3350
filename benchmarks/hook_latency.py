"""How long ``memdir hook user-prompt-submit`` holds up a prompt with its default selector.

Claude Code runs the hook before every prompt and waits for it. Each run here is a fresh
process, as the agent starts it: ``python -m memdir hook user-prompt-submit`` with the hook's JSON
on stdin, over the bundled example memory dir (``examples/memory``, placed where the agent keeps
the memory of a scratch project). The environment carries an Anthropic API key, as Claude Code's
does, pointing at a closed port: the default hook must not use it (it would fail, slowly).

Reported, each over ``--repeat`` runs: the median and 90th percentile wall time of

* **python**: a fresh interpreter doing nothing (``python -c pass``), the floor;
* **hook, new session**: a prompt that recalls a memory, each run a new session id;
* **hook, same session**: the same prompt again in one session (nothing new to inject);
* **hook, anthropic**: ``selector = "anthropic"`` in ``memdir.toml``, against a stand-in for the
  Messages API on 127.0.0.1 that answers at once: what the model selector costs before the
  model thinks at all (the SDK's import, the request). A real model adds its own time (the
  selector's timeout is 10 s), and each prompt is a paid request.

Usage::

    .venv/bin/python benchmarks/hook_latency.py            # 20 runs each
    .venv/bin/python benchmarks/hook_latency.py --repeat 50
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from memdir.agent.paths import locate_memory_dir
from timing import percentile

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "memory"
PROMPT = "can I merge code during the release freeze?"


class InstantModel(BaseHTTPRequestHandler):
    """The Messages API choosing the release-freeze memory, at once."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        choice = json.dumps({"selected_memories": ["project-release-freeze.md"]})
        body = json.dumps(
            {
                "id": "msg_bench",
                "type": "message",
                "role": "assistant",
                "model": "claude-bench",
                "content": [{"type": "text", "text": choice}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


def timed(command: list[str], stdin: bytes, env: dict[str, str]) -> tuple[float, bytes]:
    start = time.perf_counter()
    proc = subprocess.run(command, input=stdin, env=env, capture_output=True, check=True)
    return time.perf_counter() - start, proc.stdout


def summary(name: str, times: list[float]) -> str:
    median, p90 = statistics.median(times), percentile(times, 0.9)
    return f"{name:<22} median {median * 1000:7.1f} ms   p90 {p90 * 1000:7.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memdir-hook-bench-") as scratch:
        home, project = Path(scratch) / "home", Path(scratch) / "project"
        project.mkdir(parents=True)
        memory = locate_memory_dir(project, env={}, home=home).memory_dir
        assert memory is not None
        shutil.copytree(EXAMPLE, memory)
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(home),
            "XDG_STATE_HOME": str(Path(scratch) / "state"),
            # Claude Code's own key, as the agent passes it to hooks; port 9 answers nobody.
            "ANTHROPIC_API_KEY": "sk-ant-bench-dummy",
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        }
        hook = [sys.executable, "-m", "memdir", "hook", "user-prompt-submit"]

        def stdin(session: str) -> bytes:
            data = {"session_id": session, "cwd": str(project), "prompt": PROMPT}
            return json.dumps({**data, "hook_event_name": "UserPromptSubmit"}).encode()

        timed(hook, stdin("warm-up"), env)  # bytecode compiled, file cache warm
        floor = [timed([sys.executable, "-c", "pass"], b"", env)[0] for _ in range(args.repeat)]
        fresh: list[float] = []
        for run in range(args.repeat):
            elapsed, out = timed(hook, stdin(f"new-{run}"), env)
            assert b"release-freeze" in out, out[:300]
            fresh.append(elapsed)
        again: list[float] = []
        for _ in range(args.repeat):
            elapsed, out = timed(hook, stdin("new-0"), env)
            assert out == b"", out[:300]
            again.append(elapsed)
        log = Path(scratch) / "state" / "memdir" / "hook.log"
        assert not log.exists(), log.read_text()
        server = ThreadingHTTPServer(("127.0.0.1", 0), InstantModel)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        env["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{server.server_address[1]}"
        (memory / "memdir.toml").write_text('selector = "anthropic"\n', encoding="utf-8")
        timed(hook, stdin("model-warm-up"), env)
        model: list[float] = []
        for run in range(args.repeat):
            elapsed, out = timed(hook, stdin(f"model-{run}"), env)
            assert b"release-freeze" in out, out[:300]
            model.append(elapsed)
        server.shutdown()
        assert not log.exists(), log.read_text()
    print(f"{args.repeat} runs each, {sys.version.split()[0]}, examples/memory")
    print(summary("python -c pass", floor))
    print(summary("hook, new session", fresh))
    print(summary("hook, same session", again))
    print(summary("hook, anthropic (0 ms)", model))


if __name__ == "__main__":
    main()
