"""Reading a pre-printed series from the printer's or the authority's file, and checking every card (pure).

The file (UTF-8 CSV, comma- or semicolon-separated, one card a line):

    serial,n1,n2,n3,n4,n5,n6,n7,n8,n9,n10,n11,n12,n13,n14,n15[,security_code]
    1,3,21,42,61,80,7,15,33,52,77,19,28,49,68,89,K7Q2M4X9PA
    ...

- a header line first, its first field ``serial`` (any case); lines that are empty or start with ``#`` are
  skipped;
- ``serial``: the card's number in the series, 1 to N in order with none missing; N is a multiple of 6, and
  serials 6k+1..6k+6 are strip k+1;
- ``n1..n15``: the card's fifteen numbers row by row as printed: the first row's five left to right, then the
  second row's, then the third's (a number's column is its decade: 1-9 the first, 80-90 the last);
- ``security_code`` (optional, 4 to 16 letters and digits): the code printed on the card; without it the hall
  computes its own (bingo.cards.security_code).

Each card must be a valid 90-ball card (bingo.cards: 3 rows of 5 numbers, 1 to 3 numbers per column,
ascending down each column, 15 distinct numbers 1-90); each strip of six cards must hold 1-90 exactly once;
no two cards of the series may hold the same numbers. `read_series` returns every card it read and every
problem found, each naming its line and serial, so one report lists them all.
"""

from __future__ import annotations

import csv
import io
import itertools
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from bingo.cards import (
    CARDS_PER_STRIP,
    COLUMNS,
    MAX_NUMBER,
    NUMBERS_PER_CARD,
    NUMBERS_PER_ROW,
    ROWS,
    CardGrid,
    column_of,
)

U8 = npt.NDArray[np.uint8]
Bools = npt.NDArray[np.bool_]
MAX_CARDS = 120_000
_CODE = re.compile(r"^[A-Za-z0-9]{4,16}$")


def gettext_noop(message: str) -> str:
    """Marks a message for the catalogues (makemessages reads this name) without importing Django."""
    return message


# Every problem's code and its English message; the service translates them (they are catalogued above).
MESSAGES: dict[str, str] = {
    "empty_file": gettext_noop("The file holds no card."),
    "not_text": gettext_noop("The file is not UTF-8 text."),
    "bad_header": gettext_noop(
        "The first line must be the header serial,n1,…,n15 (optionally ,security_code), not: %(line)s"
    ),
    "too_many_cards": gettext_noop("A series holds at most %(max)s cards."),
    "field_count": gettext_noop(
        "%(count)s fields: a card line is its serial, 15 numbers and an optional code."
    ),
    "bad_serial": gettext_noop("The serial %(value)s is not a whole number from 1."),
    "serial_order": gettext_noop(
        "Serial %(serial)s where %(expected)s was expected (1 to N in order, none missing)."
    ),
    "not_a_number": gettext_noop("Number %(position)s (%(value)s) is not a whole number."),
    "out_of_range": gettext_noop("Number %(position)s (%(value)s) is outside 1-90."),
    "repeated_number": gettext_noop("The number %(number)s appears twice on the card."),
    "row_order": gettext_noop(
        "Row %(row)s: %(first)s and %(second)s are in the wrong order or share a column "
        "(a row holds one number per column, left to right)."
    ),
    "empty_column": gettext_noop("Column %(column)s (%(low)s-%(high)s) holds no number."),
    "column_order": gettext_noop("Column %(column)s must ascend downwards: %(upper)s is above %(lower)s."),
    "bad_code": gettext_noop("The security code %(value)s is not 4 to 16 letters and digits."),
    "strip_incomplete": gettext_noop(
        "The last strip has %(count)s cards: a series is whole strips of 6 (serials %(first)s-%(last)s)."
    ),
    "strip_repeats": gettext_noop(
        "Strip %(strip)s (cards %(first)s-%(last)s): the number %(number)s is on cards %(cards)s."
    ),
    "strip_missing": gettext_noop("Strip %(strip)s (cards %(first)s-%(last)s): no card holds %(numbers)s."),
    "same_numbers": gettext_noop("Card %(serial)s holds the same numbers as card %(other)s."),
}


@dataclass(frozen=True)
class Problem:
    """One thing wrong, at a line of the file (0: the file as a whole) and a serial (None: not known)."""

    line: int
    serial: int | None
    code: str
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def message(self) -> str:
        """In English; the service translates MESSAGES[code]."""
        return MESSAGES[self.code] % self.params


@dataclass(frozen=True)
class ImportedCard:
    serial: int
    line: int
    grid: CardGrid
    security_code: str  # "" when the file gives none


@dataclass
class ReadSeries:
    """The cards read whole and valid (grids[i], codes[i] of serials[i], at lines[i]) and every problem."""

    grids: U8  # (cards, 3, 9), 0 = blank
    serials: list[int]
    lines: list[int]
    codes: list[str]
    problems: list[Problem]

    @property
    def ok(self) -> bool:
        return not self.problems and len(self.serials) > 0

    @property
    def bad_serials(self) -> list[int]:
        return sorted({p.serial for p in self.problems if p.serial is not None})

    @cached_property
    def cards(self) -> list[ImportedCard]:
        """The valid cards as CardGrid (built one by one: for tests and small series)."""
        return [
            ImportedCard(serial, line, CardGrid.from_json([[n or None for n in row] for row in grid]), code)
            for serial, line, grid, code in zip(
                self.serials, self.lines, self.grids.tolist(), self.codes, strict=True
            )
        ]


def _empty(problems: list[Problem]) -> ReadSeries:
    return ReadSeries(np.zeros((0, ROWS, COLUMNS), dtype=np.uint8), [], [], [], problems)


def _cell(value: str) -> int | None:
    value = value.strip()
    return int(value) if re.fullmatch(r"[0-9]{1,3}", value) else None


def _serial(value: str) -> int | None:
    value = value.strip()
    return int(value) if re.fullmatch(r"[0-9]{1,9}", value) and int(value) >= 1 else None


_ROW_OF_POSITION = np.repeat(np.arange(ROWS), NUMBERS_PER_ROW)  # n1..n5 row 0, n6..n10 row 1, ...


def _grids(values: npt.NDArray[np.int64]) -> U8:
    """(cards, 3, 9) from (cards, 15) numbers row by row, each in its decade's column."""
    grids = np.zeros((len(values), ROWS, COLUMNS), dtype=np.int64)
    columns = np.minimum(values // 10, COLUMNS - 1)
    grids[np.arange(len(values))[:, None], _ROW_OF_POSITION[None, :], columns] = values
    return grids.astype(np.uint8)


def _bad_cards(values: npt.NDArray[np.int64]) -> Bools:
    """Which cards break a card rule: the same rules as `card_problems`, checked on every card at once."""
    bad = ((values < 1) | (values > MAX_NUMBER)).any(axis=1)
    clipped = np.clip(values, 1, MAX_NUMBER)
    bad |= (np.diff(np.sort(clipped, axis=1), axis=1) == 0).any(axis=1)
    columns = np.minimum(clipped // 10, COLUMNS - 1).reshape(-1, ROWS, NUMBERS_PER_ROW)
    bad |= (np.diff(columns, axis=2) <= 0).any(axis=(1, 2))
    grids = _grids(clipped).astype(np.int64)
    filled = grids > 0
    bad |= (filled.sum(axis=1) == 0).any(axis=1)
    above = np.maximum.accumulate(grids, axis=1)
    bad |= (filled[:, 1:, :] & (grids[:, 1:, :] <= above[:, :-1, :])).any(axis=(1, 2))
    return np.asarray(bad, dtype=np.bool_)


def card_problems(numbers: list[str], line: int, serial: int | None) -> tuple[list[Problem], CardGrid | None]:
    """The problems of one card's 15 number fields, and its grid when it has none."""
    found: list[Problem] = []

    def problem(code: str, **params: Any) -> None:
        found.append(Problem(line, serial, code, params))

    values: list[int] = []
    for position, text in enumerate(numbers, start=1):
        number = _cell(text)
        if number is None:
            problem("not_a_number", position=position, value=text.strip())
        elif not 1 <= number <= MAX_NUMBER:
            problem("out_of_range", position=position, value=number)
        else:
            values.append(number)
    if found:
        return found, None
    for number in sorted({n for n in values if values.count(n) > 1}):
        problem("repeated_number", number=number)
    cells: list[list[int | None]] = [[None] * COLUMNS for _ in range(ROWS)]
    for r in range(ROWS):
        row = values[r * NUMBERS_PER_ROW : (r + 1) * NUMBERS_PER_ROW]
        for left, right in itertools.pairwise(row):
            if column_of(left) >= column_of(right):
                problem("row_order", row=r + 1, first=left, second=right)
        for n in row:
            cells[r][column_of(n)] = n
    if found:
        return found, None
    for c in range(COLUMNS):
        column = [cells[r][c] for r in range(ROWS) if cells[r][c] is not None]
        if not column:
            low, high = max(1, c * 10), (MAX_NUMBER if c == COLUMNS - 1 else c * 10 + 9)
            problem("empty_column", column=c + 1, low=low, high=high)
        for upper, lower in itertools.pairwise(column):
            if upper is not None and lower is not None and upper > lower:
                problem("column_order", column=c + 1, upper=upper, lower=lower)
    if found:
        return found, None
    first, second, third = (tuple(row) for row in cells)
    return [], CardGrid((first, second, third))  # the checks above are the card rules: it validates


def _rows(text: str) -> list[tuple[int, list[str]]]:
    dialect = ";" if text.split("\n", 1)[0].count(";") > text.split("\n", 1)[0].count(",") else ","
    reader = csv.reader(io.StringIO(text), delimiter=dialect)
    rows = []
    for fields in reader:
        if not fields or not "".join(fields).strip() or fields[0].lstrip().startswith("#"):
            continue
        rows.append((reader.line_num, fields))
    return rows


def read_series(data: bytes) -> ReadSeries:
    """Every card of the file and every problem found in it (see the module's docstring for the format).

    The card and strip rules are checked on all cards at once (NumPy); only the cards and strips that fail
    are looked at one by one, to say what is wrong with them.
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return _empty([Problem(0, None, "not_text")])
    rows = _rows(text)
    if not rows:
        return _empty([Problem(0, None, "empty_file")])
    header_line, header = rows[0]
    if header[0].strip().lower() != "serial":
        shown = ",".join(header)[:80]
        return _empty([Problem(header_line, None, "bad_header", {"line": shown})])
    rows = rows[1:]
    if not rows:
        return _empty([Problem(0, None, "empty_file")])
    if len(rows) > MAX_CARDS:
        return _empty([Problem(0, None, "too_many_cards", {"max": MAX_CARDS})])
    problems: list[Problem] = []
    # Cards whose fields are whole numbers: judged together below.
    lines: list[int] = []
    serials: list[int] = []
    codes: list[str] = []
    values: list[list[int]] = []
    texts: list[list[str]] = []
    for position, (line, fields) in enumerate(rows, start=1):
        serial = _serial(fields[0])
        if serial is None:
            problems.append(Problem(line, None, "bad_serial", {"value": fields[0].strip()[:20]}))
        elif serial != position:
            problems.append(Problem(line, serial, "serial_order", {"serial": serial, "expected": position}))
        if len(fields) not in (1 + NUMBERS_PER_CARD, 2 + NUMBERS_PER_CARD):
            problems.append(Problem(line, serial, "field_count", {"count": len(fields)}))
            continue
        code = fields[1 + NUMBERS_PER_CARD].strip() if len(fields) > 1 + NUMBERS_PER_CARD else ""
        if code and not _CODE.match(code):
            problems.append(Problem(line, serial, "bad_code", {"value": code[:20]}))
        numbers = fields[1 : 1 + NUMBERS_PER_CARD]
        try:
            parsed = [int(n) for n in numbers]
        except ValueError:
            problems.extend(card_problems(numbers, line, serial)[0])
            continue
        if serial is not None:
            lines.append(line)
            serials.append(serial)
            codes.append(code.upper())
            values.append(parsed)
            texts.append(numbers)
    array = np.array(values, dtype=np.int64).reshape(-1, NUMBERS_PER_CARD)
    good = ~_bad_cards(array)
    for i in np.flatnonzero(~good):
        found, grid = card_problems(texts[i], lines[i], serials[i])
        problems.extend(found)
        good[i] = grid is not None  # the one-by-one check decides
    keep = np.flatnonzero(good)
    read = ReadSeries(
        _grids(array[keep]),
        [serials[i] for i in keep],
        [lines[i] for i in keep],
        [codes[i] for i in keep],
        problems,
    )
    problems.extend(_strip_problems(read, len(rows)))
    problems.extend(_repeats(read))
    problems.sort(key=lambda p: (p.line, p.code))
    return read


def _strip_problems(read: ReadSeries, count: int) -> list[Problem]:
    """Whole strips of 6, each holding 1-90 once; a strip with a card already refused is not judged again."""
    found: list[Problem] = []
    whole = count - count % CARDS_PER_STRIP
    if count % CARDS_PER_STRIP:
        where = {"count": count % CARDS_PER_STRIP, "first": whole + 1, "last": count}
        found.append(Problem(0, None, "strip_incomplete", where))
    # index[s - 1]: the card of serial s among those read, or -1
    index = np.full(count, -1, dtype=np.int64)
    serials = np.array(read.serials, dtype=np.int64)
    inside = serials <= count
    index[serials[inside] - 1] = np.flatnonzero(inside)
    strips = index[:whole].reshape(-1, CARDS_PER_STRIP)
    judged = np.flatnonzero((strips >= 0).all(axis=1))  # strips whose six cards were all read valid
    if not len(judged):
        return found
    numbers = read.grids[strips[judged]].reshape(len(judged), -1).astype(np.int64)
    slots = np.arange(len(judged))[:, None] * (MAX_NUMBER + 1) + numbers
    held = np.bincount(slots.ravel(), minlength=len(judged) * (MAX_NUMBER + 1))
    held = held.reshape(len(judged), MAX_NUMBER + 1)[:, 1:]
    for k in np.flatnonzero((held != 1).any(axis=1)):
        found.extend(_strip_report(read, int(judged[k]), strips[judged[k]]))
    return found


def _strip_report(read: ReadSeries, strip: int, members: npt.NDArray[np.int64]) -> list[Problem]:
    """What is wrong with one strip: the numbers held twice (on which cards) and those held by none."""
    first = strip * CARDS_PER_STRIP + 1
    where = {"strip": strip + 1, "first": first, "last": first + CARDS_PER_STRIP - 1}
    holders: dict[int, list[int]] = {}
    for i in members.tolist():
        for n in read.grids[i].ravel().tolist():
            if n:
                holders.setdefault(n, []).append(i)
    found = []
    for number in sorted(holders):
        if len(holders[number]) > 1:
            cards_text = ", ".join(str(read.serials[i]) for i in holders[number])
            for i in holders[number]:
                params = {**where, "number": number, "cards": cards_text}
                found.append(Problem(read.lines[i], read.serials[i], "strip_repeats", params))
    missing = [n for n in range(1, MAX_NUMBER + 1) if n not in holders]
    if missing:
        params = {**where, "numbers": ", ".join(map(str, missing))}
        found.append(Problem(read.lines[int(members[0])], None, "strip_missing", params))
    return found


def _repeats(read: ReadSeries) -> list[Problem]:
    """Cards holding the same numbers as an earlier card of the series."""
    seen: dict[bytes, int] = {}
    found = []
    ordered = np.sort(read.grids.reshape(len(read.grids), -1), axis=1)
    for i, key in enumerate(map(bytes, ordered)):
        if key in seen:
            serial = read.serials[i]
            found.append(
                Problem(read.lines[i], serial, "same_numbers", {"serial": serial, "other": seen[key]})
            )
        else:
            seen[key] = read.serials[i]
    return found


def write_series(rows: list[tuple[int, list[int], str]]) -> str:
    """A file in this format from (serial, 15 numbers row by row, security code or "") rows: for tests and
    for exporting a series to a printer."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["serial", *(f"n{i}" for i in range(1, NUMBERS_PER_CARD + 1)), "security_code"])
    for serial, numbers, code in rows:
        writer.writerow([serial, *numbers, code])
    return out.getvalue()
