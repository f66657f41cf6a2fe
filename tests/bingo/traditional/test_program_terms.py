"""The digest of a prize program's terms (bingo.traditional.programs.terms, pure): one canonical text,
whatever the order of the keys; a change of any value changes it; people's forms read back to it."""

from __future__ import annotations

import hashlib
import json

from hypothesis import given
from hypothesis import strategies as st

from bingo.traditional.programs import terms

PARAMS = st.dictionaries(
    st.text(min_size=1, max_size=12),
    st.one_of(st.text(max_size=12), st.integers(-1000, 1000), st.lists(st.integers(0, 90), max_size=4)),
    max_size=6,
)


def make(params: dict[str, object], name: str = "Prima 30") -> dict[str, object]:
    return terms.program_terms(
        room=3, code="PRIMA", program_type="BA-1", name=name, params=params, effective_from=None
    )


@given(PARAMS)
def test_the_digest_is_sha256_of_the_sorted_compact_json_whatever_the_key_order(params):
    forward = make(params)
    backward = make(dict(reversed(list(params.items()))))
    assert terms.digest(forward) == terms.digest(backward)
    text = json.dumps(forward, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    assert terms.digest(forward) == hashlib.sha256(text).hexdigest()


@given(PARAMS, st.text(min_size=1, max_size=12), st.text(max_size=12))
def test_any_other_value_changes_the_digest(params, key, value):
    changed = {**params, key: value}
    if changed != params:
        assert terms.digest(make(changed)) != terms.digest(make(params))
    assert terms.digest(make(params, name="Prima 31")) != terms.digest(make(params))


@given(PARAMS)
def test_the_grouped_and_short_forms_read_back_to_the_digest(params):
    value = terms.digest(make(params))
    assert terms.typed(terms.grouped(value)) == value
    assert terms.typed(terms.grouped(value).lower().replace(" ", "-")) == value
    assert terms.short(value) == terms.grouped(value)[:9].replace(" ", "-")
    assert len(terms.short(value)) == 9


def test_a_typed_digest_that_is_not_64_hex_digits_is_none():
    assert terms.typed("") is None
    assert terms.typed("3F2A 9C10") is None
    assert terms.typed("g" * 64) is None
    assert terms.typed("A" * 64) == "a" * 64


@given(PARAMS)
def test_the_terms_digest_is_the_four_eyes_digest_of_the_same_params(params):
    from halls.foureyes import params_digest, posted_digest_of

    put = make(params)
    assert terms.digest(put) == params_digest(put)  # a program proposal's digest is its terms' digest
    assert posted_digest_of(terms.grouped(terms.digest(put))) == terms.digest(put)
    assert posted_digest_of(f"https://hall.example/t/{terms.digest(put)}/") == terms.digest(put)
