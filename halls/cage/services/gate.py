"""The gate at the payout: a payout at or above the threshold is not paid until the winner is identified;
every payout tied to a person is recorded; structuring and little play are flagged.

The cashier calls it through its payout hooks (halls.cashier.hooks; `GATE` is registered in
halls.cage.apps): `check` before the payout writes anything (`require_identified`), `paid` inside the
paying transaction after the payout's own audit entry. Holding the venue's audit chain then, the payouts
of a venue are recorded one after the other: the window's sum never misses a payout committed meanwhile.

Tied to a person: the identification the cashier named (any amount: a smaller payout may be identified
too), else the player card's player known by their document's digest (a prize paid to the card, the card
cashed out). Every prize payout counts, whatever its method (cash, card, ticket), and so do tickets
redeemed in cash and cards cashed out: a prize paid onto a card and the card then cashed out count twice,
which errs towards a flag the officer dismisses rather than a split unseen.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _

from halls import i18n, money
from halls.actors import Actor, actor_label
from halls.cage import window
from halls.cage.models import Flag, FlagKind, Identification, PayoutKind, PayoutRecord
from halls.cage.services.rules import Rules, rules_of, years_after
from halls.cashier import ledger
from halls.cashier.hooks import PayoutClaim
from halls.cashier.ledger import Kind
from halls.cashier.models import Account, LedgerTransaction, Leg, PlayerCard, Ticket, TxKind
from halls.errors import Conflict, NotFound
from halls.services import audit

# A card's moves, for the little-play check (amounts as the card's balance shows them: + in, - out).
_IN = frozenset({TxKind.CARD_CASH_IN, TxKind.DEVICE_CASH_IN, TxKind.TICKET_REDEEM, TxKind.CARD_TRANSFER})
_PLAY = frozenset({TxKind.CARD_SPEND})


def needs_identification(venue_id: int, amount: Decimal) -> bool:
    """Whether a payout of ``amount`` in the venue waits for the winner's identification."""
    return bool(amount >= rules_of(venue_id).threshold)


def require_identified(
    *, venue_id: int, amount: Decimal, identification: int | None, at: datetime | None = None
) -> Identification | None:
    """The identification named for a payout of ``amount``, checked: of this venue, made within the window
    before the payout. Refused (nothing written): unknown_identification (404), identification_stale and
    identification_required (409) for a payout at or above the threshold with none named."""
    rules = rules_of(venue_id)
    at = at or timezone.now()
    found = None
    if identification is not None:
        found = Identification.objects.filter(pk=identification, venue_id=venue_id).first()
        if found is None:
            raise NotFound(
                _("No identification %(id)s in this venue.") % {"id": identification},
                code="unknown_identification",
            )
        if found.identified_at <= at - rules.window:
            raise Conflict(
                _(
                    "Identification %(id)s was made more than %(hours)d hours ago: identify the winner "
                    "again before paying."
                )
                % {"id": identification, "hours": rules.window.total_seconds() // 3600},
                code="identification_stale",
            )
    if found is None and amount >= rules.threshold:
        raise Conflict(
            _(
                "A payout of %(amount)s is at or above the anti-money-laundering threshold of "
                "%(threshold)s: identify the winner (document, full name, date of birth, scan) before "
                "paying it."
            )
            % {"amount": i18n.amount(amount), "threshold": i18n.amount(rules.threshold)},
            code="identification_required",
            venue=venue_id,
            amount=money.text(amount),
            threshold=money.text(rules.threshold),
        )
    return found


def _source(claim: PayoutClaim, tx: LedgerTransaction) -> str:
    if claim.payable_id is not None:
        return f"payable:{claim.payable_id}"
    if claim.ticket_id is not None:
        return f"ticket:{claim.ticket_id}"
    return f"{claim.kind}:{tx.pk}"


def _digest(claim: PayoutClaim, found: Identification | None) -> bytes | None:
    if found is not None:
        return bytes(found.digest)
    if claim.card_id is None:
        return None
    digest = PlayerCard.objects.filter(pk=claim.card_id).values_list("player__digest", flat=True).first()
    return bytes(digest) if digest is not None else None


def record_payout(claim: PayoutClaim, transaction_id: int, actor: Actor) -> PayoutRecord | None:
    """Inside the paying transaction, after its audit entry: the payout's record (when it is tied to a
    person), the structuring check of that person's window, and the little-play check of a ticket or a
    card cashed out. Returns the record, or None for a payout tied to nobody."""
    rules = rules_of(claim.venue_id)
    tx = LedgerTransaction.objects.get(pk=transaction_id)
    found = (
        Identification.objects.filter(pk=claim.identification).first()
        if claim.identification is not None
        else None
    )
    digest = _digest(claim, found)
    record = None
    if digest is not None:
        record = PayoutRecord.objects.create(
            venue_id=claim.venue_id,
            kind=PayoutKind(claim.kind),
            source=_source(claim, tx),
            amount=claim.amount,
            at=tx.created_at,
            paid_by_label=actor_label(actor)[:150],
            digest=digest,
            identification=found,
            identified=found is not None,
            transaction=tx,
            payable_id=claim.payable_id,
            ticket_id=claim.ticket_id,
            card_id=claim.card_id,
            keep_until=years_after(tx.created_at, rules.retention_years),
        )
        audit.record(
            venue_id=claim.venue_id,
            actor=actor,
            action="cage.payout_recorded",
            obj=record,
            data={
                "kind": record.kind,
                "amount": money.text(record.amount),
                "identification": found.pk if found is not None else None,
                "transaction": tx.pk,
            },
        )
        _check_structuring(record, rules, actor)
    if claim.kind in (PayoutKind.CARD_CASH_OUT, PayoutKind.TICKET):
        _check_little_play(claim, tx, record, digest, rules, actor)
    return record


def _check_structuring(record: PayoutRecord, rules: Rules, actor: Actor) -> None:
    earlier = PayoutRecord.objects.filter(
        venue_id=record.venue_id,
        digest=record.digest,
        at__gt=record.at - rules.window,
        at__lte=record.at,
    ).exclude(pk=record.pk)
    involved = window.structuring(
        [window.Paid(p.pk, p.at, p.amount) for p in earlier],
        window.Paid(record.pk, record.at, record.amount),
        threshold=rules.threshold,
        window=rules.window,
    )
    if not involved:
        return
    total = sum((p.amount for p in involved), money.ZERO)
    flag = Flag.objects.create(
        venue_id=record.venue_id,
        kind=FlagKind.STRUCTURING,
        at=record.at,
        digest=record.digest,
        total=total,
        keep_until=record.keep_until,
    )
    ids = [p.ref for p in involved]
    flag.records.set(ids)
    _audit_flag(flag, actor, {"records": ids})


def _card_moves(card_id: int, before_tx: int) -> list[tuple[window.Move, Decimal]]:
    """The card's moves before ledger transaction ``before_tx``, oldest first."""
    account = Account.objects.filter(card_id=card_id).first()
    if account is None:
        return []
    legs = (
        Leg.objects.filter(account=account, transaction_id__lt=before_tx)
        .order_by("transaction_id")
        .values_list("transaction__kind", "amount")
    )
    moves = []
    for kind, amount in legs:
        shown = ledger.shown(Kind.PLAYER_CARD, amount)
        if shown > 0:
            moves.append((window.Move.IN if kind in _IN else window.Move.WIN, shown))
        else:
            moves.append((window.Move.PLAY if kind in _PLAY else window.Move.OUT, -shown))
    return moves


def _ticket_cycle(ticket: Ticket) -> tuple[window.Cycle | None, int | None]:
    """What was cashed in and played before the ticket was issued, and the card it came from: bought at a
    till (cash or bank card), nothing was played; printed from a card, the card's cycle; a prize paid as a
    ticket: None (a prize is not a cash-in)."""
    funding = (
        Leg.objects.filter(transaction_id=ticket.issue_tx_id, amount__gt=0)
        .annotate(account_kind=F("account__kind"), card=F("account__card_id"))
        .values_list("account_kind", "card")
        .first()
    )
    if funding is None:
        return None, None
    kind, card_id = funding
    if kind == Kind.DRAWER:
        return window.Cycle(cashed_in=ticket.amount, played=money.ZERO), None
    if kind == Kind.PLAYER_CARD and card_id is not None:
        return window.cycle(_card_moves(card_id, ticket.issue_tx_id)), card_id
    return None, None


def _check_little_play(
    claim: PayoutClaim,
    tx: LedgerTransaction,
    record: PayoutRecord | None,
    digest: bytes | None,
    rules: Rules,
    actor: Actor,
) -> None:
    card_id = claim.card_id
    if claim.kind == PayoutKind.TICKET and claim.ticket_id is not None:
        ticket = Ticket.objects.get(pk=claim.ticket_id)
        found, card_id = _ticket_cycle(ticket)
    elif card_id is not None:
        found = window.cycle(_card_moves(card_id, tx.pk))
    else:
        found = None
    if found is None or not window.little_play(
        found, percent=rules.little_play_percent, minimum=rules.little_play_minimum
    ):
        return
    flag = Flag.objects.create(
        venue_id=claim.venue_id,
        kind=FlagKind.LITTLE_PLAY,
        at=tx.created_at,
        digest=digest,
        total=claim.amount,
        cashed_in=found.cashed_in,
        played=found.played,
        transaction=tx,
        ticket_id=claim.ticket_id,
        card_id=card_id,
        keep_until=years_after(tx.created_at, rules.retention_years),
    )
    if record is not None:
        flag.records.set([record.pk])
    _audit_flag(
        flag,
        actor,
        {
            "records": [record.pk] if record is not None else [],
            "cashed_in": money.text(found.cashed_in),
            "played": money.text(found.played),
            "transaction": tx.pk,
        },
    )


def _audit_flag(flag: Flag, actor: Actor, data: dict[str, object]) -> None:
    audit.record(
        venue_id=flag.venue_id,
        actor=actor,
        action="cage.flagged",
        obj=flag,
        data={"kind": flag.kind, "total": money.text(flag.total), **data},
    )


class Gate:
    """The cashier's payout guard (halls.cashier.hooks.PayoutGuard)."""

    def required(self, venue_id: int, amount: Decimal) -> bool:
        return needs_identification(venue_id, amount)

    def check(self, claim: PayoutClaim) -> None:
        require_identified(venue_id=claim.venue_id, amount=claim.amount, identification=claim.identification)

    def paid(self, claim: PayoutClaim, transaction_id: int, actor: Actor) -> None:
        record_payout(claim, transaction_id, actor)


GATE = Gate()
