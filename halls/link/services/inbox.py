"""Central side: a venue's messages accepted exactly once and in order, each applied by its kind's handler
in the transaction that records it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from halls import locks
from halls.errors import Conflict, DomainError, InvalidInput
from halls.link import registry
from halls.link.kinds import LinkKind
from halls.link.models import InboxMessage, VenueLink
from halls.link.services.locks import lock_venue_link


class OutOfOrder(Conflict):
    default_code = "out_of_order"


@dataclass(frozen=True)
class Accepted:
    sequence: int
    # "applied"; "refused" (its handler refused it: nothing of it written, the refusal recorded and answered,
    # the venue's next message may follow); "duplicate" (already accepted: nothing written, the first answer)
    status: str
    answer: dict[str, Any] = field(default_factory=dict)


def _handler(kind: str) -> tuple[LinkKind, registry.VenueHandler]:
    try:
        known = LinkKind(kind)
    except ValueError:
        message = _("Unknown message kind “%(kind)s”.") % {"kind": kind}
        raise InvalidInput(message, code="unknown_kind") from None
    handler = registry.venue_handler(known)
    if handler is None:
        message = _("This installation does not handle “%(kind)s” messages.") % {"kind": kind}
        raise InvalidInput(message, code="unhandled_kind")
    return known, handler


def _apply(
    link: VenueLink, sequence: int, kind: str, payload: dict[str, Any], inbox: list[InboxMessage]
) -> Accepted:
    """One message against the venue's locked link (moved on in memory; the caller saves it and writes the
    inbox row collected in `inbox`)."""
    known, handler = _handler(kind)
    if sequence <= link.applied_sequence:
        pending = [m for m in inbox if m.sequence == sequence]  # applied earlier in this transaction
        first = (
            pending[0]
            if pending
            else InboxMessage.objects.filter(venue_id=link.venue_id, sequence=sequence).first()
        )
        return Accepted(sequence, "duplicate", first.answer if first else {})
    expected = link.applied_sequence + 1
    if sequence != expected:
        raise OutOfOrder(
            _("Message %(got)d arrived before message %(expected)d: send from %(expected)d.")
            % {"got": sequence, "expected": expected},
            expected=expected,
            got=sequence,
        )
    status = "applied"
    try:
        with transaction.atomic():  # a savepoint: a refusal undoes the handler's writes only
            answer = handler(registry.VenueMessage(link.venue_id, sequence, known, payload)) or {}
    except DomainError as refusal:
        status, answer = "refused", {"refused": refusal.as_dict()}
    inbox.append(
        InboxMessage(venue_id=link.venue_id, sequence=sequence, kind=kind, payload=payload, answer=answer)
    )
    link.applied_sequence = sequence
    return Accepted(sequence, status, answer)


def accept(*, venue_id: int, sequence: int, kind: str, payload: dict[str, Any]) -> Accepted:
    """Apply one message of the venue, in one transaction: its handler's writes and the inbox row together.

    Already accepted (sequence at or below the venue's last): a no-op answered with the first answer. The
    next one: applied. Past the next one: refused (`out_of_order`, details ``expected``), nothing written.
    A handler's refusal (a DomainError: a contribution to a closed network game, say) undoes the handler's
    writes and is recorded as the message's answer (``{"refused": {code, message, details}}``): the
    message is accepted, never applied, and the venue's outbox moves on.
    """
    with transaction.atomic():
        link = lock_venue_link(venue_id)
        inbox: list[InboxMessage] = []
        result = _apply(link, sequence, kind, payload, inbox)
        if inbox:
            inbox[0].save(force_insert=True)
        link.last_seen_at = timezone.now()
        link.save(update_fields=["last_seen_at", "applied_sequence"] if inbox else ["last_seen_at"])
    return result


@dataclass(frozen=True)
class Batch:
    """What `accept_many` did: each message's Accepted, in order, up to the first out of order (if any)."""

    accepted: list[Accepted]
    out_of_order: OutOfOrder | None = None


@dataclass(frozen=True)
class Contact:
    """What a venue's request says besides its messages (recorded on its link with them)."""

    at: datetime
    reported: int | None = None  # the highest sequence of its outbox
    clock: datetime | None = None  # its clock when it sent the request


def _record_contact(link: VenueLink, contact: Contact) -> list[str]:
    link.last_seen_at = contact.at
    fields = ["last_seen_at"]
    if contact.reported is not None and contact.reported > link.reported_sequence:
        link.reported_sequence = contact.reported
        fields.append("reported_sequence")
    if contact.clock is not None:
        offset = (contact.at - contact.clock).total_seconds() * 1000
        link.clock_offset_ms = max(-(2**31), min(2**31 - 1, round(offset)))
        fields.append("clock_offset_ms")
    return fields


def _accept_group(
    venue_id: int, messages: list[dict[str, Any]], contact: Contact
) -> tuple[list[Accepted], OutOfOrder | None]:
    """The longest run of `messages` (at least one) that can be applied in ONE transaction, applied.

    The first message takes its locks as `accept` would; each next one goes on in the same transaction
    only with locks the transaction holds or of a higher rank (halls.locks.only_held_or_higher): a message
    that needs another lock (another game, a pool before an audit head…) raises LockOrderError before it
    locks anything; its handler's savepoint is rolled back and the run ends before it (it starts the next
    transaction). A refused message ends the run too (what its rolled-back savepoint held is not relied
    on). An out of order one ends it with the refusal; what came before it in the run is kept.
    """
    done: list[Accepted] = []
    refusal: OutOfOrder | None = None
    with transaction.atomic():
        link = lock_venue_link(venue_id)
        inbox: list[InboxMessage] = []
        try:
            _apply_run(link, messages, inbox, done)
        except OutOfOrder as out_of_order:
            refusal = out_of_order
        finally:
            locks.forget_further_units()
        if inbox:
            InboxMessage.objects.bulk_create(inbox)
        fields = _record_contact(link, contact)
        link.save(update_fields=[*fields, "applied_sequence"] if inbox else fields)
    return done, refusal


def _apply_run(
    link: VenueLink, messages: list[dict[str, Any]], inbox: list[InboxMessage], done: list[Accepted]
) -> None:
    """`_accept_group`'s run: each message after the first only if the transaction's locks are known and
    it keeps to them (`only_held_or_higher`)."""
    for message in messages:
        if done and not locks.only_held_or_higher():
            return
        try:
            result = _apply(link, int(message["sequence"]), str(message["kind"]), message["payload"], inbox)
        except locks.LockOrderError:
            if not done:
                raise
            return
        done.append(result)
        if result.status == "refused":
            return


def accept_many(
    *,
    venue_id: int,
    messages: list[dict[str, Any]],
    reported: int | None = None,
    clock: datetime | None = None,
) -> Batch:
    """Accept a venue's messages in the order given, each exactly once; stop at the first out of order
    one, which carries the one expected. The venue's contact (`reported`, `clock`) is recorded on its link
    with them (services.presence records it for a request without messages).

    As few transactions as the lock order allows (`_accept_group`): consecutive messages whose handlers
    lock the same rows (a hall's sale reports of one network game, say) are applied in one, under one
    lock of the venue's link and one commit; a message applied stays applied if a later one fails.
    """
    accepted: list[Accepted] = []
    contact = Contact(at=timezone.now(), reported=reported, clock=clock)
    rest = list(messages)
    while rest:
        done, refusal = _accept_group(venue_id, rest, contact)
        accepted += done
        if refusal is not None:
            return Batch(accepted, refusal)
        rest = rest[len(done) :]
    return Batch(accepted)
