"""`check_network_span` accepts exactly the venue sets whose every distinct region pair has a valid
agreement, against a plain-Python oracle over random agreements (none, valid, protocol missing, revoked,
expired, not yet valid) and random venue sets (venues without a region among them)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import timedelta
from itertools import combinations

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from halls import span
from halls.errors import Conflict
from halls.models import Jurisdiction, Region, Venue
from halls.services import regions
from tests.halls.region_support import agree, some_operator, today

CODES = ("AN", "CT", "EU", "ML")
STATES = ("none", "valid", "no_protocol", "revoked", "expired", "not_yet_valid")
PAIRS = list(combinations(range(len(CODES)), 2))

plans = st.fixed_dictionaries(
    {
        "states": st.lists(st.sampled_from(STATES), min_size=len(PAIRS), max_size=len(PAIRS)),
        "venues": st.lists(st.sampled_from([None, 0, 1, 2, 3]), max_size=6),
    }
)


@contextlib.contextmanager
def _rolled_back() -> Iterator[None]:
    """One example's rows, rolled back after; marked as a test case's transaction so each service call
    inside is its own transaction (halls.locks' check)."""
    atomic = transaction.atomic()
    atomic._from_testcase = True  # type: ignore[attr-defined]  # Django's mark of a test case's atomics
    with atomic:
        yield
        transaction.set_rollback(True)


def _record(a: Region, b: Region, state: str) -> None:
    day = timedelta(days=1)
    if state == "none":
        return
    if state == "expired":
        agree(a, b, valid_from=today() - 10 * day, valid_until=today() - day)
    elif state == "not_yet_valid":
        agree(a, b, valid_from=today() + day)
    else:
        agreement = agree(a, b, protocol=state != "no_protocol")
        if state == "revoked":
            regions.revoke_agreement(agreement=agreement, actor="test")


# What the refusal says the first uncovered pair lacks, by the state its agreement was left in.
WHY = {
    "none": "agreement",
    "no_protocol": "administration_protocol",
    "revoked": "revoked",
    "expired": "expired",
    "not_yet_valid": "not_yet_valid",
}


def _verdict(venues: list[Venue]) -> Conflict | None:
    try:
        regions.check_network_span(network=None, venues=venues)
    except Conflict as refused:
        return refused
    return None


@pytest.mark.django_db
def test_span_accepts_exactly_the_fully_agreed_sets() -> None:
    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(plan=plans)
    def run(plan: dict[str, list]) -> None:  # type: ignore[type-arg]
        with _rolled_back():
            some_operator()
            made = [
                Region.objects.create(code=code, name=code, jurisdiction=Jurisdiction.ML) for code in CODES
            ]
            for (i, j), state in zip(PAIRS, plan["states"], strict=True):
                _record(made[i], made[j], state)
            venues = [
                Venue.objects.create(
                    name=f"V{n}", licence_number=f"V{n}", region=None if r is None else made[r]
                )
                for n, r in enumerate(plan["venues"])
            ]
            # The oracle: every pair of distinct regions present has a "valid" agreement.
            valid = {pair for pair, state in zip(PAIRS, plan["states"], strict=True) if state == "valid"}
            present = sorted({r for r in plan["venues"] if r is not None})
            missing = [pair for pair in combinations(present, 2) if pair not in valid]
            refused = _verdict(venues)
            if not missing:
                assert refused is None, f"refused a fully agreed set: {refused}"
                return
            assert refused is not None, f"accepted a set lacking {missing}"
            first = missing[0]  # CODES are in code order, so index order is the refusal's order
            assert refused.code == "no_region_agreement"
            assert refused.details["regions"] == [CODES[first[0]], CODES[first[1]]]
            assert refused.details["missing"] == [WHY[plan["states"][PAIRS.index(first)]]]

    run()


@given(
    regions_=st.lists(st.one_of(st.none(), st.integers(0, 5)), max_size=8),
    agreed=st.sets(st.tuples(st.integers(0, 5), st.integers(0, 5))),
)
def test_first_uncovered_is_the_first_pair_in_order_lacking_cover(
    regions_: list[int | None], agreed: set[tuple[int, int]]
) -> None:
    def covered(a: int, b: int) -> bool:
        return (a, b) in agreed or (b, a) in agreed

    present = sorted({r for r in regions_ if r is not None})
    lacking = [(a, b) for a, b in combinations(present, 2) if not covered(a, b)]
    assert span.first_uncovered(regions_, covered) == (lacking[0] if lacking else None)
