"""Player card numbers, pure: 16 digits whose last is a Luhn check digit (a mistyped digit is caught), and
the QR payload a terminal's scanner reads, "TJ:<number>".

A person types the number as printed, grouped in fours ("4929 1234 5678 9012"); a scanner sends the QR
payload. `parse` takes either and answers the bare digits, or raises `BadNumber`.
"""

from __future__ import annotations

from collections.abc import Callable

LENGTH = 16  # 15 random digits and the check digit
QR_PREFIX = "TJ:"  # tarjeta de jugador
_SEPARATORS = str.maketrans("", "", " -.")


class BadNumber(ValueError):
    """Not a card number: wrong length, not digits, or the check digit does not match."""


def check_digit(payload: str) -> str:
    """The Luhn digit that makes `payload` + it a valid number (payload: digits only)."""
    total = 0
    # From the right of the payload: every first, third... digit is doubled (it sits second from the
    # right once the check digit is appended).
    for i, char in enumerate(reversed(payload)):
        digit = int(char)
        if i % 2 == 0:
            digit *= 2
            if digit > 9:
                digit -= 9
        total += digit
    return str((10 - total % 10) % 10)


def is_valid(number: str) -> bool:
    """Digits only, LENGTH of them, the last the Luhn digit of the others."""
    return (
        len(number) == LENGTH
        and number.isascii()
        and number.isdigit()
        and check_digit(number[:-1]) == number[-1]
    )


def new_number(randbelow: Callable[[int], int]) -> str:
    """A fresh number from `randbelow` (secrets.randbelow): no leading zero, so it reads as printed."""
    payload = str(10 ** (LENGTH - 2) + randbelow(9 * 10 ** (LENGTH - 2)))
    return payload + check_digit(payload)


def parse(text: str) -> str:
    """The card number in `text`: as printed (spaces or dashes allowed) or as its QR payload."""
    raw = text.strip()
    if raw.upper().startswith(QR_PREFIX):
        raw = raw[len(QR_PREFIX) :]
    digits = raw.translate(_SEPARATORS)
    if len(digits) != LENGTH or not digits.isascii() or not digits.isdigit():
        raise BadNumber(f"a card number is {LENGTH} digits")
    if not is_valid(digits):
        raise BadNumber("the check digit does not match: a digit was mistyped")
    return digits


def qr_payload(number: str) -> str:
    return QR_PREFIX + number


def printed(number: str) -> str:
    """Grouped in fours, as printed on the card."""
    return " ".join(number[i : i + 4] for i in range(0, len(number), 4))
