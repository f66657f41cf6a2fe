"""A ball set's colour map written by hand (bingo.balls, issue 15): ranges of balls with their colour named in
English or in Spanish, in any case, with or without accents, read back as the map of codes a set keeps;
a part that cannot be read is named, in the reader's language."""

from __future__ import annotations

import pytest
from django.utils import translation
from hypothesis import given, settings
from hypothesis import strategies as st

from bingo.balls import (
    COLOUR_NAMES,
    KNOWN_COLOURS,
    ColourRangeError,
    colour_code,
    colour_problems,
    colour_ranges,
    default_colours,
    parse_colour_ranges,
)
from bingo.traditional import labels

SPANISH = {code: names[1] for code, names in COLOUR_NAMES.items()}  # rojo, amarillo, …, marrón, gris, cian

# A map of every ball to a known colour, runs of any length (the shape a real set has, and the worst).
colour_maps = st.lists(st.sampled_from(sorted(KNOWN_COLOURS)), min_size=90, max_size=90).map(
    lambda colours: {str(n): colour for n, colour in enumerate(colours, start=1)}
)


def test_every_known_colour_has_its_code_and_a_spanish_name() -> None:
    assert set(COLOUR_NAMES) == KNOWN_COLOURS
    assert all(names[0] == code and len(names) >= 2 for code, names in COLOUR_NAMES.items())


@settings(max_examples=150, deadline=None)
@given(colour_maps)
def test_a_map_written_in_spanish_reads_back_as_the_same_codes(colours: dict[str, str]) -> None:
    text = colour_ranges(colours, SPANISH.__getitem__)
    assert parse_colour_ranges(text) == colours
    assert parse_colour_ranges(colour_ranges(colours)) == colours  # the codes (English) as well


@settings(max_examples=100, deadline=None)
@given(colour_maps, st.sampled_from(["upper", "title", "plain", "lines"]))
def test_case_accents_and_line_breaks_do_not_matter(colours: dict[str, str], style: str) -> None:
    text = colour_ranges(colours, SPANISH.__getitem__)
    if style == "upper":
        text = text.upper()
    elif style == "title":
        text = text.title()
    elif style == "plain":
        text = text.replace("ó", "o")  # "marron" as a keyboard without accents writes it
    else:
        text = text.replace(", ", "\n")
    assert parse_colour_ranges(text) == colours


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("rojo", "red"),
        ("Roja", "red"),
        ("AMARILLO", "yellow"),
        ("morado", "purple"),
        ("violeta", "purple"),
        ("marrón", "brown"),
        ("marron", "brown"),
        ("MARRÓN", "brown"),
        ("gris", "grey"),
        ("gray", "grey"),
        ("cian", "cyan"),
        ("blanca", "white"),
        ("negro", "black"),
        ("rosa", "pink"),
        ("naranja", "orange"),
        ("azul", "blue"),
        ("verde", "green"),
        ("Red", "red"),
    ],
)
def test_each_spanish_and_english_name_is_its_code(name: str, code: str) -> None:
    assert colour_code(name) == code


def test_the_five_colour_set_in_spanish() -> None:
    text = "1-18 rojo, 19-36 amarillo, 37-54 verde, 55-72 azul, 73-90 morado"
    assert parse_colour_ranges(text) == default_colours()
    assert colour_problems(parse_colour_ranges(text)) == []


@pytest.mark.parametrize(
    ("text", "reason", "named"),
    [
        ("1-18 rojo 19-36 amarillo", "not_range_and_colour", "1-18 rojo 19-36 amarillo"),
        ("1-18", "not_range_and_colour", "1-18"),
        ("uno-18 rojo", "not_numbers", "uno-18"),
        ("1-91 rojo", "out_of_range", "1-91 rojo"),
        ("18-1 rojo", "out_of_range", "18-1 rojo"),
        ("1-18 rojo, 10-20 verde", "ball_twice", "10-20 verde"),
        ("1-18 fucsia", "unknown_colour", "fucsia"),
    ],
)
def test_a_part_that_cannot_be_read_is_named(text: str, reason: str, named: str) -> None:
    with pytest.raises(ColourRangeError) as refused:
        parse_colour_ranges(text)
    assert refused.value.reason == reason
    assert named in str(refused.value)


def test_the_page_names_every_colour_in_spanish_and_reads_it_back() -> None:
    """The Spanish the page shows (bingo.traditional.labels, the .po's translations) is a name the parser
    knows, so the
    pre-filled text and a set's listed ranges read back; and the parser's refusals read in Spanish."""
    with translation.override("es"):
        shown = {code: labels.colour_label(code) for code in KNOWN_COLOURS}
        assert shown["red"] == "rojo" and shown["brown"] == "marrón" and shown["purple"] == "morado"
        assert all(colour_code(name) == code for code, name in shown.items()), shown
        text = colour_ranges(default_colours(), labels.colour_label)
        assert text == "1-18 rojo, 19-36 amarillo, 37-54 verde, 55-72 azul, 73-90 morado"
        assert parse_colour_ranges(text) == default_colours()
        with pytest.raises(ColourRangeError) as refused:
            parse_colour_ranges("1-18 rojo, 19-90 fucsia")
        said = labels.colour_range_error(refused.value)
        assert "«19-90 fucsia»" in said and "no es un color" in said and "marrón" in said, said
        problems = colour_problems(parse_colour_ranges("1-89 rojo, 90 azul"))
        assert [labels.colour_problem(p) for p in problems] == [
            "un juego de bolas tiene al menos cuatro colores"
        ]
        problems = colour_problems(parse_colour_ranges("1-89 rojo"))
        assert labels.colour_problem(problems[0]) == "bolas sin color: [90]"
