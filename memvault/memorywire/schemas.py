"""The memorywire JSON Schemas (Draft 2020-12) shipped in `schemas/`, and validation against them.

The schemas are written from the spec (memorywire v0.1): the five requests, their responses (for
merge and expire the spec's guidance shapes), the governance review and response, and the
procedural memory's FSM. `jsonschema` is imported on first validation only: it is in the
`serve` and `test` extras, so the core install stays small, and a missing package is one clear
error instead of an ImportError.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import Any

from memvault.errors import InputError, MemvaultError, NotFoundError

SUFFIX = ".json"


@cache
def schema_names() -> tuple[str, ...]:
    """The names `schema(name)` answers (`remember`, `remember.response`, `procedure`, ...)."""
    folder = resources.files("memvault.memorywire").joinpath("schemas")
    return tuple(sorted(p.name[: -len(SUFFIX)] for p in folder.iterdir() if p.name.endswith(SUFFIX)))


def schema(name: str) -> dict[str, Any]:
    """The schema `name` (with or without `.json`) as a new dict; NotFoundError for another name."""
    return json.loads(_text(name.removesuffix(SUFFIX)))


@cache
def _text(name: str) -> str:
    if name not in schema_names():
        raise NotFoundError(f"no memorywire schema {name!r}; known: {', '.join(schema_names())}")
    return resources.files("memvault.memorywire").joinpath("schemas", name + SUFFIX).read_text(encoding="utf-8")


MISSING = ("memorywire validates requests with the jsonschema package, which is not installed: "
           "pip install 'memvault[serve]'")


@cache
def _validator(name: str) -> Any:
    try:
        from jsonschema import Draft202012Validator
    except ImportError as exc:  # tests/test_memorywire.py runs this without the package
        raise MemvaultError(MISSING) from exc
    return Draft202012Validator(schema(name))


def _best_match(errors: Iterable[Any]) -> Any:
    # imported only after _validator ran: that one says which extra is missing
    from jsonschema.exceptions import best_match

    return best_match(errors)


JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer", float: "number",
              type(None): "null"}


def json_type(value: Any) -> str:
    """The JSON name of a value's type (`null`, `array`, ...), for errors a JSON client reads."""
    return JSON_TYPES.get(type(value), type(value).__name__)


def _message(error: Any) -> tuple[list[Any], str]:
    """(extra path parts, message) in JSON's words: `must be an integer (got boolean)`, never
    jsonschema's Python reprs (`True is not of type 'integer'`)."""
    kind, value = error.validator, error.validator_value
    if kind == "type":
        wanted = " or ".join(value) if isinstance(value, list) else value
        return [], f"must be {'an' if str(wanted)[0] in 'aeiou' else 'a'} {wanted} (got {json_type(error.instance)})"
    if kind == "enum":
        return [], f"must be one of {', '.join(json.dumps(v) for v in value)} (got {json.dumps(error.instance)})"
    if kind == "additionalProperties" and isinstance(error.instance, dict):
        known = list(error.schema.get("properties", {}))
        extra = next((k for k in error.instance if k not in known), "?")
        return [extra], f"unknown key; known: {', '.join(known)}"
    if kind in ("minItems", "minLength") and value == 1:
        return [], "must not be empty"
    if kind in ("minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems"):
        bound = "at least" if kind.startswith("min") else "at most"
        unit = " character" if "Length" in kind else " item" if "Items" in kind else ""
        return [], f"must be {bound} {value}" if not unit else f"must hold {bound} {value}{unit}{'s' * (value != 1)}"
    return [], error.message


def json_path(parts: Iterable[Any]) -> str:
    """`$.filter.tags[0]` for the parts of a place in a JSON document."""
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def problem(name: str, instance: Any) -> tuple[str, str] | None:
    """(JSON path, message) of the most relevant way `instance` fails schema `name`, or None."""
    validator = _validator(name)
    error = _best_match(validator.iter_errors(instance))
    if error is None:
        return None
    path = list(error.absolute_path)
    if error.validator == "required":  # name the missing member itself, not its parent
        missing = next((k for k in error.validator_value if isinstance(error.instance, dict) and k not in error.instance), None)
        if missing is not None:
            return json_path([*path, missing]), "is required"
    more, message = _message(error)
    return json_path([*path, *more]), message


def check_request(op: str, request: Any, where: str = "request") -> None:
    """InputError (a usage error: exit 2, HTTP 400) naming the JSON path where `request` fails
    the operation's schema."""
    found = problem(op, request)
    if found is not None:
        raise InputError(f"{op} {where} {found[0]}: {found[1]}")


def check_response(op: str, response: dict[str, Any]) -> None:
    """A response that fails its schema is memvault's bug, not the caller's: a plain MemvaultError."""
    name = f"{op}.response"
    if name not in schema_names():
        return
    found = problem(name, response)
    if found is not None:
        raise MemvaultError(f"{op} response {found[0]}: {found[1]} (memvault's answer breaks the schema; "
                            "please report this)")
