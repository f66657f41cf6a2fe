"""jackpots.sources.PoolSource, the pool bet's source as a value: its text is the one the contribution and
award rows have always kept ("machine:7", "table:12/hand:40/seat:3"), it parses back to the same value, and
a text that names no member is refused. Pure: no database."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jackpots.sources import MAX_TEXT, PoolSource, SourceError

words = st.text(
    alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Nd"), whitelist_characters="_-.#"),
    min_size=1,
    max_size=12,
)
details = st.lists(
    st.tuples(words, st.none() | words | st.integers(min_value=0, max_value=10**9)), max_size=3
)


@given(words, words | st.integers(min_value=1, max_value=2**63 - 1), details)
def test_a_source_is_its_text_and_back(
    kind: str, ident: str | int, where: list[tuple[str, str | int | None]]
) -> None:
    source = PoolSource.of(kind, ident)
    for key, value in where:
        source = source.at(key, value)
    text = str(source)
    assert PoolSource.parse(text) == source
    assert str(PoolSource.parse(text)) == text
    assert text.startswith(f"{kind}:{ident}")
    assert source.member == PoolSource.of(kind, ident) and str(source.member) == f"{kind}:{ident}"
    assert text.count("/") == len(where)


def test_the_stored_texts_keep_their_form() -> None:
    """What the columns already hold on existing databases: parsed and written back unchanged."""
    assert str(PoolSource.of("machine", 7)) == "machine:7"
    at_hand = PoolSource.of("table", 12).at("hand", 40)
    assert str(at_hand.at("seat", 3)) == "table:12/hand:40/seat:3"
    assert str(at_hand.at("total")) == "table:12/hand:40/total"
    assert str(PoolSource.of("bingo_room", 5).at("game", 88)) == "bingo_room:5/game:88"
    for stored in ("venue:3/game:17", "especiality:2/egame:9", "machine:m1", "table:1/x"):
        assert str(PoolSource.parse(stored)) == stored
    seat = PoolSource.parse("table:12/hand:40/seat:3")
    assert (seat.kind, seat.id, seat.part("hand"), seat.part("seat"), seat.part("game")) == (
        "table",
        "12",
        "40",
        "3",
        None,
    )


@pytest.mark.parametrize(
    "text", ["", " ", "table", "table:", ":1", "table:1/", "table:1//seat:2", "a:b:c", "x" * (MAX_TEXT + 1)]
)
def test_a_text_naming_no_member_is_refused(text: str) -> None:
    with pytest.raises(SourceError):
        PoolSource.parse(text)


@pytest.mark.parametrize(("kind", "ident"), [("", "1"), ("table", ""), ("ta/ble", "1"), ("table", "1:2")])
def test_a_member_is_a_kind_and_an_id_without_separators(kind: str, ident: str) -> None:
    with pytest.raises(SourceError):
        PoolSource(kind, ident)


def test_a_source_is_a_frozen_value() -> None:
    source = PoolSource.of("machine", 7)
    assert source == PoolSource("machine", "7") and hash(source) == hash(PoolSource("machine", "7"))
    stored: object = "machine:7"
    assert source != stored  # a value, not its text: code compares values, the columns keep the text
    with pytest.raises(AttributeError):
        source.id = "8"  # type: ignore[misc]


def test_where_is_the_detail_as_text() -> None:
    assert PoolSource.parse("table:12/hand:40/seat:3").where == "hand:40/seat:3"
    assert PoolSource.of("machine", 7).where == ""
