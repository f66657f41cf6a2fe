"""Identity documents at the door (issue 27, halls.door.documents): DNI and NIE with their check letter
(python-stdnum), passports and EU identity cards by number and issuing state, a person's age at a date."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from halls.door.documents import (
    Document,
    Kind,
    Problem,
    Refusal,
    age_on,
    keyed_digest,
    read_document,
)

LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"  # the DNI's check letters, by the number modulo 23


def dni_of(number: int) -> str:
    return f"{number:08d}{LETTERS[number % 23]}"


def nie_of(prefix: str, number: int) -> str:
    return f"{prefix}{number:07d}{LETTERS[int('XYZ'.index(prefix) * 10**7 + number) % 23]}"


def other_letter(letter: str, shift: int) -> str:
    return LETTERS[(LETTERS.index(letter) + shift) % 23]


@given(st.integers(min_value=0, max_value=99_999_999))
def test_every_valid_dni_is_accepted_and_normalized(number: int) -> None:
    text = dni_of(number)
    spaced = f"{text[:2]}.{text[2:5]}.{text[5:8]}-{text[8].lower()}"
    assert read_document("DNI", spaced) == Document(Kind.DNI, text, "ES")
    assert read_document("dni", text, "ESP") == Document(Kind.DNI, text, "ES")


@given(st.integers(min_value=0, max_value=99_999_999), st.integers(min_value=1, max_value=22))
def test_a_dni_with_another_check_letter_is_refused(number: int, shift: int) -> None:
    text = dni_of(number)
    wrong = text[:8] + other_letter(text[8], shift)
    assert read_document("DNI", wrong) == Refusal(Problem.BAD_CHECK_LETTER)


@given(st.sampled_from("XYZ"), st.integers(min_value=0, max_value=9_999_999))
def test_every_valid_nie_is_accepted(prefix: str, number: int) -> None:
    text = nie_of(prefix, number)
    assert read_document("NIE", text.lower()) == Document(Kind.NIE, text, "ES")


@given(
    st.sampled_from("XYZ"),
    st.integers(min_value=0, max_value=9_999_999),
    st.integers(min_value=1, max_value=22),
)
def test_a_nie_with_another_check_letter_is_refused(prefix: str, number: int, shift: int) -> None:
    text = nie_of(prefix, number)
    assert read_document("NIE", text[:8] + other_letter(text[8], shift)) == Refusal(Problem.BAD_CHECK_LETTER)


@pytest.mark.parametrize(
    ("kind", "number", "country", "problem"),
    [
        ("DNI", "1234567Z", "", Problem.BAD_FORMAT),  # a digit missing
        ("DNI", "1234A678Z", "", Problem.BAD_FORMAT),
        ("DNI", "", "", Problem.BAD_FORMAT),
        ("NIE", "A1234567L", "", Problem.BAD_FORMAT),
        ("NIE", "X1234567", "", Problem.BAD_FORMAT),
        ("DNI", dni_of(12345678), "FR", Problem.NOT_SPANISH),
        ("NIE", nie_of("X", 1234567), "MAR", Problem.NOT_SPANISH),
        ("DNI", dni_of(12345678), "QQ", Problem.UNKNOWN_COUNTRY),
        ("PASSPORT", "AB123456", "", Problem.UNKNOWN_COUNTRY),
        ("PASSPORT", "AB123456", "XYZ", Problem.UNKNOWN_COUNTRY),
        ("PASSPORT", "AB123456", "FRANCE", Problem.UNKNOWN_COUNTRY),
        ("PASSPORT", "AB12", "FRA", Problem.BAD_FORMAT),  # too short
        ("PASSPORT", "A" * 20 + "1", "FRA", Problem.BAD_FORMAT),  # too long
        ("PASSPORT", "ABCDEFGH", "FRA", Problem.BAD_FORMAT),  # no digit
        ("PASSPORT", "AB12345#", "FRA", Problem.BAD_FORMAT),
        ("PASSPORT", "AB1234ñ5", "FRA", Problem.BAD_FORMAT),
        ("ID_CARD", "T22000129", "US", Problem.NOT_EU_ID_CARD),
        ("ID_CARD", "T22000129", "", Problem.UNKNOWN_COUNTRY),
        ("LICENCE", "12345678", "ES", Problem.UNKNOWN_KIND),
    ],
)
def test_malformed_documents_are_refused_naming_the_problem(
    kind: str, number: str, country: str, problem: Problem
) -> None:
    assert read_document(kind, number, country) == Refusal(problem)


def test_passports_and_eu_identity_cards_are_read_by_number_and_state() -> None:
    assert read_document("PASSPORT", "ab 123-456", "fra") == Document(Kind.PASSPORT, "AB123456", "FR")
    assert read_document("pasaporte", "AB123456", "FR") == Document(Kind.PASSPORT, "AB123456", "FR")
    assert read_document("ID_CARD", "T22000129", "DEU") == Document(Kind.ID_CARD, "T22000129", "DE")
    assert read_document("ID_CARD", "L01X00T47", "CH") == Document(Kind.ID_CARD, "L01X00T47", "CH")
    # The same passport number of two states is two documents.
    assert read_document("PASSPORT", "AB123456", "FR") != read_document("PASSPORT", "AB123456", "PT")


def test_a_spanish_identity_card_is_the_dni() -> None:
    text = dni_of(12345678)
    assert read_document("ID_CARD", text, "ES") == read_document("DNI", text)
    assert read_document("ID_CARD", text[:8] + other_letter(text[8], 1), "ESP") == Refusal(
        Problem.BAD_CHECK_LETTER
    )


def test_the_keyed_digest_depends_on_the_key_and_the_whole_document() -> None:
    dni = read_document("DNI", dni_of(12345678))
    passport = read_document("PASSPORT", "12345678Z", "FR")
    assert isinstance(dni, Document) and isinstance(passport, Document)
    assert dni.key == "DNI:ES:12345678Z"
    assert len(keyed_digest(b"k", dni)) == 32
    assert keyed_digest(b"k", dni) == keyed_digest(b"k", read_document("DNI", "12.345.678-z"))  # type: ignore[arg-type]
    assert keyed_digest(b"k", dni) != keyed_digest(b"other", dni)
    assert keyed_digest(b"k", dni) != keyed_digest(b"k", passport)


@pytest.mark.parametrize(
    ("birth", "day", "age"),
    [
        (date(2008, 12, 6), date(2026, 12, 6), 18),  # the 18th birthday
        (date(2008, 12, 7), date(2026, 12, 6), 17),  # one day short
        (date(2026, 12, 6), date(2026, 12, 6), 0),
        (date(2008, 2, 29), date(2026, 2, 27), 17),
        (date(2008, 2, 29), date(2026, 2, 28), 18),  # a common year: the last day of February
        (date(2008, 2, 29), date(2028, 2, 28), 19),
        (date(2008, 2, 29), date(2028, 2, 29), 20),
    ],
)
def test_age_on_a_day(birth: date, day: date, age: int) -> None:
    assert age_on(birth, day) == age


def test_a_birth_date_in_the_future_is_refused() -> None:
    assert age_on(date(2026, 12, 7), date(2026, 12, 6)) == Refusal(Problem.BIRTH_IN_FUTURE)


@given(st.dates(min_value=date(1900, 1, 1)), st.dates(min_value=date(1900, 1, 1)))
def test_age_grows_by_one_a_year_and_never_goes_back(birth: date, day: date) -> None:
    age = age_on(birth, day)
    if birth > day:
        assert age == Refusal(Problem.BIRTH_IN_FUTURE)
        return
    assert isinstance(age, int) and 0 <= age <= day.year - birth.year
    assert day.year - birth.year - age in (0, 1)
