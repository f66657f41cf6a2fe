"""TITO validation numbers and their barcode. Pure: no Django.

A validation number is 18 digits, like the ticket-in/ticket-out systems of the floor: 17 random digits and a
Luhn check digit, so a mistyped number (one digit wrong, two neighbours swapped) is caught before any look-up.
It is printed in groups ("12-3456-7890-1234-5678") and as an Interleaved 2 of 5 barcode (ITF: 18 digits
are 9 pairs, no padding needed).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence

DIGITS = 18
GROUPS = (2, 4, 4, 4, 4)


def check_digit(body: str) -> str:
    """The Luhn digit that makes `body + digit` pass the Luhn check."""
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch)
        if i % 2 == 0:  # doubled: it will sit second from the right once the check digit follows
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return str((10 - total % 10) % 10)


def new_number(randbelow: Callable[[int], int] = secrets.randbelow) -> str:
    """A fresh validation number: 17 random digits (from `secrets`) and the check digit."""
    body = f"{randbelow(10 ** (DIGITS - 1)):0{DIGITS - 1}d}"
    return body + check_digit(body)


def normalise(text: str) -> str:
    """The digits of a typed or scanned number: spaces and dashes dropped."""
    return "".join(ch for ch in text if ch not in " -\t")


def is_valid(number: str) -> bool:
    """18 ASCII digits whose last is the check digit of the others."""
    return (
        len(number) == DIGITS
        and number.isascii()
        and number.isdigit()
        and check_digit(number[:-1]) == number[-1]
    )


def grouped(number: str) -> str:
    """The number as printed and read aloud: "12-3456-7890-1234-5678"."""
    parts, at = [], 0
    for size in GROUPS:
        parts.append(number[at : at + size])
        at += size
    return "-".join(parts)


# --- Interleaved 2 of 5 ---------------------------------------------------------------------------------

# Each digit: five elements, narrow (0) or wide (1); two of them wide.
_ITF = {
    "0": (0, 0, 1, 1, 0),
    "1": (1, 0, 0, 0, 1),
    "2": (0, 1, 0, 0, 1),
    "3": (1, 1, 0, 0, 0),
    "4": (0, 0, 1, 0, 1),
    "5": (1, 0, 1, 0, 0),
    "6": (0, 1, 1, 0, 0),
    "7": (0, 0, 0, 1, 1),
    "8": (1, 0, 0, 1, 0),
    "9": (0, 1, 0, 1, 0),
}
_DIGIT_OF: dict[tuple[int, ...], str] = {pattern: digit for digit, pattern in _ITF.items()}
_START = (1, 1, 1, 1)  # bar, space, bar, space: all narrow
WIDE = 3  # a wide element is 3 narrow modules (the standard allows 2 to 3)


def itf_widths(digits: str) -> list[int]:
    """The Interleaved 2 of 5 symbol of an even count of digits: element widths in narrow modules, starting
    with a bar and alternating bar, space (start, the pairs, stop). Quiet zones are the printer's."""
    if len(digits) % 2 or not (digits.isascii() and digits.isdigit()):
        raise ValueError(f"ITF encodes an even count of digits, not {digits!r}")
    widths = list(_START)
    for i in range(0, len(digits), 2):
        bars, spaces = _ITF[digits[i]], _ITF[digits[i + 1]]
        for bar, space in zip(bars, spaces, strict=True):
            widths += [WIDE if bar else 1, WIDE if space else 1]
    return [*widths, WIDE, 1, 1]  # stop: wide bar, narrow space, narrow bar


def itf_read(widths: Sequence[int]) -> str:
    """The digits of an ITF symbol given as `itf_widths` answers it (a reader's side, for the tests)."""
    if tuple(widths[:4]) != _START or tuple(widths[-3:]) != (WIDE, 1, 1) or (len(widths) - 7) % 10:
        raise ValueError("not an Interleaved 2 of 5 symbol")
    body = widths[4:-3]
    digits = []
    for i in range(0, len(body), 10):
        chunk = [1 if w == WIDE else 0 for w in body[i : i + 10]]
        digits += [_DIGIT_OF[tuple(chunk[0::2])], _DIGIT_OF[tuple(chunk[1::2])]]
    return "".join(digits)
