"""What a failed request tells the client (memdir_lsp.errors), in process (no server)."""

from __future__ import annotations

import errno
import json
import logging
from concurrent.futures import Future
from typing import Any

import pytest
from memdir_lsp.errors import RequestFailed, public_error
from memdir_lsp.server import MemoryServer
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams


class Capture:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        message = json.loads(data)
        if "method" not in message:  # answers only, not the logMessage that follows
            self.sent.append(message)

    def close(self) -> None:
        pass


def test_a_bug_is_answered_with_its_type_only_and_logged_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    protocol = MemoryServer().protocol
    capture = Capture()
    protocol.set_writer(capture, include_headers=False)
    protocol.requests[7] = ("memory/read", {"path": "x.md"})
    future: Future[Any] = Future()
    try:
        raise RuntimeError("boom in /opt/install/site-packages/memdir/x.py")
    except RuntimeError as exc:
        future.set_exception(exc)
    with caplog.at_level(logging.ERROR):
        protocol._send_handler_result(future, msg_id=7)
    [answer] = capture.sent
    assert answer["id"] == 7
    assert answer["error"] == {
        "code": -32603,
        "message": "internal error in memory/read (RuntimeError); the server log has the details",
    }
    assert any(r.exc_info and "boom" in str(r.exc_info[1]) for r in caplog.records)
    assert protocol.requests == {}


def test_no_internal_error_carries_a_traceback() -> None:
    protocol = MemoryServer().protocol
    capture = Capture()
    protocol.set_writer(capture, include_headers=False)
    try:
        raise KeyError("k")
    except KeyError:
        import sys

        error = JsonRpcInternalError.of(sys.exc_info())  # what pygls builds itself
    assert error.data
    protocol._send_response(3, error=error.to_response_error())
    [answer] = capture.sent
    assert "data" not in answer["error"] or answer["error"]["data"] is None
    assert answer["error"]["message"] == "KeyError: 'k'"


def too_long(name: str) -> OSError:
    return OSError(errno.ENAMETOOLONG, "File name too long", f"/home/u/memory/{name}")


def test_the_file_system_refusing_a_name_is_invalid_params_naming_the_field() -> None:
    name = "a" * 300 + ".md"
    error = public_error(too_long(name), "memory/read", {"directory": None, "path": name})
    assert isinstance(error, JsonRpcInvalidParams)
    assert error.message == "`path`: file name too long"
    nested = public_error(too_long(name), "m", {"files": [{"uri": "file:///x/" + name}]})
    assert nested.message == "`files[0].uri`: file name too long"


def test_other_refusals_of_the_file_system_are_request_failed_with_a_short_name() -> None:
    denied = PermissionError(errno.EACCES, "Permission denied", "/home/u/memory/" + "b" * 200)
    error = public_error(denied, "memory/read", {"path": "x"})
    assert isinstance(error, RequestFailed)
    assert error.message.startswith("Permission denied: bbb") and len(error.message) < 90
    assert public_error(too_long("x"), "m", {"p": "unrelated"}).code == RequestFailed.CODE


def test_a_nul_byte_is_invalid_params_naming_the_field() -> None:
    error = public_error(ValueError("embedded null byte"), "memory/read", {"path": "a\0b"})
    assert isinstance(error, JsonRpcInvalidParams)
    assert error.message == "`path` must not contain a NUL character"
