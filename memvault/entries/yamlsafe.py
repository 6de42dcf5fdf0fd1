"""Frontmatter YAML, bounded: no aliases, limited size and nesting, values that cannot crash.

Plain `yaml.safe_load` lets a few hundred bytes of frontmatter take minutes and gigabytes
(an alias bomb), recurse without end (`tags: &a [*a]`), or raise a bare ValueError
(`date: 2026-02-30`, a 5000-digit integer). Frontmatter of a memory file is a handful of
flat keys, so what it has no need for is refused before anything is built: aliases (an
anchor alone is harmless), nesting deeper than `MAX_DEPTH`, more than `MAX_CHARS`. A
refusal is a `FrontmatterError` with the line it is on, which the parser reports as a
problem for that file; every other file is unaffected.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_CHARS = 64 * 1024
MAX_DEPTH = 16
MAX_NUMBER_CHARS = 64  # an int or float scalar; longer ones are refused, not converted

_Loader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_OPEN = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSE = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


class FrontmatterError(ValueError):
    """Frontmatter that is not read; `line` counts from 0 at the block's first line."""

    def __init__(self, line: int, reason: str):
        super().__init__(reason)
        self.line, self.reason = line, reason


class _BoundedLoader(_Loader):
    """SafeLoader whose number and date constructors refuse rather than raise ValueError."""


def _refuse(node: yaml.Node, reason: str) -> FrontmatterError:
    return FrontmatterError(node.start_mark.line, reason)


def _shown(value: str) -> str:
    return repr(value if len(value) <= 24 else value[:20] + "...")


def _number(kind: str, base: Any) -> Any:
    def construct(loader: Any, node: yaml.ScalarNode) -> Any:
        if len(node.value) > MAX_NUMBER_CHARS:
            raise _refuse(node, f"has the {kind} {_shown(node.value)} of {len(node.value)} characters; "
                                f"longer than {MAX_NUMBER_CHARS} is not read")
        return base(loader, node)

    return construct


def _timestamp(loader: Any, node: yaml.ScalarNode) -> Any:
    try:
        return yaml.constructor.SafeConstructor.construct_yaml_timestamp(loader, node)
    except (ValueError, OverflowError):
        raise _refuse(node, f"has {_shown(node.value)}, which is not a real date or time") from None


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _number("integer", yaml.constructor.SafeConstructor.construct_yaml_int))
_BoundedLoader.add_constructor("tag:yaml.org,2002:float", _number("number", yaml.constructor.SafeConstructor.construct_yaml_float))
_BoundedLoader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)


def load_frontmatter(block: str) -> Any:
    """The YAML value of a frontmatter block; raise FrontmatterError for anything refused."""
    if len(block) > MAX_CHARS:
        raise FrontmatterError(0, f"is longer than {MAX_CHARS // 1024} KiB; not read")
    try:
        _check_events(block)
        return yaml.load(block, Loader=_BoundedLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        said = [getattr(exc, "context", None), getattr(exc, "problem", None)]  # PyYAML's "while ..., found ..."
        reason = ", ".join(part for part in said if part) or str(exc).splitlines()[0]
        raise FrontmatterError(mark.line if mark is not None else 0, f"is not valid YAML: {reason}") from None
    except UnicodeEncodeError:  # a lone surrogate, from bytes that were not UTF-8
        raise FrontmatterError(0, "is not valid UTF-8") from None


def _line(event: yaml.Event) -> int:
    """The 0-based line an event starts on (PyYAML always sets it; the stubs allow None)."""
    return event.start_mark.line if event.start_mark is not None else 0


def _check_events(block: str) -> None:
    """Refuse aliases and deep nesting from the event stream, before any node is built."""
    depth = 0
    for event in yaml.parse(block, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent):
            raise FrontmatterError(
                _line(event), f"uses the YAML alias *{event.anchor}; aliases are not read in frontmatter")
        if isinstance(event, _OPEN):
            depth += 1
            if depth > MAX_DEPTH:
                raise FrontmatterError(_line(event), f"nests deeper than {MAX_DEPTH} levels")
        elif isinstance(event, _CLOSE):
            depth -= 1
