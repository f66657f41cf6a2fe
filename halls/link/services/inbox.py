"""Central side: a venue's messages accepted exactly once and in order, each applied by its kind's handler
in the transaction that records it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

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
        first = InboxMessage.objects.filter(venue_id=link.venue_id, sequence=sequence).first()
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


def accept_many(*, venue_id: int, messages: list[dict[str, Any]]) -> Batch:
    """Accept a venue's messages in the order given, each in its own transaction (a message applied stays
    applied if a later one fails); stop at the first out of order one, which carries the one expected.

    Not one transaction for the batch: the handlers of two messages may lock rows against the lock order
    between them (a game, then a pool, then another game), which one transaction per message never does.
    """
    accepted = []
    for message in messages:
        try:
            accepted.append(
                accept(
                    venue_id=venue_id,
                    sequence=int(message["sequence"]),
                    kind=str(message["kind"]),
                    payload=message["payload"],
                )
            )
        except OutOfOrder as refusal:
            return Batch(accepted, refusal)
    return Batch(accepted)
