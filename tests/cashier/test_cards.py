"""Player cards through their services: issue, find, cash-in by means and cash-out against the drawers,
spend, history with running balances, block / unblock, replacement, players; refusals write nothing."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import User

from halls.cashier import cardnumber
from halls.cashier.ledger import Kind
from halls.cashier.models import LedgerTransaction, Means, PlayerCard, PlayerCardState, Shift, Till, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services import player_cards, shifts
from halls.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from halls.models import AuditEntry, Venue
from tests.conftest import make_user

# The cashier opens its shift in each test, with the float the test counts.
pytestmark = pytest.mark.cashier_off_shift


D = Decimal


@pytest.fixture
def shift(venue: Venue, cashier: User) -> Shift:
    till = Till.objects.create(venue=venue, name="Caja 1")
    return shifts.open_shift(till=till, cashier=cashier, float_amount=D("50.00"), actor=cashier)


@pytest.fixture
def card(venue: Venue, cashier: User) -> PlayerCard:
    return player_cards.issue_card(venue_id=venue.pk, actor=cashier)


def _written() -> tuple[int, int]:
    return LedgerTransaction.objects.count(), AuditEntry.objects.count()


@pytest.mark.django_db
def test_an_issued_card_has_a_valid_unique_number_and_is_found_by_number_or_qr(
    venue: Venue, cashier: User, card: PlayerCard
) -> None:
    assert cardnumber.is_valid(card.number)
    assert card.state == PlayerCardState.ACTIVE and player_cards.balance(card) == 0
    assert player_cards.find_card(venue_id=venue.pk, code=card.number) == card
    assert player_cards.find_card(venue_id=venue.pk, code=cardnumber.qr_payload(card.number)) == card
    assert player_cards.find_card(venue_id=venue.pk, code=cardnumber.printed(card.number)) == card
    others = {player_cards.issue_card(venue_id=venue.pk, actor=cashier).number for _ in range(20)}
    assert len(others) == 20 and card.number not in others
    assert AuditEntry.objects.filter(action="cashier.card_issued").count() == 21


@pytest.mark.django_db
def test_a_mistyped_number_and_another_venues_card(
    venue: Venue, other_venue: Venue, card: PlayerCard
) -> None:
    typo = card.number[:-2] + str((int(card.number[-2]) + 1) % 10) + card.number[-1]
    with pytest.raises(InvalidInput) as bad:
        player_cards.find_card(venue_id=venue.pk, code=typo)
    assert bad.value.code == "bad_card_number" and bad.value.details["field"] == "card"
    with pytest.raises(NotFound) as unknown:
        player_cards.find_card(venue_id=other_venue.pk, code=card.number)
    assert unknown.value.code == "unknown_card"


@pytest.mark.django_db
def test_cash_in_by_means_and_cash_out_move_the_drawers(
    venue: Venue, cashier: User, shift: Shift, card: PlayerCard
) -> None:
    cash = player_cards.cash_in(card=card, amount=D("20.00"), means=Means.CASH, key="a", actor=cashier)
    bank = player_cards.cash_in(card=card, amount=D("30.50"), means=Means.BANK_CARD, key="b", actor=cashier)
    assert (cash.balance, bank.balance) == (D("20.00"), D("50.50"))
    assert cash.transaction.shift == shift and cash.transaction.kind == TxKind.CARD_CASH_IN
    assert books.drawer(shift, Means.CASH).balance == D("70.00")
    assert books.drawer(shift, Means.BANK_CARD).balance == D("30.50")
    out = player_cards.cash_out(card=card, amount=D("10.25"), key="c", actor=cashier)
    assert out.balance == D("40.25") and books.drawer(shift, Means.CASH).balance == D("59.75")
    rest = player_cards.cash_out(card=card, amount=None, key="d", actor=cashier)
    assert rest.amount == D("40.25") and rest.balance == 0
    assert books.drawer(shift, Means.CASH).balance == D("19.50")
    again = player_cards.cash_out(card=card, amount=None, key="d", actor=cashier)  # a retry of "all of it"
    assert again.replayed and again.amount == D("40.25") and again.transaction == rest.transaction
    trial = books.trial_balance(venue.pk)
    assert trial.holds and trial.by_kind[Kind.PLAYER_CARD] == 0


@pytest.mark.django_db
def test_a_retry_is_a_no_op_and_the_key_cannot_name_another_move(
    cashier: User, shift: Shift, card: PlayerCard
) -> None:
    first = player_cards.cash_in(card=card, amount=D("20.00"), means="cash", key="k", actor=cashier)
    again = player_cards.cash_in(card=card, amount=D("20.00"), means="cash", key="k", actor=cashier)
    assert again.replayed and again.transaction == first.transaction and again.balance == D("20.00")
    with pytest.raises(Conflict) as reused:
        player_cards.cash_in(card=card, amount=D("25.00"), means="cash", key="k", actor=cashier)
    assert reused.value.code == "idempotency_key_reused"


@pytest.mark.django_db
def test_insufficient_balance_and_drawer_short_write_nothing(
    cashier: User, shift: Shift, card: PlayerCard
) -> None:
    player_cards.cash_in(card=card, amount=D("80.00"), means=Means.BANK_CARD, key="in", actor=cashier)
    before = _written()
    with pytest.raises(Conflict) as poor:
        player_cards.cash_out(card=card, amount=D("80.01"), key="x", actor=cashier)
    assert poor.value.code == "insufficient_balance"
    with pytest.raises(Conflict) as short:  # paid in by bank card: the cash drawer holds the 50.00 float
        player_cards.cash_out(card=card, amount=D("60.00"), key="y", actor=cashier)
    assert short.value.code == "drawer_short"
    with pytest.raises(Conflict) as short_all:
        player_cards.cash_out(card=card, amount=None, key="z", actor=cashier)
    assert short_all.value.code == "drawer_short"
    assert _written() == before and player_cards.balance(card) == D("80.00")


@pytest.mark.django_db
def test_no_open_shift_bad_amounts_and_means_are_refused(
    venue: Venue, cashier: User, card: PlayerCard
) -> None:
    with pytest.raises(Conflict) as closed:
        player_cards.cash_in(card=card, amount=D("5"), means="cash", key="k", actor=cashier)
    assert closed.value.code == "no_open_shift"
    for bad in (D("0"), D("-1"), D("0.001"), "abc", 1.5):
        with pytest.raises(InvalidInput) as refused:
            player_cards.cash_in(card=card, amount=bad, means="cash", key="k", actor=cashier)  # type: ignore[arg-type]
        assert refused.value.code == "bad_amount" and refused.value.details["field"] == "amount"
    with pytest.raises(InvalidInput) as means:
        player_cards.cash_in(card=card, amount=D("5"), means="cheque", key="k", actor=cashier)
    assert means.value.details["field"] == "means"
    caller = make_user("someone", venue, "caller")
    with pytest.raises(PermissionDenied):
        player_cards.cash_in(card=card, amount=D("5"), means="cash", key="k", actor=caller)
    assert LedgerTransaction.objects.count() == 0


@pytest.mark.django_db
def test_spend_takes_from_the_card_into_sales_without_a_shift(
    venue: Venue, cashier: User, shift: Shift, card: PlayerCard
) -> None:
    player_cards.cash_in(card=card, amount=D("10.00"), means="cash", key="in", actor=cashier)
    spent = player_cards.spend(
        card=card, amount=D("2.50"), key="eb:1", actor="terminal-4", device="terminal-4"
    )
    assert spent.balance == D("7.50") and spent.transaction.shift is None
    assert spent.transaction.kind == TxKind.CARD_SPEND and spent.transaction.device == "terminal-4"
    assert books.venue_account(venue.pk, Kind.SALES).balance == D("2.50")
    assert player_cards.spend(card=card, amount=D("2.50"), key="eb:1", actor="terminal-4").replayed
    with pytest.raises(Conflict) as poor:
        player_cards.spend(card=card, amount=D("7.51"), key="eb:2", actor="terminal-4")
    assert poor.value.code == "insufficient_balance"
    assert player_cards.balance(card) == D("7.50") and books.trial_balance(venue.pk).holds


@pytest.mark.django_db
def test_history_lists_every_move_with_its_running_balance(
    cashier: User, shift: Shift, card: PlayerCard
) -> None:
    player_cards.cash_in(card=card, amount=D("20.00"), means="cash", key="1", actor=cashier)
    player_cards.spend(card=card, amount=D("3.00"), key="2", actor="t1", device="t1")
    player_cards.cash_in(card=card, amount=D("5.00"), means="bank_card", key="3", actor=cashier)
    player_cards.cash_out(card=card, amount=D("12.00"), key="4", actor=cashier)
    entries = player_cards.history(card)
    assert [(e.kind, e.amount, e.balance) for e in entries] == [
        (TxKind.CARD_CASH_OUT, D("-12.00"), D("10.00")),
        (TxKind.CARD_CASH_IN, D("5.00"), D("22.00")),
        (TxKind.CARD_SPEND, D("-3.00"), D("17.00")),
        (TxKind.CARD_CASH_IN, D("20.00"), D("20.00")),
    ]
    assert entries[2].by == "t1" and entries[2].device == "t1" and entries[0].by == "cashier"
    assert entries[0].device == "Caja 1"
    assert [e.kind for e in player_cards.history(card, limit=2)] == [
        TxKind.CARD_CASH_OUT,
        TxKind.CARD_CASH_IN,
    ]


@pytest.mark.django_db
def test_a_blocked_card_refuses_everything_until_the_operator_unblocks_it(
    venue: Venue, cashier: User, operator: User, shift: Shift, card: PlayerCard
) -> None:
    player_cards.cash_in(card=card, amount=D("10.00"), means="cash", key="in", actor=cashier)
    with pytest.raises(InvalidInput) as why:
        player_cards.block_card(card=card, reason=" ", actor=cashier)
    assert why.value.code == "reason_required"
    player_cards.block_card(card=card, reason="lost", actor=cashier)
    before = _written()
    for attempt in (
        lambda: player_cards.cash_in(card=card, amount=D("1"), means="cash", key="b1", actor=cashier),
        lambda: player_cards.cash_out(card=card, amount=D("1"), key="b2", actor=cashier),
        lambda: player_cards.cash_out(card=card, amount=None, key="b3", actor=cashier),
        lambda: player_cards.spend(card=card, amount=D("1"), key="b4", actor="t1"),
        lambda: player_cards.link_player(
            card=card,
            player=player_cards.register_player(venue_id=venue.pk, name="X", actor=cashier),
            actor=cashier,
        ),
    ):
        with pytest.raises(Conflict) as blocked:
            attempt()
        assert blocked.value.code == "card_blocked"
    assert LedgerTransaction.objects.count() == before[0]
    # A retry of a move made before the block answers that move (the till learns the money moved).
    retry = player_cards.cash_in(card=card, amount=D("10.00"), means="cash", key="in", actor=cashier)
    assert retry.replayed and LedgerTransaction.objects.count() == before[0]
    entry = AuditEntry.objects.get(action="cashier.card_blocked")
    assert entry.data == {"number": card.number, "reason": "lost"}
    with pytest.raises(PermissionDenied):
        player_cards.unblock_card(card=card, actor=cashier)
    player_cards.unblock_card(card=card, actor=operator)
    assert player_cards.spend(card=card, amount=D("1"), key="b4", actor="t1").balance == D("9.00")
    assert AuditEntry.objects.filter(action="cashier.card_unblocked").count() == 1


@pytest.mark.django_db
def test_a_replacement_card_receives_the_balance_in_one_transaction(
    venue: Venue, cashier: User, operator: User, shift: Shift, card: PlayerCard
) -> None:
    player = player_cards.register_player(
        venue_id=venue.pk, name="Ana Pérez", id_document="12345678Z", actor=cashier
    )
    player_cards.link_player(card=card, player=player, actor=cashier)
    player_cards.cash_in(card=card, amount=D("42.10"), means="cash", key="in", actor=cashier)
    with pytest.raises(Conflict) as active:
        player_cards.replace_card(card=card, actor=cashier)
    assert active.value.code == "card_not_blocked"
    player_cards.block_card(card=card, reason="lost", actor=cashier)
    replaced = player_cards.replace_card(card=card, actor=cashier)
    assert not replaced.replayed and replaced.moved == D("42.10")
    assert replaced.transaction is not None and replaced.transaction.kind == TxKind.CARD_TRANSFER
    assert replaced.transaction.legs.count() == 2
    assert player_cards.balance(replaced.new) == D("42.10") and player_cards.balance(card) == 0
    assert replaced.new.player == player and replaced.new.state == PlayerCardState.ACTIVE
    again = player_cards.replace_card(card=card, actor=cashier)
    assert again.replayed and again.new == replaced.new and again.moved == D("42.10")
    assert PlayerCard.objects.count() == 2
    with pytest.raises(Conflict) as stays:
        player_cards.unblock_card(card=card, actor=operator)
    assert stays.value.code == "card_replaced"
    assert books.trial_balance(venue.pk).holds
    # Personal data stays out of the audit's data.
    for entry in AuditEntry.objects.all():
        assert "Ana" not in str(entry.data) and "12345678Z" not in str(entry.data)


@pytest.mark.django_db
def test_an_empty_lost_card_is_replaced_without_a_transaction(cashier: User, card: PlayerCard) -> None:
    player_cards.block_card(card=card, reason="stolen", actor=cashier)
    replaced = player_cards.replace_card(card=card, actor=cashier)
    assert replaced.transaction is None and replaced.moved == 0
    assert player_cards.replace_card(card=card, actor=cashier).new == replaced.new


@pytest.mark.django_db
def test_players_are_registered_and_linked_within_their_venue(
    venue: Venue, other_venue: Venue, cashier: User, card: PlayerCard
) -> None:
    with pytest.raises(InvalidInput) as nameless:
        player_cards.register_player(venue_id=venue.pk, name="  ", actor=cashier)
    assert nameless.value.details["field"] == "name"
    stranger = player_cards.register_player(venue_id=other_venue.pk, name="B", actor="system")
    with pytest.raises(NotFound) as elsewhere:
        player_cards.link_player(card=card, player=stranger, actor=cashier)
    assert elsewhere.value.code == "unknown_player"
    player = player_cards.register_player(venue_id=venue.pk, name="C", actor=cashier)
    assert player_cards.link_player(card=card, player=player, actor=cashier).player == player
    assert player_cards.link_player(card=card, player=None, actor=cashier).player is None
    actions = list(AuditEntry.objects.filter(venue=venue).values_list("action", flat=True).order_by("pk"))
    assert actions[-2:] == ["cashier.card_player_linked", "cashier.card_player_unlinked"]
