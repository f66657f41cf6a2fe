"""Register files for the door's tests: people with valid documents, in halls.door.registerfile's shape."""

from __future__ import annotations

import io
from datetime import date

from halls.door.registerfile import Header, write_register_file

LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"


def dni(number: int) -> str:
    return f"{number:08d}{LETTERS[number % 23]}"


def people(start: int, count: int) -> list[tuple[str, str, str]]:
    """``count`` people by DNI from ``start``, with a passport and an EU identity card among them."""
    found = [("DNI", dni(start + i), "ES") for i in range(count)]
    if count >= 3:
        found[1] = ("PASSPORT", f"P{start:08d}", "FRA")
        found[2] = ("ID_CARD", f"T{start:08d}", "DE")
    return found


def register_file(
    lines: list[tuple[str, str, str]],
    *,
    code: str = "RGIAJ",
    jurisdiction: str = "NATIONAL",
    version: int = 1,
    issued: date = date(2026, 12, 1),
) -> bytes:
    return write_register_file(Header(code, jurisdiction, version, issued), lines)


def stream(data: bytes) -> io.BytesIO:
    return io.BytesIO(data)
