"""Central side: a venue's messages accepted exactly once and in order, each applied by its kind's handler
in the transaction that records it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
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


# The inbox rows of the messages accepted earlier in this transaction, written at its end (`_accept_group`).
_pending: ContextVar[list[InboxMessage] | None] = ContextVar("hall_inbox_pending", default=None)


@contextmanager
def _collecting(inbox: list[InboxMessage]) -> Iterator[None]:
    token = _pending.set(inbox)
    try:
        yield
    finally:
        _pending.reset(token)


def accepted_messages(*, venue_id: int, kind: str, after: int = 0) -> list[InboxMessage]:
    """The venue's messages of `kind` accepted so far (numbered after `after`), in order, with their
    answers: the inbox's rows and, inside the transaction that accepts several messages at once, those
    accepted before the one being applied (their rows are written at the transaction's end). For a
    handler that reads what came before it (a reconciliation summing the batches accepted)."""
    written = list(
        InboxMessage.objects.filter(venue_id=venue_id, kind=kind, sequence__gt=after).order_by("sequence")
    )
    seen = {m.sequence for m in written}
    pending = [
        m for m in _pending.get() or () if m.venue_id == venue_id and m.kind == kind and m.sequence > after
    ]
    return written + [m for m in pending if m.sequence not in seen]


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
            with _collecting(inbox):
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
    it keeps to them (`only_held_or_higher`). Consecutive messages of a kind with a batch handler (a
    hall's sale reports) are applied by one call of it (`_apply_batch`)."""
    at = 0
    while at < len(messages):
        if done and not locks.only_held_or_higher():
            return
        run = _batch_run(link, messages, at)
        try:
            results = _apply_batch(link, run, inbox, first_unit=not done) if run else None
            if results is None:
                message = messages[at]
                one = _apply(link, int(message["sequence"]), str(message["kind"]), message["payload"], inbox)
                results = [one]
                if one.status == "refused":  # what its rolled-back savepoint held is not relied on
                    done += results
                    return
        except locks.LockOrderError:
            if not done:
                raise
            return
        if not results:
            return
        done += results
        at += len(results)


def _batch_run(link: VenueLink, messages: list[dict[str, Any]], at: int) -> list[dict[str, Any]]:
    """The messages from `at` on that one call of their kind's batch handler applies: of one kind that has
    one, each the venue's next sequence (a duplicate or an out of order one goes through `_apply`)."""
    kind = str(messages[at]["kind"])
    try:
        known = LinkKind(kind)
    except ValueError:
        return []
    if registry.venue_batch_handler(known) is None:
        return []
    run: list[dict[str, Any]] = []
    for message in messages[at:]:
        if str(message["kind"]) != kind or int(message["sequence"]) != link.applied_sequence + 1 + len(run):
            break
        run.append(message)
    return run


def _apply_batch(
    link: VenueLink, run: list[dict[str, Any]], inbox: list[InboxMessage], *, first_unit: bool
) -> list[Accepted] | None:
    """A run of one kind's next messages applied by its batch handler, in one savepoint: each answered
    as applied, or refused (the handler wrote nothing of it; the others' writes stand). None: the handler
    refused the run as a whole (nothing of it written): the caller applies its first message alone, as
    the first unit of a transaction (`[]`: ends this transaction's run, so the next one does so)."""
    known = LinkKind(str(run[0]["kind"]))
    handler = registry.venue_batch_handler(known)
    assert handler is not None  # _batch_run checked it
    sent = [registry.VenueMessage(link.venue_id, int(m["sequence"]), known, m["payload"]) for m in run]
    try:
        with transaction.atomic():  # a savepoint: a whole-run refusal undoes what the handler wrote
            answers = handler(sent)
    except DomainError:
        return None if first_unit else []
    if len(answers) != len(sent):
        raise RuntimeError(f"the batch handler of {known} answered {len(answers)} of {len(sent)} messages")
    results: list[Accepted] = []
    for message, answer in zip(sent, answers, strict=True):
        if isinstance(answer, DomainError):
            status, said = "refused", {"refused": answer.as_dict()}
        else:
            status, said = "applied", answer
        inbox.append(
            InboxMessage(
                venue_id=link.venue_id,
                sequence=message.sequence,
                kind=str(known),
                payload=message.payload,
                answer=said,
            )
        )
        link.applied_sequence = message.sequence
        results.append(Accepted(message.sequence, status, said))
    return results


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
    lock of the venue's link and one commit; a message applied stays applied if a later one fails. A
    run of consecutive messages of a kind with a batch handler (registry.on_venue_messages: the sale
    reports) is applied by one call of it.
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
