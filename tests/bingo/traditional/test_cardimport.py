"""Reading a series' file (bingo.traditional.cardimport, no Django): every card and strip rule, every problem
named."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bingo.traditional import cardimport
from bingo.traditional.cardimport import read_series, write_series
from tests.bingo.traditional.paper_support import bad_file, good_file, printer_rows


def codes(data: bytes) -> list[tuple[int | None, str]]:
    return [(p.serial, p.code) for p in read_series(data).problems]


def test_a_real_shaped_file_of_600_cards_reads_whole() -> None:
    read = read_series(good_file())
    assert read.ok and len(read.cards) == 600
    assert read.cards[0].security_code == "IMP000001"
    assert [c.serial for c in read.cards] == list(range(1, 601))


def test_one_card_keyed_wrongly_is_named_and_nothing_else() -> None:
    read = read_series(bad_file())
    assert not read.ok
    assert read.bad_serials == [137]
    assert codes(bad_file()) == [(137, "row_order")]
    assert read.problems[0].line == 138  # the header is line 1
    assert "Row 1:" in read.problems[0].message


def _alone_in_column(numbers: list[int], column: int) -> int | None:
    """The card's one number of `column`, when it has exactly one."""
    mine = [n for n in numbers if min(n // 10, 8) == column]
    return mine[0] if len(mine) == 1 else None


def test_a_strip_that_repeats_a_number_names_both_cards_and_what_is_missing() -> None:
    rows = printer_rows(1)
    # Two cards each holding one number of a column: the second takes the first's (still a valid card).
    a, b, column = next(
        (x, y, c)
        for x in range(6)
        for y in range(6)
        for c in range(9)
        if x != y
        and _alone_in_column(rows[x][1], c) is not None
        and _alone_in_column(rows[y][1], c) is not None
    )
    taken = _alone_in_column(rows[a][1], column)
    lost = _alone_in_column(rows[b][1], column)
    assert taken is not None and lost is not None
    rows[b][1][rows[b][1].index(lost)] = taken
    read = read_series(write_series(rows).encode())
    found = {(p.serial, p.code) for p in read.problems}
    assert found == {(a + 1, "strip_repeats"), (b + 1, "strip_repeats"), (None, "strip_missing")}
    missing = next(p for p in read.problems if p.code == "strip_missing")
    assert missing.message.endswith(f"no card holds {lost}.")
    assert read.bad_serials == sorted([a + 1, b + 1])


def test_file_level_problems() -> None:
    assert codes(b"") == [(None, "empty_file")]
    assert codes(b"\xff\xfe") == [(None, "not_text")]
    assert codes(b"card,1,2\n1,2,3\n") == [(None, "bad_header")]
    rows = printer_rows(1)
    text = write_series(rows[:5])  # five cards: no whole strip
    assert codes(text.encode()) == [(None, "strip_incomplete")]


def test_line_level_problems_each_named() -> None:
    rows = printer_rows(1)
    lines = write_series(rows).splitlines()
    fields = [line.split(",") for line in lines]
    fields[2][0] = "7"  # card 2 numbered 7
    fields[3].append("X")  # 18 fields
    fields[4][1] = "x"  # a letter for a number
    fields[5][1] = "0"  # out of range
    fields[6][16] = "bad code!"
    found = codes("\n".join(",".join(f) for f in fields).encode())
    assert (7, "serial_order") in found
    assert (3, "field_count") in found
    assert (4, "not_a_number") in found
    assert (5, "out_of_range") in found
    assert (6, "bad_code") in found


def test_the_same_card_twice_is_refused() -> None:
    rows = printer_rows(2)
    rows[6] = (7, list(rows[0][1]), "")
    found = codes(write_series(rows).encode())
    assert (7, "same_numbers") in found


def test_every_message_formats() -> None:
    for code, text in cardimport.MESSAGES.items():
        assert text, code


def test_serials_past_999_read() -> None:
    read = read_series(good_file(200))
    assert read.ok and read.serials[-1] == 1200


@given(
    st.lists(st.integers(min_value=-1, max_value=92), min_size=15, max_size=15)
    | st.builds(lambda seed, card: printer_rows(1, seed)[card][1], st.binary(max_size=8), st.integers(0, 5))
)
@settings(max_examples=200, deadline=None)
def test_the_check_of_all_cards_at_once_agrees_with_the_one_by_one_check(numbers: list[int]) -> None:
    at_once = bool(cardimport._bad_cards(np.array([numbers], dtype=np.int64))[0])
    found, grid = cardimport.card_problems([str(n) for n in numbers], 2, 1)
    assert at_once == bool(found) == (grid is None)


@given(st.binary(max_size=8), st.integers(0, 11), st.integers(0, 14), st.integers(1, 90))
@settings(max_examples=60, deadline=None)
def test_one_changed_number_never_passes(seed: bytes, card: int, position: int, number: int) -> None:
    rows = printer_rows(2, seed)
    if rows[card][1][position] == number:
        return
    rows[card][1][position] = number
    read = read_series(write_series(rows).encode())
    assert not read.ok
    assert read.problems
