"""What a failed request tells the client: one sentence, never a traceback or an install path.

pygls answers a handler's unexpected exception with the exception text and its traceback in the
error's ``data`` (absolute paths of the install included). Here the exception becomes a JSON-RPC
error the client can act on: InvalidParams naming the field when the params caused it (a file
name too long for the file system, a NUL byte in a path), RequestFailed for the file system
refusing (permissions, a file that vanished), and InternalError, with only the exception's type,
for our own bugs. The traceback goes to the server log.
"""

from __future__ import annotations

import errno
import logging
import os
import re
from collections.abc import Callable, Iterator
from typing import Any

from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
)

logger = logging.getLogger(__name__)

#: Errors of the file system that say the name itself is wrong, not the file behind it.
BAD_NAME_ERRNOS = frozenset({errno.ENAMETOOLONG, errno.EINVAL, errno.EILSEQ})


class RequestFailed(JsonRpcException):
    """LSP's RequestFailed: a well-formed request this install cannot serve (a missing extra,
    a file the file system refuses)."""

    CODE = -32803
    MESSAGE = "Request failed"


def leaves(value: Any, where: str = "") -> Iterator[tuple[str, Any]]:
    """Every leaf of a JSON value with its dotted path (``textDocument.uri``, ``items[2]``)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from leaves(item, f"{where}[{i}]")
    else:
        yield where, value


def field_where(params: Any, found: Callable[[str], bool]) -> str | None:
    """The path of the first string in ``params`` for which ``found`` holds."""
    for where, value in leaves(params):
        if isinstance(value, str) and found(value):
            return where or "params"
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")


def has_lone_surrogate(text: str) -> bool:
    """A UTF-16 half without its partner: JSON can escape one (``"\\ud800"``), Unicode has none,
    and no file name or UTF-8 text can hold it."""
    return _SURROGATE.search(text) is not None


def short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else f"{text[: limit // 2]}…{text[-limit // 2 :]}"


def public_error(exc: BaseException, method: str, params: Any) -> JsonRpcException:
    """The answer to ``method`` whose handler raised ``exc``; logs what the client is not told."""
    if isinstance(exc, JsonRpcException):
        return exc
    if isinstance(exc, OSError):
        name = os.path.basename(str(exc.filename)) if exc.filename is not None else ""
        reason = exc.strerror or type(exc).__name__
        field = field_where(params, lambda s: bool(name) and name in s)
        logger.warning("%s: %s", method, exc)
        if exc.errno in BAD_NAME_ERRNOS and field is not None:
            return JsonRpcInvalidParams(f"`{field}`: {reason.lower()}")
        return RequestFailed(f"{reason}: {short(name)}" if name else reason)
    if isinstance(exc, ValueError) and "null byte" in str(exc):
        field = field_where(params, lambda s: "\0" in s)
        if field is not None:
            logger.warning("%s: %s", method, exc)
            return JsonRpcInvalidParams(f"`{field}` must not contain a NUL character")
    logger.error("%s failed", method, exc_info=exc)
    return JsonRpcInternalError(
        f"internal error in {method} ({type(exc).__name__}); the server log has the details"
    )
