"""One converter between the wire (camelCase JSON) and the protocol's classes.

Every attrs class and dataclass is renamed field by field, snake_case to camelCase, by one hook
in each direction; primitives are structured strictly (``"3"`` is not an int, ``1`` is not a
string). Structuring errors become one JSON-RPC InvalidParams error naming each bad field.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar, get_args, get_origin

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from pygls.exceptions import JsonRpcInvalidParams

T = TypeVar("T")


def camel(name: str) -> str:
    """``session_id`` → ``sessionId``; a trailing ``_`` (``from_``) is dropped."""
    head, *rest = name.rstrip("_").split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def snake_case(cls: type) -> bool:
    """A class whose fields keep their snake_case names on the wire (camelCase accepted too)."""
    return getattr(cls, "__wire_case__", "camel") == "snake"


def wire_name(cls: type, name: str) -> str:
    return name if snake_case(cls) else camel(name)


def field_names(cls: type) -> list[str]:
    if attrs.has(cls):
        return [f.name for f in attrs.fields(cls)]
    return [f.name for f in dataclasses.fields(cls)]


def _is_list(cls: Any) -> bool:
    origin: Any = get_origin(cls)
    return origin is list


def _is_record(cls: Any) -> bool:
    return isinstance(cls, type) and (attrs.has(cls) or dataclasses.is_dataclass(cls))


_KINDS: dict[Any, str] = {str: "a string", bool: "a boolean", int: "an integer", float: "a number"}


def _strict(kind: type) -> Callable[[Any, type], Any]:
    def structure(value: Any, _: type) -> Any:
        ok = isinstance(value, kind) and not (kind is not bool and isinstance(value, bool))
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if not ok:
            raise TypeError(f"must be {_KINDS[kind]}, got {_json_type(value)}")
        return value

    return structure


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def _token(value: Any, _: type) -> str | int | None:
    if value is None or (isinstance(value, str | int) and not isinstance(value, bool)):
        return value
    raise TypeError(f"must be a string or an integer, got {_json_type(value)}")


def make_converter() -> cattrs.Converter:
    conv = cattrs.Converter()
    for kind in (str, bool, int, float):
        conv.register_structure_hook(kind, _strict(kind))
    token_type: Any = str | int | None
    conv.register_structure_hook_func(lambda t: t == token_type, _token)

    def list_hook(value: Any, cls: Any) -> list[Any]:
        if not isinstance(value, list):
            raise TypeError(f"must be an array, got {_json_type(value)}")
        (item,) = get_args(cls)
        try:
            return [conv.structure(v, item) for v in value]
        except TypeError as exc:
            plural = _KINDS.get(item, "values").split(" ", 1)[-1] + "s"
            raise TypeError(f"must be an array of {plural}") from exc

    conv.register_structure_hook_func(_is_list, list_hook)

    def unstructure_factory(cls: Any) -> Any:
        renames: dict[str, Any] = {n: override(rename=wire_name(cls, n)) for n in field_names(cls)}
        return make_dict_unstructure_fn(cls, conv, **renames)

    def structure_factory(cls: Any) -> Any:
        names = field_names(cls)
        renames: dict[str, Any] = {n: override(rename=wire_name(cls, n)) for n in names}
        structure = make_dict_structure_fn(
            cls, conv, _cattrs_forbid_extra_keys=False, _cattrs_detailed_validation=True, **renames
        )
        if not snake_case(cls):
            return structure
        aliases = {camel(n): n for n in names if camel(n) != n}

        def structure_either_case(value: Any, type_: Any) -> Any:
            if isinstance(value, dict):
                value = dict(value)
                for alias, name in aliases.items():
                    if alias in value:
                        if name in value:
                            raise ValueError(f"`{name}` is given twice (as `{alias}` too)")
                        value[name] = value.pop(alias)
            return structure(value, type_)

        return structure_either_case

    conv.register_unstructure_hook_factory(_is_record, unstructure_factory)
    conv.register_structure_hook_factory(_is_record, structure_factory)
    return conv


CONVERTER = make_converter()


def to_wire(value: Any) -> Any:
    """A result or notification as JSON-ready data, camelCase."""
    return CONVERTER.unstructure(value)


def plain(value: Any) -> Any:
    """pygls hands unknown methods' params over as nested namedtuples; back to dicts/lists."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def _describe(exc: BaseException, _type: Any) -> str:
    if isinstance(exc, KeyError):
        return "is required"
    if isinstance(exc, TypeError | ValueError) and str(exc).startswith(("must be", "`")):
        return str(exc)
    if "not in literal" in str(exc):
        literals = getattr(_type, "__args__", ())
        return "must be one of " + ", ".join(repr(v) for v in literals)
    return f"is invalid: {exc}"


def _messages(exc: BaseException, cls: type) -> list[str]:
    messages = []
    for line in cattrs.transform_error(exc, path="$", format_exception=_describe):
        detail, _, where = line.rpartition(" @ ")
        names = [wire_name(cls, part) for part in where.removeprefix("$").split(".") if part]
        field = ".".join(names)
        messages.append(f"`{field}` {detail}" if field else detail)
    return messages


def structure_params(params: Any, cls: type[T]) -> T:
    """Typed params from the wire; a missing, ``null`` or ``[]`` params counts as ``{}``.

    Neovim sends ``[]`` for an empty table; unknown keys are ignored, so a newer client works
    with this server.
    """
    data = plain(params)
    if data is None or data == []:
        data = {}
    if not isinstance(data, dict):
        raise JsonRpcInvalidParams("params must be an object")
    try:
        return CONVERTER.structure(data, cls)
    except Exception as exc:
        raise JsonRpcInvalidParams("; ".join(_messages(exc, cls))) from None
