"""The central takes a hall's run of sale reports (simultaneous.sale) in one call of its batch handler
(issue 30): the same statements whatever the run's length, each report answered as it would be alone
(counted once per operation, the hall's totals after it, a refusal writing nothing of it), and the totals
exact when halls report at once while the sales close. Run on PostgreSQL and on SQLite (the threads'
test on PostgreSQL only: SQLITE_DESELECT)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from bingo.network.simultaneous.models import NetworkGame, ReportedSale
from bingo.network.simultaneous.services import central
from halls import money
from halls.link.kinds import LinkKind
from halls.link.models import InboxMessage, VenueLink
from halls.link.services import inbox
from tests.bingo.network.simultaneous.support import Net, make_network, new_game
from tests.threads import in_threads

pytestmark = pytest.mark.django_db


@pytest.fixture
def net(db: None) -> Net:
    return make_network()


def _applied(venue_id: int) -> int:
    found = VenueLink.objects.filter(venue_id=venue_id).values_list("applied_sequence", flat=True).first()
    return int(found or 0)


def _sale(of: NetworkGame, operation: int, first: int, cards: int = 1, **changed: Any) -> dict[str, Any]:
    game = of
    payload = {
        "game": game.code,
        "operation": operation,
        "returned": False,
        "first": first,
        "last": first + cards - 1,
        "cards": cards,
        "amount": str(game.card_price * cards),
    }
    return {**payload, **changed}


def _numbered(venue_id: int, payloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    after = _applied(venue_id)
    kind = str(LinkKind.SB_SALE)
    return [{"sequence": after + n, "kind": kind, "payload": p} for n, p in enumerate(payloads, 1)]


def _allocated(net: Net, game: NetworkGame, hall: int) -> int:
    return net.hall_game(net.halls[hall], game).first_serial


def test_a_run_of_sale_reports_costs_the_same_statements_whatever_its_length(net: Net) -> None:
    game = new_game(net, price="1.50")
    runs = {}
    for hall, count in ((0, 2), (1, 10)):
        venue_id, first = net.halls[hall].venue.pk, _allocated(net, game, hall)
        reports = [_sale(game, 100 + n, first + n) for n in range(count + 1)]
        inbox.accept_many(venue_id=venue_id, messages=_numbered(venue_id, reports[:1]))  # its link made
        with CaptureQueriesContext(connection) as queries:
            batch = inbox.accept_many(venue_id=venue_id, messages=_numbered(venue_id, reports[1:]))
        assert [a.status for a in batch.accepted] == ["applied"] * count
        # Each answered the hall's totals after it.
        assert [a.answer for a in batch.accepted] == [
            {"cards": n, "amount": money.text(Decimal("1.50") * n)} for n in range(2, count + 2)
        ]
        runs[count] = len(queries)
    assert runs[2] == runs[10], runs
    # One transaction: the link locked, the game's id and its row FOR SHARE, the hall's allocation, totals
    # and reported operations, one INSERT of the reports, one of the inbox rows, the link saved (and the
    # savepoints: the test's transaction holds the request's).
    assert runs[10] <= 14, runs
    assert ReportedSale.objects.filter(game=game).count() == 14
    assert InboxMessage.objects.filter(kind=str(LinkKind.SB_SALE)).count() == 14


def test_a_run_answers_each_report_as_it_would_be_answered_alone(
    net: Net, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same reports sent by one hall as a run and by another one message per request: the same
    answers, refusals and rows; the run in one transaction, going on past its refusals."""
    game = new_game(net, price="2.00")

    def reports(first: int) -> list[dict[str, Any]]:
        return [
            _sale(game, 1, first),
            _sale(game, 2, first + 1, cards=2),
            _sale(game, 1, first),  # sent again (a lost answer): kept once, answered the totals
            _sale(game, 3, first + 500),  # never allocated to the hall
            _sale(game, 4, first + 1, returned=True),
            _sale(game, 5, first + 3, amount="1.99"),  # does not add up
            _sale(game, 6, first + 3, game="SB-NONE"),  # no such game
            _sale(game, 7, first + 3, cards=3),
        ]

    groups: list[int] = []
    real = inbox._accept_group

    def spy(venue_id: int, messages: list[dict[str, Any]], contact: Any) -> Any:
        done, refusal = real(venue_id, messages, contact)
        groups.append(len(done))
        return done, refusal

    monkeypatch.setattr(inbox, "_accept_group", spy)
    run_venue, alone_venue = net.halls[0].venue.pk, net.halls[1].venue.pk
    run = inbox.accept_many(
        venue_id=run_venue, messages=_numbered(run_venue, reports(_allocated(net, game, 0)))
    ).accepted
    assert groups == [8]  # one transaction
    alone = [
        inbox.accept_many(venue_id=alone_venue, messages=[message]).accepted[0]
        for message in _numbered(alone_venue, reports(_allocated(net, game, 1)))
    ]

    def said(accepted: list[inbox.Accepted]) -> list[tuple[str, Any]]:
        return [
            (a.status, a.answer["refused"]["code"] if a.status == "refused" else a.answer) for a in accepted
        ]

    assert (
        said(run)
        == said(alone)
        == [
            ("applied", {"cards": 1, "amount": "2.00"}),
            ("applied", {"cards": 3, "amount": "6.00"}),
            ("applied", {"cards": 3, "amount": "6.00"}),
            ("refused", "card_not_allocated"),
            ("applied", {"cards": 2, "amount": "4.00"}),
            ("refused", "bad_sale_report"),
            ("refused", "unknown_network_game"),
            ("applied", {"cards": 5, "amount": "10.00"}),
        ]
    )
    for venue_id in (run_venue, alone_venue):
        rows = ReportedSale.objects.filter(game=game, venue_id=venue_id)
        assert sorted(rows.values_list("operation", flat=True)) == [1, 2, 4, 7]
        answers = list(InboxMessage.objects.filter(venue_id=venue_id).order_by("sequence"))
        assert [m.answer for m in answers] == [a.answer for a in (run if venue_id == run_venue else alone)]
        assert _applied(venue_id) == answers[-1].sequence


def test_a_run_after_the_close_is_refused_whole_and_writes_no_sale(net: Net) -> None:
    game = new_game(net)
    central.close_sales(game=game, actor=net.boss)
    venue_id = net.halls[2].venue.pk
    first = _allocated(net, game, 2)
    accepted = inbox.accept_many(
        venue_id=venue_id, messages=_numbered(venue_id, [_sale(game, n, first + n) for n in range(3)])
    ).accepted
    assert [(a.status, a.answer["refused"]["code"]) for a in accepted] == [
        ("refused", "network_sales_closed")
    ] * 3
    assert not ReportedSale.objects.filter(game=game).exists()
    assert InboxMessage.objects.filter(venue_id=venue_id).count() == 3


@pytest.mark.django_db(transaction=True)
def test_halls_reporting_runs_at_once_while_the_sales_close_count_exactly() -> None:
    """Three halls send runs of reports on threads of their own while the central closes the sales: every
    report is counted once or refused as after the close, and the game's totals are exactly the counted
    ones (the close waits for the runs in flight, the runs after it see it closed)."""
    net = make_network()
    game = new_game(net, strips=(4, 4, 4), price="1.25")
    answers: dict[int, list[inbox.Accepted]] = {}

    def hall(index: int) -> Any:
        venue_id = net.halls[index].venue.pk
        first = _allocated(net, game, index)

        def send() -> None:
            got: list[inbox.Accepted] = []
            for batch in range(4):
                payloads = [_sale(game, batch * 10 + n, first + batch * 6 + n * 2, cards=2) for n in range(3)]
                got += inbox.accept_many(venue_id=venue_id, messages=_numbered(venue_id, payloads)).accepted
            answers[venue_id] = got

        return send

    def close() -> None:
        central.close_sales(game=NetworkGame.objects.get(pk=game.pk), actor=net.boss)

    assert in_threads([hall(0), hall(1), hall(2), close]) == []
    game.refresh_from_db()
    counted = 0
    for venue_id, got in answers.items():
        start = got[0].sequence
        assert [a.sequence for a in got] == list(range(start, start + 12))
        applied = [a for a in got if a.status == "applied"]
        refused = [a for a in got if a.status == "refused"]
        assert {a.answer["refused"]["code"] for a in refused} <= {"network_sales_closed"}
        # A hall's reports counted before the close, refused after it: never one after a refusal.
        assert got[: len(applied)] == applied
        rows = ReportedSale.objects.filter(game=game, venue_id=venue_id)
        assert rows.count() == len(applied)
        assert (applied[-1].answer["cards"] if applied else 0) == 2 * len(applied)
        counted += 2 * len(applied)
    assert game.cards_sold == counted
    assert game.sales_total == Decimal("1.25") * counted
