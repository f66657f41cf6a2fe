"""The feed's JSON Schemas (schemas/v1/: the envelope's and one per kind), validated on both ends: by the
installation before a message is written (a bug there never reaches the authority), and by the node when
it arrives (pure: no Django).

A schema is the contract with the authority: a change that a reader of v1 would not accept is a new version
(schemas/v2/, envelope format "hall-feed/v2"), never an edit in place.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker

from halls.feed.kinds import FeedKind

VERSION = "v1"
FOLDER = Path(__file__).resolve().parent / "schemas" / VERSION


class SchemaError(ValueError):
    """A message its schema refuses: `where` is the JSON path of the first problem, str() says what."""

    def __init__(self, where: str, detail: str) -> None:
        self.where = where
        super().__init__(f"{where}: {detail}" if where else detail)


@cache
def _validator(name: str) -> Draft202012Validator:
    document = json.loads((FOLDER / f"{name}.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(document)
    return Draft202012Validator(document, format_checker=FormatChecker())


def has_schema(kind: str) -> bool:
    return kind in {k.value for k in FeedKind} and (FOLDER / f"{kind}.json").is_file()


def _check(name: str, value: Any) -> None:
    errors = sorted(_validator(name).iter_errors(value), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        raise SchemaError(first.json_path, first.message)


def validate(message: dict[str, Any]) -> None:
    """The whole message: its envelope, then its payload against its kind's schema (SchemaError)."""
    _check("envelope", message)
    kind = message["kind"]
    if not has_schema(kind):
        raise SchemaError("$.kind", f"{kind!r} is not a kind of feed message")
    _check(kind, message["payload"])


def validate_payload(kind: str, payload: dict[str, Any]) -> None:
    """One payload, before it is written (the installation's side)."""
    if not has_schema(kind):
        raise SchemaError("$.kind", f"{kind!r} is not a kind of feed message")
    _check(kind, payload)
