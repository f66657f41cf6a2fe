"""The caller's words (bingo.traditional.voice, no Django): Spanish cardinals, ball clips and composed
announcements."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bingo.traditional import voice

# An independent reading of Spanish cardinals, to check number_words against (not the code under test).
_VALUES = {
    "cero": 0, "uno": 1, "un": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7,
    "ocho": 8, "nueve": 9, "diez": 10, "once": 11, "doce": 12, "trece": 13, "catorce": 14, "quince": 15,
    "dieciséis": 16, "diecisiete": 17, "dieciocho": 18, "diecinueve": 19, "veinte": 20, "veintiuno": 21,
    "veintiún": 21, "veintidós": 22, "veintitrés": 23, "veinticuatro": 24, "veinticinco": 25,
    "veintiséis": 26, "veintisiete": 27, "veintiocho": 28, "veintinueve": 29, "treinta": 30,
    "cuarenta": 40, "cincuenta": 50, "sesenta": 60, "setenta": 70, "ochenta": 80, "noventa": 90,
    "cien": 100, "ciento": 100, "doscientos": 200, "trescientos": 300, "cuatrocientos": 400,
    "quinientos": 500, "seiscientos": 600, "setecientos": 700, "ochocientos": 800, "novecientos": 900,
}  # fmt: skip


def read_spanish(words: list[str]) -> int:
    total = current = 0
    for i, word in enumerate(words):
        if word == "y":
            assert words[i - 1] in {
                "treinta",
                "cuarenta",
                "cincuenta",
                "sesenta",
                "setenta",
                "ochenta",
                "noventa",
            }
            continue
        if word == "mil":
            total += (current or 1) * 1000
            current = 0
        elif word in ("millón", "millones"):
            total += current * 1_000_000
            current = 0
        else:
            current += _VALUES[word]
    return total + current


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (1, "uno"),
        (16, "dieciséis"),
        (21, "veintiuno"),
        (30, "treinta"),
        (45, "cuarenta y cinco"),
        (75, "setenta y cinco"),
        (90, "noventa"),
        (100, "cien"),
        (101, "ciento uno"),
        (360, "trescientos sesenta"),
        (1000, "mil"),
        (1121, "mil ciento veintiuno"),
        (21_000, "veintiún mil"),
        (1_000_000, "un millón"),
        (2_500_301, "dos millones quinientos mil trescientos uno"),
    ],
)
def test_number_words_known_values(n: int, text: str) -> None:
    assert voice.number_text(n) == text


def test_before_a_noun_one_is_un() -> None:
    assert voice.number_text(1, before_noun=True) == "un"
    assert voice.number_text(21, before_noun=True) == "veintiún"
    assert voice.number_text(31, before_noun=True) == "treinta y un"


def test_ball_45_is_said_el_cuarenta_y_cinco() -> None:
    assert voice.ball_text(45) == "el cuarenta y cinco"
    assert voice.CLIPS[voice.ball_clip(45)] == "el cuarenta y cinco"


@pytest.mark.parametrize("top", [90, 75])  # the 90-ball game and the 75-ball electronic card
def test_every_ball_of_the_range_has_its_clip_saying_its_number(top: int) -> None:
    for ball in range(1, top + 1):
        text = voice.CLIPS[voice.ball_clip(ball)]
        assert text.startswith("el ")
        assert read_spanish(text.removeprefix("el ").split()) == ball
    assert len({voice.CLIPS[voice.ball_clip(b)] for b in range(1, top + 1)}) == top


@pytest.mark.parametrize("bad", [0, 91, -1])
def test_no_clip_for_a_number_that_is_not_a_ball(bad: int) -> None:
    with pytest.raises(ValueError, match="not a ball"):
        voice.ball_text(bad)


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=voice.MAX_NUMBER), st.booleans())
def test_number_words_read_back_and_are_all_clips(n: int, before_noun: bool) -> None:
    words = voice.number_words(n, before_noun=before_noun)
    assert read_spanish(words) == n
    # Said as clips: each group below a thousand one whole phrase, and together the same words.
    clips = voice.number_clips(n, before_noun=before_noun)
    assert all(c in voice.CLIPS for c in clips)
    assert " ".join(voice.CLIPS[c] for c in clips) == " ".join(words)
    assert len(clips) <= 5
    if not before_noun:
        assert "un" not in words[-1:] and "veintiún" not in words[-1:]


@settings(max_examples=50, deadline=None)
@given(st.integers(min_value=1, max_value=90))
def test_a_ball_is_one_clip_for_the_1_to_90_range(ball: int) -> None:
    assert voice.ball_clip(ball) in voice.CLIPS


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 5000), st.integers(0, 300)), min_size=1, max_size=4),
    st.decimals(min_value=0, max_value=100_000, places=2),
    st.decimals(min_value=0, max_value=100_000, places=2),
)
def test_the_sales_announcement_is_made_of_known_clips(
    ranges: list[tuple[int, int]], line: Decimal, bingo: Decimal
) -> None:
    spans = [[a, a + n] for a, n in ranges]
    cards = sum(b - a + 1 for a, b in spans)
    announcement = {
        "cards_sold": cards,
        "series": [{"series": "A", "face_value": "1.00", "ranges": spans}],
        "line_prize": str(line),
        "bingo_prize": str(bingo),
        "programs": [{"type": "prima", "amount": "30.00", "max_ball": 40, "colour": None}],
    }
    clips = voice.announcement_clips(announcement)
    assert all(c in voice.CLIPS for c in clips)
    assert clips[0] == "cards-sold"
    assert clips.count("from-number") == len(spans)


def test_the_formula_in_words() -> None:
    clips = voice.formula_clips([[1, 60], [301, 360]], 120)
    said = " ".join(voice.CLIPS[c] for c in clips)
    assert said == (
        "Cartones vendidos ciento veinte del número uno al sesenta y del número trescientos uno al "
        "trescientos sesenta de las series en juego."
    )


def test_amounts_in_words() -> None:
    def said(amount: str | Decimal) -> str:
        return " ".join(voice.CLIPS[c] for c in voice.amount_clips(amount))

    assert said("118.50") == "ciento dieciocho euros con cincuenta céntimos"
    assert said("1.00") == "un euro"
    assert said("21.01") == "veintiún euros con un céntimo"
    assert said(Decimal("0.5")) == "cero euros con cincuenta céntimos"


def test_an_accumulated_prize_with_its_max_ball_and_colour() -> None:
    prima = voice.program_clips({"type": "prima", "amount": "30.00", "max_ball": 40, "colour": None})
    assert " ".join(voice.CLIPS[c] for c in prima) == "Prima treinta euros bola máxima cuarenta"
    colour = voice.program_clips({"type": "colour_prima", "amount": "10", "max_ball": None, "colour": "red"})
    assert " ".join(voice.CLIPS[c] for c in colour) == "Prima de Color diez euros bola de color rojo"


def test_the_series_on_sale() -> None:
    clips = voice.series_clips([{"face_value": "1.00"}, {"face_value": "2.50"}])
    assert " ".join(voice.CLIPS[c] for c in clips) == (
        "Series a la venta: serie uno valor facial un euro "
        "serie dos valor facial dos euros con cincuenta céntimos"
    )
