"""What the server's log keeps of pygls' error logging, in process (no server)."""

from __future__ import annotations

import logging
import sys

import pytest
from memdir_lsp.server import RoutineRpcLog, refused
from pygls.exceptions import (
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcMethodNotFound,
    JsonRpcRequestCancelled,
)


def record(msg: str, error: BaseException | None = None) -> logging.LogRecord:
    exc_info = None
    if error is not None:
        try:
            raise error
        except BaseException:
            exc_info = sys.exc_info()
    return logging.LogRecord(
        "pygls.protocol.json_rpc", logging.ERROR, __file__, 1, msg, ("7",), exc_info
    )


@pytest.mark.parametrize(
    "error",
    [
        JsonRpcInvalidParams("`path` is required"),
        JsonRpcMethodNotFound(),
        JsonRpcRequestCancelled(),
    ],
)
def test_refused_requests_leave_pygls_traceback_out(error: BaseException) -> None:
    # report_server_error logs the one line; pygls' ERROR with traceback is dropped.
    assert refused(error)
    assert RoutineRpcLog().filter(record('Exception occurred for message "%s"', error)) is False


@pytest.mark.parametrize("error", [JsonRpcInternalError("boom"), ValueError("boom")])
def test_internal_errors_keep_their_traceback(error: BaseException) -> None:
    assert not refused(error)
    kept = record('Exception occurred for message "%s"', error)
    assert RoutineRpcLog().filter(kept) is True
    assert kept.levelno == logging.ERROR and kept.exc_info is not None


def test_a_cancellation_crossing_the_answer_is_debug() -> None:
    line = record('Cancel notification for unknown message id "%s"')
    assert RoutineRpcLog().filter(line) is True
    assert line.levelno == logging.DEBUG


@pytest.mark.parametrize("catch", [True, False])
async def test_a_missing_extra_is_a_refusal_naming_it(catch: bool) -> None:
    from memdir.extras import MissingExtraError
    from memdir_lsp.server import MemoryServer, RequestFailed

    async def handler() -> None:
        raise MissingExtraError("anthropic", "the memory tool", "anthropic")

    guarded = MemoryServer().guard(handler, wait=False, catch=catch)
    with pytest.raises(RequestFailed) as raised:
        await guarded()
    assert raised.value.code == -32803
    assert "the memory tool needs memdir's [anthropic] extra" in raised.value.message
    assert refused(raised.value)  # one log line, no traceback


class ClosedWriter:
    """The client's end after it went away: every write fails, as a closed stdout does."""

    def __init__(self) -> None:
        self.writes = 0

    def write(self, data: bytes) -> None:
        self.writes += 1
        raise ValueError("I/O operation on closed file.")


def test_a_lost_connection_is_logged_not_reported_without_end(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """pygls reports a failed send as a server error, which the server sends to the client's
    log: with the connection gone that send fails and is reported again, without end (the
    server then never exits). Each send now fails once and is logged."""
    from lsprotocol import types
    from memdir_lsp.server import MemoryServer

    server = MemoryServer()
    writer = ClosedWriter()
    server.protocol.set_writer(writer)
    with caplog.at_level(logging.ERROR):
        server.window_log_message(
            types.LogMessageParams(type=types.MessageType.Info, message="hello")
        )
    # The message, then the report that its send failed, whose send fails and is only logged.
    assert writer.writes == 2
    assert any("I/O operation on closed file" in r.getMessage() for r in caplog.records)
