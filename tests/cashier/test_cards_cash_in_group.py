"""Card cash-ins written as a group (halls.cashier.services.player_cards, HALL_CASH_IN_GROUP_*): what each
caller is answered is what it would be alone (its move, its balance after it, a replay, a refusal), the
books and the audit chain as if the cash-ins were posted one after the other, each in its cashier's drawer."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.db import connection

from halls.cashier.models import LedgerTransaction, Means, PlayerCardState, Shift, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services import player_cards
from halls.errors import Conflict, NotFound, PermissionDenied
from halls.models import AuditEntry, Role, Venue
from halls.services import audit, verify
from tests.cashier.ticket_support import funded_card
from tests.cashier_support import on_shift
from tests.conftest import make_user

D = Decimal


def _order(
    card_id: int,
    venue_id: int,
    amount: str,
    key: str,
    actor: User,
    means: str = "cash",
    role_checked: bool = True,
) -> player_cards._CashIn:
    return player_cards._CashIn(
        card_id=card_id,
        venue_id=venue_id,
        amount=D(amount),
        means=means,
        ledger_key=f"card_cash_in:{key}",
        actor=actor,
        language=None,
        role_checked=role_checked,
    )


@pytest.mark.django_db(transaction=True)
def test_a_group_answers_each_cash_in_as_if_alone(venue: Venue, cashier: User) -> None:
    other = make_user("cashier2", venue, Role.CASHIER)
    on_shift(other, venue)
    idle = make_user("cashier3", venue, Role.CASHIER)  # no open shift
    one, two, lost = funded_card(venue, 1, "5.00"), funded_card(venue, 2, "1.00"), funded_card(venue, 3, "0")
    lost.state = PlayerCardState.BLOCKED
    lost.save(update_fields=["state"])
    earlier = player_cards.cash_in(card=one, amount=D("1.00"), means="cash", key="k0", actor=cashier)
    orders = [
        _order(one.pk, venue.pk, "2.00", "k1", cashier),
        _order(two.pk, venue.pk, "3.00", "k2", other, Means.BANK_CARD),
        _order(lost.pk, venue.pk, "1.00", "k3", cashier),  # blocked: refused
        _order(one.pk, venue.pk, "2.00", "k1", cashier),  # the same key again in the group: a replay
        _order(one.pk, venue.pk, "1.00", "k0", cashier),  # posted before the group: a replay
        _order(two.pk, venue.pk, "1.00", "k4", idle),  # no open shift: refused
        _order(two.pk, venue.pk, "0.50", "k5", cashier),
    ]
    answers = player_cards.write_cash_ins(orders)

    kinds = [type(a).__name__ for a in answers]
    assert kinds == ["CardMove", "CardMove", "Conflict", "CardMove", "CardMove", "Conflict", "CardMove"]
    assert isinstance(answers[2], Conflict) and answers[2].code == "card_blocked"
    assert isinstance(answers[5], Conflict) and answers[5].code == "no_open_shift"
    moves = [a for a in answers if not isinstance(a, BaseException)]
    assert [m.replayed for m in moves] == [False, False, True, True, False]
    assert [m.balance for m in (moves[0], moves[1], moves[4])] == [D("8.00"), D("4.00"), D("4.50")]
    assert moves[3].transaction.pk == earlier.transaction.pk
    assert moves[2].transaction.pk == moves[0].transaction.pk
    assert player_cards.balance(one) == D("8.00") and player_cards.balance(two) == D("4.50")
    assert LedgerTransaction.objects.filter(kind=TxKind.CARD_CASH_IN, shift__isnull=False).count() == 4
    mine = Shift.objects.get(cashier=cashier, state="open")
    theirs = Shift.objects.get(cashier=other, state="open")
    assert books.drawer(mine, Means.CASH).balance == D("3.50")  # 1.00 before the group, 2.00 and 0.50
    assert books.drawer(theirs, Means.BANK_CARD).balance == D("3.00")
    assert LedgerTransaction.objects.get(key="card_cash_in:k2").device == theirs.till.name
    assert books.trial_balance(venue.pk).holds
    # One audit entry per posting, in the venue's one chain; the chain and the ledger's seals verify.
    at_tills = [e for e in AuditEntry.objects.filter(action="ledger.card_cash_in") if e.data["shift"]]
    assert len(at_tills) == 4
    assert audit.verify_chain(venue.pk).ok
    assert verify.verify_audit(venue_ids=[venue.pk]).ok


@pytest.mark.django_db(transaction=True)
def test_a_group_that_cannot_commit_is_written_one_by_one(
    venue: Venue, cashier: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    card = funded_card(venue, 1, "5.00")

    def broken(group: object) -> list[object]:
        raise RuntimeError("the group's transaction failed")

    monkeypatch.setattr(player_cards, "_cash_ins_together", broken)
    idle = make_user("cashier3", venue, Role.CASHIER)
    answers = player_cards.write_cash_ins(
        [_order(card.pk, venue.pk, "1.00", "a", cashier), _order(card.pk, venue.pk, "9.00", "b", idle)]
    )
    assert not isinstance(answers[0], BaseException) and answers[0].balance == D("6.00")
    assert isinstance(answers[1], Conflict) and answers[1].code == "no_open_shift"
    assert player_cards.balance(card) == D("6.00")
    assert books.trial_balance(venue.pk).holds


@pytest.mark.django_db(transaction=True)
def test_concurrent_cash_ins_at_one_till_are_grouped_and_exact(venue: Venue, cashier: User) -> None:
    cards = [funded_card(venue, n, "0") for n in range(1, 9)]
    errors: list[BaseException] = []
    start = threading.Barrier(len(cards))

    def till(i: int) -> None:
        try:
            start.wait()
            for n in range(5):
                player_cards.cash_in(
                    card=cards[i], amount=D("2.50"), means="cash", key=f"t{i}-{n}", actor=cashier
                )
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            connection.close()

    group = player_cards._cash_in_group.get()
    before = group.groups
    threads = [threading.Thread(target=till, args=(i,)) for i in range(len(cards))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert group.groups - before < 40  # 40 cash-ins, fewer commits
    assert all(player_cards.balance(card) == D("12.50") for card in cards)
    shift = Shift.objects.get(cashier=cashier, state="open")
    assert books.drawer(shift, Means.CASH).balance == D("100.00")
    assert books.trial_balance(venue.pk).holds
    assert verify.verify_audit(venue_ids=[venue.pk]).ok


@pytest.mark.django_db(transaction=True)
def test_a_group_checks_its_cashiers_roles_in_one_query_as_require_role_would(
    venue: Venue, cashier: User
) -> None:
    card = funded_card(venue, 1, "5.00")
    boss = make_user("boss", venue, Role.OPERATOR)
    on_shift(boss, venue)
    door = make_user("door", venue, Role.DOOR)
    stranger = make_user("stranger")
    orders = [
        _order(card.pk, venue.pk, "1.00", "a", cashier, role_checked=False),
        _order(card.pk, venue.pk, "1.00", "b", door, role_checked=False),  # another role: 403
        _order(card.pk, venue.pk, "1.00", "c", stranger, role_checked=False),  # no role here: not found
        _order(card.pk, venue.pk, "2.00", "d", boss, role_checked=False),  # the operator may
        _order(card.pk, venue.pk, "1.00", "e", door),  # checked by its caller: on to its (missing) shift
    ]
    answers = player_cards._cash_ins_together(orders)
    assert [type(a).__name__ for a in answers] == [
        "CardMove",
        "PermissionDenied",
        "NotFound",
        "CardMove",
        "Conflict",
    ]
    assert isinstance(answers[1], PermissionDenied) and answers[1].code == "role_required"
    assert isinstance(answers[2], NotFound) and answers[2].code == "not_found"
    assert isinstance(answers[4], Conflict) and answers[4].code == "no_open_shift"
    assert player_cards.balance(card) == D("8.00")
    written = LedgerTransaction.objects.filter(key__startswith="card_cash_in:").values_list("key", flat=True)
    assert sorted(written) == ["card_cash_in:a", "card_cash_in:d"]
    # Alone (a group of one, or the group's fallback) the check is made there.
    alone = player_cards.write_cash_ins([_order(card.pk, venue.pk, "1.00", "f", door, role_checked=False)])
    assert isinstance(alone[0], PermissionDenied)
    assert books.trial_balance(venue.pk).holds
    assert verify.verify_audit(venue_ids=[venue.pk]).ok


@pytest.mark.django_db(transaction=True)
def test_a_cashier_without_the_role_is_refused_through_the_group_as_alone(
    venue: Venue, cashier: User
) -> None:
    card = funded_card(venue, 1, "5.00")
    door = make_user("door", venue, Role.DOOR)
    refused: list[BaseException] = []

    def till(actor: User, key: str) -> None:
        try:
            player_cards.cash_in(card=card, amount=D("1.00"), means="cash", key=key, actor=actor)
        except PermissionDenied as exc:
            refused.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=till, args=(who, key)) for who, key in ((cashier, "ok"), (door, "no"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.code for r in refused] == ["role_required"]  # type: ignore[attr-defined]
    assert player_cards.balance(card) == D("6.00")
