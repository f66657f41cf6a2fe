"""The alarms the node derives from the messages: a game's sales or balls without its commitment, a prize
paid from a pool above the pool's last reported amount."""

from __future__ import annotations

from typing import Any

import pytest

from halls.regulator.models import Alarm, AlarmKind, FeedMessage, InstallationKind
from halls.regulator.services import derived
from tests.portal.support import Sender, accept, register

pytestmark = pytest.mark.django_db

VENUE = "ML-B-0001"


@pytest.fixture
def venue() -> Sender:
    return register("Bingo Melilla Centro", uid="a1" * 8, licence=VENUE)


def ball(game: str, ordinal: int, number: int) -> dict[str, Any]:
    return {"venue": VENUE, "room": "Sala 1", "game": game, "ordinal": ordinal, "number": number}


def committed(game: str) -> dict[str, Any]:
    return {
        "venue": VENUE, "room": "Sala 1", "game": game, "commitment": "ab" * 32,
        "committed_at": "2026-12-06T20:00:00+00:00",
    }  # fmt: skip


def sales(game: str) -> dict[str, Any]:
    return {
        "venue": VENUE, "room": "Sala 1", "game": game, "cards": 10, "sales": "20.00", "sales_digest": None,
        "closed_at": "2026-12-06T20:01:00+00:00",
    }  # fmt: skip


def pool_amounts(*levels: tuple[str, str], pool: str = "BOLSA", venue: str | None = VENUE) -> dict[str, Any]:
    return {
        "venue": venue,
        "pools": [
            {
                "pool": pool, "name": "Bolsa acumulada", "family": "bingo",
                "levels": [{"level": level, "amount": amount} for level, amount in levels],
            }
        ],
    }  # fmt: skip


def prize(amount: str, pool: str | None = "BOLSA", game: str = "electronic-40") -> dict[str, Any]:
    return {
        "venue": VENUE, "room": "Sala 1", "game": game, "prize": "B", "name": "Bingo", "amount": amount,
        "ordinal": 41, "cards": ["000123"], "pool": pool, "where": VENUE,
    }  # fmt: skip


def test_balls_of_an_uncommitted_electronic_game_raise_one_alarm_naming_the_game(venue: Sender) -> None:
    accept(venue, "game.ball", ball("electronic-40", 1, 17))
    accept(venue, "game.ball", ball("electronic-40", 2, 5))  # the same game: no second alarm
    (alarm,) = Alarm.objects.all()
    assert alarm.kind == AlarmKind.NO_COMMITMENT
    assert alarm.installation_id == venue.installation.pk
    assert alarm.detail == {
        "venue": VENUE, "room": "Sala 1", "game": "electronic-40", "sequence": 1, "message": "game.ball",
    }  # fmt: skip
    assert alarm.cleared_at is None


def test_sales_without_a_commitment_raise_it_too_and_a_committed_game_raises_nothing(venue: Sender) -> None:
    accept(venue, "game.sales", sales("simultaneous-SB-7"))
    assert Alarm.objects.get().detail["game"] == "simultaneous-SB-7"
    accept(venue, "game.committed", committed("electronic-41"))
    accept(venue, "game.sales", sales("electronic-41"))
    accept(venue, "game.ball", ball("electronic-41", 1, 9))
    assert Alarm.objects.count() == 1


def test_a_commitment_of_another_venue_or_of_another_installation_does_not_count(venue: Sender) -> None:
    accept(venue, "game.committed", {**committed("electronic-42"), "venue": "ML-B-0002"})
    accept(venue, "game.ball", ball("electronic-42", 1, 9))
    assert Alarm.objects.get().detail["game"] == "electronic-42"
    other = register("Bingo Ceuta", uid="b2" * 8, licence="CE-B-0001")
    accept(other, "game.committed", committed("electronic-43"))  # the same names, another installation
    accept(venue, "game.ball", ball("electronic-43", 1, 9))
    assert sorted(a.detail["game"] for a in Alarm.objects.all()) == ["electronic-42", "electronic-43"]


def test_traditional_games_drawn_by_a_blower_need_no_commitment_unless_the_setting_says(
    venue: Sender, settings: Any
) -> None:
    accept(venue, "game.ball", ball("traditional-12", 1, 44))
    assert not Alarm.objects.exists()
    settings.HALL_REGULATOR_COMMITTED_ROOMS = ["traditional"]
    accept(venue, "game.ball", ball("traditional-13", 1, 44))
    assert Alarm.objects.get().detail["game"] == "traditional-13"


def test_a_prize_above_its_pools_last_reported_amount_raises_an_alarm_with_both_amounts(
    venue: Sender,
) -> None:
    accept(venue, "pool.amounts", pool_amounts(("1", "60.00"), ("2", "40.00")))
    accept(venue, "game.committed", committed("electronic-40"))
    accept(venue, "game.prize", prize("100.00"))  # the whole pool: fine
    assert not Alarm.objects.exists()
    accept(venue, "game.prize", prize("100.01"))
    (alarm,) = Alarm.objects.all()
    assert alarm.kind == AlarmKind.PRIZE_ABOVE_POOL
    assert alarm.detail == {
        "venue": VENUE, "game": "electronic-40", "prize": "B", "pool": "BOLSA", "amount": "100.01",
        "reported": "100.00", "where": VENUE, "sequence": 4, "message": "game.prize",
    }  # fmt: skip
    assert "000123" not in str(alarm.detail)  # the winning card's serial is the prize's, not the alarm's


def test_the_last_report_counts_and_a_pool_never_reported_or_a_prize_from_no_pool_raises_nothing(
    venue: Sender,
) -> None:
    accept(venue, "pool.amounts", pool_amounts(("1", "500.00")))
    accept(venue, "pool.amounts", pool_amounts(("1", "80.00")))  # after an award elsewhere
    accept(venue, "game.prize", prize("90.00", game="traditional-3"))
    assert Alarm.objects.get().detail["reported"] == "80.00"
    accept(venue, "game.prize", prize("900.00", pool="OTHER", game="traditional-3"))
    accept(venue, "game.prize", prize("900.00", pool=None, game="traditional-3"))
    assert Alarm.objects.count() == 1


def test_a_network_pool_paid_at_a_venue_is_compared_with_its_centrals_report(venue: Sender) -> None:
    central = register("Central Melilla", uid="c3" * 8, kind=InstallationKind.CENTRAL)
    accept(central, "pool.amounts", pool_amounts(("1", "250.00"), pool="IB1", venue=None))
    accept(venue, "game.prize", prize("250.00", pool="IB1", game="traditional-3"))
    assert not Alarm.objects.exists()
    accept(venue, "game.prize", prize("260.00", pool="IB1", game="traditional-3"))
    assert Alarm.objects.get().detail["reported"] == "250.00"


def test_a_pool_award_above_its_levels_reported_amount_raises_an_alarm(venue: Sender) -> None:
    accept(venue, "pool.amounts", pool_amounts(("1", "60.00"), ("2", "40.00")))
    award = {"venue": VENUE, "pool": "BOLSA", "level": "2", "amount": "40.00", "before": "40.00",
             "after": "0.00", "where": VENUE}  # fmt: skip
    accept(venue, "pool.award", award)
    assert not Alarm.objects.exists()
    accept(venue, "pool.award", {**award, "amount": "45.50"})
    alarm = Alarm.objects.get()
    assert (alarm.detail["level"], alarm.detail["amount"], alarm.detail["reported"]) == (
        "2",
        "45.50",
        "40.00",
    )


@pytest.mark.django_db(transaction=True)
def test_the_check_runs_only_inside_the_intakes_transaction(venue: Sender) -> None:
    message = accept(venue, "heartbeat", {"last_sequence": 0})
    with pytest.raises(RuntimeError):
        derived.check(FeedMessage.objects.get(pk=message.pk))


def stored_run(sender: Sender, messages: list[tuple[str, dict[str, Any]]]) -> list[FeedMessage]:
    """One batch's run stored as the intake stores it (in order, after what the installation holds)."""
    from django.utils import timezone

    start = sender.installation.accepted_sequence
    now = timezone.now()
    rows = [
        FeedMessage(
            installation=sender.installation, sequence=start + n, kind=kind, at=now, payload=payload,
            signature="0" * 128, received_at=now,
        )
        for n, (kind, payload) in enumerate(messages, start=1)
    ]  # fmt: skip
    return FeedMessage.objects.bulk_create(rows)


def test_a_batch_asks_for_a_games_commitment_once_and_raises_what_message_by_message_would(
    venue: Sender, django_assert_max_num_queries: Any
) -> None:
    from django.db import transaction

    accept(venue, "game.committed", committed("electronic-50"))  # an earlier batch
    run = [("game.ball", ball("electronic-50", n, n)) for n in range(1, 31)]
    run += [("game.committed", committed("electronic-51")), ("game.sales", sales("electronic-51"))]
    run += [("game.ball", ball("electronic-52", n, n)) for n in range(1, 11)]  # never committed
    with transaction.atomic():
        rows = stored_run(venue, run)
        # electronic-50 asked once; 52 asked, its alarm looked up and made
        with django_assert_max_num_queries(4):
            raised = derived.check_all(rows)
    first_of_52 = rows[32].sequence
    assert [(a.detail["game"], a.detail["sequence"]) for a in raised] == [("electronic-52", first_of_52)]
    assert Alarm.objects.count() == 1
