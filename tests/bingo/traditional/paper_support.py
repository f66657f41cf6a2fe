"""Files of pre-printed series for the paper-card tests: a real-shaped 600-card file (100 strips as a printer
sends them, with its own security codes), and the same file with one card spoiled."""

from __future__ import annotations

from bingo import cardgen
from bingo.traditional import cardimport

STRIPS = 100  # 600 cards
SPOILED = 137  # the card the bad file spoils


def printer_rows(
    strips: int = STRIPS, seed: bytes = b"printer-run-2026-11"
) -> list[tuple[int, list[int], str]]:
    """(serial, 15 numbers row by row, printed code) of every card of a printer's series."""
    generated = cardgen.generate_series(seed, strips)
    return [
        (serial, [int(n) for n in packed], f"IMP{serial:06d}")
        for serial, packed in enumerate(generated.packed().tolist(), start=1)
    ]


def good_file(strips: int = STRIPS) -> bytes:
    return cardimport.write_series(printer_rows(strips)).encode()


def bad_file(strips: int = STRIPS, spoiled: int = SPOILED) -> bytes:
    """Card `spoiled` keyed wrongly: its first row's first two numbers swapped (out of column order)."""
    rows = printer_rows(strips)
    serial, numbers, code = rows[spoiled - 1]
    numbers[0], numbers[1] = numbers[1], numbers[0]
    rows[spoiled - 1] = (serial, numbers, code)
    return cardimport.write_series(rows).encode()
