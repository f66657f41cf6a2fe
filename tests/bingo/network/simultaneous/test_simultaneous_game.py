"""Simultaneous bingo (SB-01, OP-19) in one database playing the central and three member halls through
the link's loopback: allocation, sales reported and closed network-wide, the central draw in every hall,
claims verified in the hall and decided by the central, prizes paid in each hall."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import transaction
from django.utils import timezone

from bingo.network.simultaneous.models import (
    Allocation,
    ClaimStatus,
    HallAward,
    HallGame,
    HallGameState,
    NetworkClaim,
    NetworkGame,
    NetworkGameState,
    NetworkPrize,
    ReportedSale,
)
from bingo.network.simultaneous.services import central, venue
from bingo.traditional import voice
from bingo.traditional.models import Ball, Card, GameState, SaleOperation
from bingo.traditional.services import readmodels
from halls import money
from halls.cashier.models import Payable
from halls.errors import Conflict
from halls.link import registry
from halls.link.kinds import LinkKind
from halls.link.models import InboxMessage
from halls.link.services import inbox, loopback, outbox
from tests.bingo.network.simultaneous.support import Net, Script, card, draw, make_network, new_game

pytestmark = pytest.mark.django_db


@pytest.fixture
def net(db: None) -> Net:
    return make_network()


def _sell_everywhere(net: Net, game: NetworkGame, counts: tuple[int, int, int] = (6, 4, 2)) -> None:
    for hall, count in zip(net.halls, counts, strict=True):
        hall_game = net.hall_game(hall, game)
        venue.sell(
            hall_game=hall_game,
            first=hall_game.first_serial,
            last=hall_game.first_serial + count - 1,
            actor=hall.cashier,
        )


def _to_the_draw(net: Net, game: NetworkGame, counts: tuple[int, int, int] = (6, 4, 2)) -> NetworkGame:
    _sell_everywhere(net, game, counts)
    net.sync()
    central.close_sales(game=game, actor=net.boss)
    central.start_draw(game=game, actor=net.boss)
    net.follow()
    net.sync()  # each hall's count of its cards in play reconciled at the central
    game.refresh_from_db()
    return game


def test_allocation_gives_each_hall_its_own_disjoint_cards(net: Net) -> None:
    game = new_game(net, strips=(3, 2, 1))
    runs = sorted(Allocation.objects.filter(game=game).values_list("first_serial", "last_serial"))
    assert runs == [(1, 18), (19, 30), (31, 36)]
    faces: dict[str, int] = {}
    for hall in net.halls:
        hall_game = net.hall_game(hall, game)
        assert hall_game.state == HallGameState.SELLING
        assert hall_game.game is not None and hall_game.game.state == GameState.ON_SALE
        own = Card.objects.filter(
            series=hall_game.series, serial__gte=hall_game.first_serial, serial__lte=hall_game.last_serial
        )
        for c in own:
            assert c.key not in faces, f"card {c.serial} repeats a face of another hall"
            faces[c.key] = c.serial
            # The hall's card is the central's master card.
            assert card(hall_game, c.serial).numbers == central.master_card(game, c.serial).numbers
    assert len(faces) == 36


def test_sales_reported_in_their_transaction_and_the_totals_exact(net: Net) -> None:
    game = new_game(net, price="1.50")
    _sell_everywhere(net, game)
    first = net.halls[0]
    hall_game = net.hall_game(first, game)
    venue.return_cards(
        hall_game=hall_game, first=hall_game.first_serial, last=hall_game.first_serial, actor=first.cashier
    )
    assert outbox.backlog(venue_id=first.venue.pk) == 2
    net.sync()
    assert ReportedSale.objects.filter(game=game).count() == 4
    central.close_sales(game=game, actor=net.boss)
    game.refresh_from_db()
    # 5 + 4 + 2 cards at 1.50; prizes 10 % (Line), 40 % (Bingo), 10 % (each hall) of 16.50.
    assert (game.cards_sold, game.sales_total) == (11, Decimal("16.50"))
    assert (game.line_prize, game.bingo_prize, game.hall_prize) == (
        Decimal("1.65"),
        Decimal("6.60"),
        Decimal("1.65"),
    )
    net.follow()
    for hall, cards in zip(net.halls, (5, 4, 2), strict=True):
        hall_game = net.hall_game(hall, game)
        assert hall_game.state == HallGameState.PLAYING
        assert hall_game.game is not None
        local = hall_game.game
        local.refresh_from_db()
        assert (local.state, local.cards_sold) == (GameState.DRAWING, cards)
        assert local.sales_total == Decimal("1.50") * cards
        assert local.announcement["network"]["sales_total"] == "16.50"
        # The hall's screens show the network's Line and Bingo prizes (the hall game pays none itself).
        shown = readmodels.game_summary(local, public=True)
        assert (shown["line_prize"], shown["bingo_prize"]) == (Decimal("1.65"), Decimal("6.60"))
        said = " ".join(voice.CLIPS[k] for k in local.announcement["voice"])  # the hall's audio screen
        assert said.startswith(f"Cartones vendidos {voice.number_text(cards)} del número")
        assert "Premio de línea: un euro con sesenta y cinco céntimos" in said
        # The cashier's books: what the drawer took is what the central counted for this hall.
        assert sum(
            (op.amount if op.kind == "sell" else -op.amount)
            for op in SaleOperation.objects.filter(game=local)
        ) == Decimal(hall_game.announcement["hall_amount"])


def test_the_close_is_network_wide_and_a_late_sale_is_refused(net: Net) -> None:
    game = new_game(net)
    _sell_everywhere(net, game)
    net.sync()
    central.close_sales(game=game, actor=net.boss)
    # A hall that has not heard the close yet sells on; the central refuses that sale: it is not in the game.
    third = net.halls[2]
    hall_game = net.hall_game(third, game)
    venue.sell(
        hall_game=hall_game, first=hall_game.last_serial, last=hall_game.last_serial, actor=third.cashier
    )
    (late,) = loopback.deliver(venue_id=third.venue.pk)
    assert late.status == "refused" and late.answer["refused"]["code"] == "network_sales_closed"
    assert not ReportedSale.objects.filter(
        game=game, venue=third.venue, last_serial=hall_game.last_serial
    ).exists()
    net.follow()
    hall_game.refresh_from_db()
    assert hall_game.state == HallGameState.RECONCILING
    assert venue.unconfirmed_serials(hall_game) == [hall_game.last_serial]
    with pytest.raises(Conflict) as closed:
        venue.sell(
            hall_game=hall_game,
            first=hall_game.first_serial + 5,
            last=hall_game.first_serial + 5,
            actor=third.cashier,
        )
    assert closed.value.code == "not_selling"
    venue.refund_unconfirmed(hall_game=hall_game, actor=third.cashier)
    hall_game.refresh_from_db()
    assert hall_game.state == HallGameState.PLAYING
    assert hall_game.game is not None and hall_game.game.cards_sold == 2


def test_the_central_draw_is_applied_in_every_hall(net: Net, monkeypatch: pytest.MonkeyPatch) -> None:
    game = _to_the_draw(net, new_game(net))
    drawn = list(draw(game, 3))
    net.follow()
    drawn += list(draw(game, 2))
    net.follow()
    net.follow()  # following again applies nothing twice
    for hall in net.halls:
        hall_game = net.hall_game(hall, game)
        assert hall_game.balls == drawn
        assert list(Ball.objects.filter(game=hall_game.game).values_list("number", flat=True)) == drawn
    # A repeated or stale draw step writes nothing.
    assert central.draw_ball(game_id=game.pk, ordinal=3) is None


def _bingo_order(*cards: frozenset[int]) -> list[int]:
    """Balls that complete every card at the same ball: their numbers, one they share drawn last."""
    union = frozenset().union(*cards)
    common = sorted(frozenset.intersection(*cards))
    assert common, "the cards share no number"
    last = common[0]
    return [*sorted(union - {last}), last]


def test_two_halls_bingo_at_the_same_ball_share_the_network_prize_and_each_takes_its_hall_prize(
    net: Net, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = _to_the_draw(net, new_game(net, price="1.00", percents=("10", "45", "5")), counts=(6, 4, 3))
    # 13 cards at 1.00: network Bingo 45 % = 5.85, each hall's prize 5 % = 0.65.
    assert (game.bingo_prize, game.hall_prize) == (Decimal("5.85"), Decimal("0.65"))
    one, two, three = net.halls
    game_one, game_two, game_three = (net.hall_game(h, game) for h in net.halls)
    a = game_one.first_serial
    # A card of the second hall sharing a number with the first hall's (its 4 sold cards).
    b = next(
        s
        for s in range(game_two.first_serial, game_two.first_serial + 4)
        if card(game_one, a).numbers & card(game_two, s).numbers
    )
    order = _bingo_order(card(game_one, a).numbers, card(game_two, b).numbers)
    monkeypatch.setattr(central, "_pick", Script(order))
    list(draw(game, len(order)))
    net.follow()
    claim_one = venue.claim(hall_game=game_one, kind="bingo", serial=a, actor=one.caller)
    claim_two = venue.claim(hall_game=game_two, kind="bingo", serial=b, actor=two.caller)
    assert claim_one.valid and claim_two.valid
    assert claim_one.bound_ordinal == claim_two.bound_ordinal == len(order)
    net.sync()
    assert central.draw_ball(game_id=game.pk, ordinal=len(order) + 1) is None  # the draw waits
    prizes = {(p.kind, p.scope): p for p in central.decide(game=game, actor=net.boss)}
    network = prizes[("bingo", "network")]
    assert (network.winners, network.share, network.remainder) == (2, Decimal("2.92"), Decimal("0.01"))
    assert prizes[("hall", one.licence)].amount == prizes[("hall", two.licence)].amount == Decimal("0.65")
    net.follow()
    for hall, claim, hall_game in ((one, claim_one, game_one), (two, claim_two, game_two)):
        paid = Payable.objects.filter(venue=hall.venue).order_by("amount")
        assert [p.amount for p in paid] == [Decimal("0.65"), Decimal("2.92")]
        # Named as every bingo prize at the till: the room and its game first, the network game beside it.
        local = claim.game
        named = f"{local.room.name} · Partida {local.number} (simultánea {hall_game.code})"
        card_no = f"{claim.series.code}-{claim.serial:04d}"
        assert [p.description for p in paid] == [
            f"{named} · Bingo de sala · cartón {card_no}",
            f"{named} · Bingo de la red · cartón {card_no}",
        ]
        assert set(HallAward.objects.filter(hall_game=hall_game).values_list("kind", "claim")) == {
            ("bingo", claim.pk),
            ("hall", claim.pk),
        }
    # The third hall has no Bingo yet: the game goes on for its own prize.
    game.refresh_from_db()
    assert game.state == NetworkGameState.DRAWING
    assert not Payable.objects.filter(venue=three.venue).exists()
    rest = card(game_three, game_three.first_serial).numbers - set(order)
    monkeypatch.setattr(central, "_pick", Script(sorted(rest)))
    list(draw(game, len(rest)))
    net.follow()
    claim_three = venue.claim(
        hall_game=game_three, kind="bingo", serial=game_three.first_serial, actor=three.caller
    )
    net.sync()
    (hall_prize,) = central.decide(game=game, actor=net.boss)
    assert (hall_prize.kind, hall_prize.scope, hall_prize.amount) == ("hall", three.licence, Decimal("0.65"))
    net.follow()
    assert [p.amount for p in Payable.objects.filter(venue=three.venue)] == [Decimal("0.65")]
    assert HallAward.objects.get(hall_game=game_three).claim_id == claim_three.pk
    game.refresh_from_db()
    assert game.state == NetworkGameState.CLOSED
    for hall in net.halls:
        hall_game = net.hall_game(hall, game)
        assert hall_game.state == HallGameState.CLOSED
        assert hall_game.game is not None
        hall_game.game.refresh_from_db()
        assert hall_game.game.state == GameState.CLOSED
    # Every cent of the prizes decided is paid or recorded as remainder.
    decided = NetworkPrize.objects.filter(game=game)
    assert sum(p.share * p.winners + p.remainder for p in decided) == sum(p.amount for p in decided)


def test_a_claim_for_a_card_never_allocated_to_the_hall_is_refused(net: Net) -> None:
    game = _to_the_draw(net, new_game(net))
    list(draw(game, 20))
    net.follow()
    one, two, _three = net.halls
    game_one, game_two = net.hall_game(one, game), net.hall_game(two, game)
    with pytest.raises(Conflict) as refused:
        venue.claim(hall_game=game_one, kind="bingo", serial=game_two.first_serial, actor=one.caller)
    assert refused.value.code == "card_not_allocated"
    # A hall's report naming another hall's card (a forged or corrupt message) is refused at the central.
    with transaction.atomic():
        outbox.enqueue(
            venue_id=one.venue.pk,
            kind=LinkKind.SB_CLAIM,
            payload={
                "game": game.code,
                "claim": 999,
                "kind": "bingo",
                "serial": game_two.first_serial,
                "ordinal": 20,
            },
        )
    (answer,) = loopback.deliver(venue_id=one.venue.pk)
    assert answer.status == "refused"
    assert answer.answer["refused"]["code"] == "card_not_allocated"
    assert not NetworkClaim.objects.filter(game=game).exists()
    game.refresh_from_db()
    assert game.claims_pending_since is None  # nothing written: the draw goes on


def test_a_replayed_claim_is_counted_once(net: Net, monkeypatch: pytest.MonkeyPatch) -> None:
    game = _to_the_draw(net, new_game(net))
    one = net.halls[0]
    game_one = net.hall_game(one, game)
    serial = game_one.first_serial
    order = _bingo_order(card(game_one, serial).numbers)
    monkeypatch.setattr(central, "_pick", Script(order))
    list(draw(game, len(order)))
    net.follow()
    made = venue.claim(
        hall_game=game_one, kind="bingo", serial=serial, actor=one.caller, idempotency_key="k1"
    )
    again = venue.claim(
        hall_game=game_one, kind="bingo", serial=serial, actor=one.caller, idempotency_key="k1"
    )
    assert again.pk == made.pk
    (sent,) = loopback.deliver(venue_id=one.venue.pk)
    message = InboxMessage.objects.get(venue=one.venue, sequence=sent.sequence)
    replay = inbox.accept(
        venue_id=one.venue.pk, sequence=message.sequence, kind=message.kind, payload=message.payload
    )
    assert replay.status == "duplicate"
    # The same claim under a new sequence number (a venue that lost its outbox's acknowledgement state).
    with transaction.atomic():
        outbox.enqueue(venue_id=one.venue.pk, kind=LinkKind.SB_CLAIM, payload=message.payload)
    (resent,) = loopback.deliver(venue_id=one.venue.pk)
    assert resent.status == "applied" and resent.answer["status"] == ClaimStatus.PENDING
    assert NetworkClaim.objects.filter(game=game).count() == 1
    central.decide(game=game, actor=net.boss)
    net.follow()
    net.follow()
    assert Payable.objects.filter(venue=one.venue).count() == 2  # the network Bingo and the hall's, once each
    game.refresh_from_db()
    assert game.bingo_prize is not None and game.hall_prize is not None
    paid = sum(p.amount for p in Payable.objects.filter(venue=one.venue))
    assert paid == game.bingo_prize + game.hall_prize


def test_a_hall_that_could_not_confirm_before_the_deadline_stops_selling(net: Net) -> None:
    game = new_game(net)
    _sell_everywhere(net, game, counts=(2, 2, 2))
    one, _two, three = net.halls
    for hall in net.halls[:2]:
        loopback.deliver(venue_id=hall.venue.pk)
    # The third hall's line is down: its sale waits in its outbox. The deadline comes.
    past = timezone.now() - timedelta(seconds=1)
    HallGame.objects.filter(code=game.code).update(sales_deadline=past)
    game_three = net.hall_game(three, game)
    with pytest.raises(Conflict) as stopped:
        venue.sell(
            hall_game=game_three,
            first=game_three.first_serial + 3,
            last=game_three.first_serial + 3,
            actor=three.cashier,
        )
    assert stopped.value.code == "sales_closed"
    assert central.close_due_sales(now=game.sales_deadline + timedelta(seconds=1)) == [game.code]
    # The line returns: the late report is refused and counted nowhere.
    (late,) = loopback.deliver(venue_id=three.venue.pk)
    assert late.answer["refused"]["code"] == "network_sales_closed"
    game.refresh_from_db()
    assert (game.cards_sold, game.sales_total) == (4, Decimal("4.00"))
    net.follow()
    game_three.refresh_from_db()
    assert game_three.state == HallGameState.RECONCILING
    assert len(venue.unconfirmed_serials(game_three)) == 2
    refunds = venue.refund_unconfirmed(hall_game=game_three, actor=three.cashier)
    assert [(r.kind, r.cards, r.amount) for r in refunds] == [("return", 2, Decimal("2.00"))]
    game_three.refresh_from_db()
    # Nothing of it is in the network game: its local game is void, the refunds paid from its drawer.
    assert game_three.state == HallGameState.CLOSED
    assert game_three.game is not None and game_three.game.state == GameState.VOID
    assert net.hall_game(one, game).state == HallGameState.PLAYING


def test_halls_of_regions_without_an_agreement_cannot_share_a_game(net: Net) -> None:
    from halls.models import Jurisdiction, Region, Venue

    game = central.create_game(
        network=net.network,
        code="SB-R",
        card_price=Decimal("1.00"),
        line_percent=Decimal("10"),
        bingo_percent=Decimal("40"),
        hall_percent=Decimal("10"),
        sales_deadline=timezone.now() + timedelta(minutes=5),
        actor=net.boss,
        operation_id="op-SB-R",
    )
    for hall, code in zip(net.halls[:2], ("ML", "AN"), strict=True):
        region = Region.objects.create(code=code, name=code, jurisdiction=Jurisdiction.ML)
        Venue.objects.filter(pk=hall.venue.pk).update(region=region)
    with pytest.raises(Conflict) as refused:
        central.allocate(game=game, strips=[(h.licence, 1) for h in net.halls], actor=net.boss)
    assert refused.value.code == "no_region_agreement"
    assert not Allocation.objects.filter(game=game).exists()
    game.refresh_from_db()
    assert game.seed == ""


def test_a_sale_report_received_twice_is_counted_once_and_answered_the_halls_totals(net: Net) -> None:
    game = new_game(net, price="1.50")
    _sell_everywhere(net, game)
    first = net.halls[0]
    hall_game = net.hall_game(first, game)
    venue.return_cards(
        hall_game=hall_game, first=hall_game.first_serial, last=hall_game.first_serial, actor=first.cashier
    )
    net.sync()
    central_venue = ReportedSale.objects.filter(game=game).values_list("venue_id", flat=True)[0]
    reports = list(ReportedSale.objects.filter(game=game, venue_id=central_venue).order_by("operation"))
    sold = sum(-r.cards if r.returned else r.cards for r in reports)
    paid = sum((-r.amount if r.returned else r.amount for r in reports), Decimal(0))
    for report in reports:  # each sent again (the outbox after a lost answer): kept once, the totals said
        payload = {
            "game": game.code,
            "operation": report.operation,
            "returned": report.returned,
            "first": report.first_serial,
            "last": report.last_serial,
            "cards": report.cards,
            "amount": str(report.amount),
        }
        with transaction.atomic():
            answer = central.record_sale(registry.VenueMessage(central_venue, 99, LinkKind.SB_SALE, payload))
        assert answer == {"cards": sold, "amount": money.text(paid)}
    assert ReportedSale.objects.filter(game=game, venue_id=central_venue).count() == len(reports)
    assert any(r.returned for r in reports) and sold == 5  # 6 sold, 1 returned
