"""Properties of the door's pure pieces for the authority: an online answer is read as listed or not
listed only when it is exactly 200 {"listed": bool}; a receipt's masked document shows its last three
characters and nothing before them."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from halls.door import online
from halls.door.documents import SHOWN_CHARACTERS, Document, Kind, masked, tail

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


@given(status=st.integers(100, 599), content=st.binary(max_size=64))
def test_any_answer_is_read_without_raising(status: int, content: bytes) -> None:
    outcome = online.read_answer(status, content)
    if outcome.answered:
        body = json.loads(content)
        assert status == 200 and body["listed"] is (outcome is online.Outcome.LISTED)


@given(status=st.integers(100, 599), body=json_values)
def test_only_a_200_with_a_boolean_listed_is_an_answer(status: int, body: object) -> None:
    outcome = online.read_answer(status, json.dumps(body).encode())
    valid = status == 200 and isinstance(body, dict) and isinstance(body.get("listed"), bool)
    assert outcome.answered is valid
    if status != 200:
        assert outcome is online.Outcome.HTTP_ERROR


@given(number=st.text(alphabet="ABCDEFGHJKLMNPQRSTUVWXYZ0123456789", min_size=5, max_size=20))
def test_a_masked_document_shows_its_last_characters_only(number: str) -> None:
    document = Document(Kind.PASSPORT, number, "FR")
    shown = tail(document)
    text = masked(document.kind.value, shown, len(number))
    assert shown == number[-SHOWN_CHARACTERS:] and text.endswith(shown)
    hidden = text.removeprefix("PASSPORT ").removesuffix(shown)
    assert set(hidden) == {"*"} and number[:-SHOWN_CHARACTERS] not in text.removeprefix("PASSPORT ")[:-3]
