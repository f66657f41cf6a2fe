"""K, L and M DNIs (a letter, seven digits, the DNI check letter of those digits) and the override's lenient
reading, as properties: every right letter read, every other refused; the lenient reading keeps the typed
number (normalized) and never passes where nothing can be digested."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from stdnum.es import dni

from halls.door.documents import (
    Document,
    Kind,
    Problem,
    Refusal,
    lenient_document,
    normalize_number,
    read_document,
)

LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"
seven = st.integers(min_value=0, max_value=9_999_999).map(lambda n: f"{n:07d}")


@given(prefix=st.sampled_from("KLM"), digits=seven, other=st.sampled_from(LETTERS))
def test_a_klm_dni_reads_with_its_check_letter_only(prefix: str, digits: str, other: str) -> None:
    letter = dni.calc_check_digit(digits)
    number = f"{prefix}{digits}{letter}"
    assert read_document("DNI", number.lower()) == Document(Kind.DNI, number, "ES")
    if other != letter:
        assert read_document("DNI", f"{prefix}{digits}{other}") == Refusal(Problem.BAD_CHECK_LETTER)


@given(typed=st.text(alphabet="ABCXYZ0123456789 .-/", min_size=1, max_size=30), kind=st.sampled_from(Kind))
def test_the_lenient_reading_keeps_what_was_typed(typed: str, kind: Kind) -> None:
    found = lenient_document(kind, typed, "")
    number = normalize_number(typed)
    if number:
        assert found == Document(kind, number, "ES" if kind in (Kind.DNI, Kind.NIE) else "")
    else:
        assert found == Refusal(Problem.BAD_FORMAT)


def test_the_lenient_reading_names_a_country_by_its_code() -> None:
    assert lenient_document(Kind.PASSPORT, "ab 12", "fra") == Document(Kind.PASSPORT, "AB12", "FR")
    assert lenient_document(Kind.PASSPORT, "ab 12", "QQQ") == Document(Kind.PASSPORT, "AB12", "QQQ")
    assert lenient_document(Kind.PASSPORT, "ñ12", "") == Refusal(Problem.BAD_FORMAT)
