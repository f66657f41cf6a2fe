"""The node's intake (HALL_ROLE=regulator): a batch of signed feed messages from one installation, each
checked and accepted exactly once and in order, or refused with the reason recorded and nothing of it
applied.

Each message, in the batch's order:

1. its envelope's shape (halls.feed.envelope.from_json);
2. its installation registered here (all of one batch the same);
3. its signature, against the installation's registered public key;
4. its schema: the envelope's and its kind's payload (halls.feed.schema.validate), and a time with offset;
5. its sequence: the next one is stored (FeedMessage) and the installation's accepted_sequence and
   last_message_at move, in one transaction for the batch's accepted run, with the alarms the messages
   themselves raise (halls.regulator.services.derived) and the live page's read model moved
   (halls.regulator.services.livemodel); the portal's pages told once it committed, one event for the run
   (live);
   one already accepted with the same signature is a duplicate (answered as accepted, nothing written); one
   already accepted with another body is "replayed"; one past the next is out of order (a gap).

The first message that fails stops the batch: the ones before it stay accepted, the refusal is recorded
(FeedRefusal, with its reason), an alarm raised where it calls for one (bad signature, replayed, gap, schema,
unknown installation), and the caller gets a DomainError naming it with the sequence the node expects next
("expected") and the last it accepted ("accepted"). Nothing of a payload is logged or put in an error.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any, NoReturn

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from halls import anchor_lines, metrics
from halls.errors import Conflict, DomainError, InvalidInput, NotFound, PermissionDenied
from halls.feed import envelope, schema
from halls.regulator.models import AlarmKind, FeedMessage, FeedRefusal, Installation
from halls.regulator.services import alarms, derived, live, livemodel

log = logging.getLogger("hall.regulator")
DETAIL_MAX = 500  # a refusal's recorded detail, cut there
NOT_AN_ENVELOPE = gettext_noop("The message is not a feed envelope (hall-feed/v1).")


@dataclass(frozen=True)
class Received:
    """What a batch did: the installation's last accepted sequence after it, how many were stored now and
    how many were duplicates of messages already held."""

    installation: str
    accepted: int
    stored: int
    duplicates: int


@dataclass
class _Refusal:
    reason: str  # FeedRefusal.reason and the error's code
    error: type[DomainError]
    message: str
    alarm: AlarmKind | None = None
    sequence: int | None = None
    kind: str = ""
    claimed: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@lru_cache(maxsize=1024)
def _public_key(hex_key: str) -> Ed25519PublicKey:
    return anchor_lines.public_key(hex_key)


def silence_window(installation: Installation) -> int:
    """Seconds without a message after which the installation is silent (its own window, else the node's)."""
    return int(installation.silence_seconds or settings.HALL_REGULATOR_SILENCE_SECONDS)


def _claimed(raw: Any) -> tuple[str, int | None, str]:
    """What a raw message says it is (installation, sequence, kind), for the refusal's row."""
    if not isinstance(raw, dict):
        return "", None, ""
    uid, seq, kind = raw.get("installation"), raw.get("sequence"), raw.get("kind")
    return (
        uid[:64] if isinstance(uid, str) else "",
        seq if type(seq) is int and abs(seq) < 2**62 else None,
        kind[:40] if isinstance(kind, str) else "",
    )


def _fact_time(at: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(at)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def receive(*, messages: Any, received_at: datetime | None = None) -> Received:
    """Accept a batch (see the module's docstring); a DomainError for its first refused message."""
    now = received_at or timezone.now()
    if not isinstance(messages, list) or not messages:
        _refuse(
            None,
            _Refusal("bad_batch", InvalidInput, _("A feed batch is a non-empty list of messages.")),
            now,
            accepted=None,
        )
    if len(messages) > settings.HALL_REGULATOR_MAX_BATCH:
        uid, _seq, _kind = _claimed(messages[0])
        _refuse(
            None,
            _Refusal(
                "bad_batch",
                InvalidInput,
                _("A feed batch holds at most %(n)d messages.") % {"n": settings.HALL_REGULATOR_MAX_BATCH},
                claimed=uid,
            ),
            now,
            accepted=None,
        )
    uid, _seq, _kind = _claimed(messages[0])
    installation = Installation.objects.filter(uid=uid).first() if uid else None
    if installation is None:
        try:
            envelope.from_json(messages[0])
        except envelope.EnvelopeError as bad:
            refusal = _Refusal(
                bad.reason, InvalidInput, _(NOT_AN_ENVELOPE), extra={"problem": str(bad)[:DETAIL_MAX]}
            )
        else:
            refusal = _Refusal(
                "unknown_installation",
                NotFound,
                _("No installation “%(uid)s” is registered at this node.") % {"uid": uid},
                alarm=AlarmKind.UNKNOWN,
            )
        refusal.claimed, refusal.sequence, refusal.kind = _claimed(messages[0])
        _refuse(None, refusal, now, accepted=None)
    # What needs no lock (shape, signature, schema) is checked before the transaction: the lock is held
    # only for the sequence and the insert (bench/feed_node.py: the checks were half the time in the lock).
    verdicts = _verdicts(installation, messages)
    with transaction.atomic():
        locked = Installation.objects.select_for_update().get(pk=installation.pk)
        if locked.public_key != installation.public_key:  # its key replaced meanwhile: check again
            verdicts = _verdicts(locked, messages)
        stored, duplicates, stopped = _accept(locked, messages, verdicts, now)
        accepted = locked.accepted_sequence
    if stored:
        log.debug("installation %s: %d messages accepted, up to %d", locked.uid, stored, accepted)
    if stopped is not None:
        _refuse(locked, stopped, now, accepted=accepted)
    return Received(locked.uid, accepted, stored, duplicates)


_Verdict = tuple[envelope.Envelope | None, _Refusal | None]


def _verdicts(installation: Installation, messages: list[Any]) -> list[_Verdict]:
    """Each message's checks that do not depend on what the node holds (steps 1 to 4), in order, up to
    and including the first refused."""
    key = _public_key(installation.public_key)
    out: list[_Verdict] = []
    for raw in messages:
        try:
            message = envelope.from_json(raw)
        except envelope.EnvelopeError as bad:
            not_one = _Refusal(
                bad.reason,
                InvalidInput,
                _(NOT_AN_ENVELOPE),
                alarm=AlarmKind.SCHEMA,
                extra={"problem": str(bad)[:DETAIL_MAX]},
            )
            out.append((None, not_one))
            break
        refusal = _check(installation, key, message, raw)
        out.append((message, refusal))
        if refusal is not None:
            break
    return out


def _accept(
    installation: Installation, messages: list[Any], verdicts: list[_Verdict], now: datetime
) -> tuple[int, int, _Refusal | None]:
    """Store the batch's checked messages in order, up to the first refused (inside the lock): step 5."""
    rows: list[FeedMessage] = []
    by_sequence: dict[int, str] = {}
    duplicates = 0
    refusal: _Refusal | None = None
    for raw, (message, refusal) in zip(messages, verdicts, strict=False):
        claimed, seq, kind = _claimed(raw)
        if message is not None and refusal is None:
            expected = installation.accepted_sequence + len(rows) + 1
            refusal = _in_sequence(installation, message, expected, by_sequence)
        if refusal is not None:
            refusal.claimed, refusal.sequence, refusal.kind = claimed, seq, kind
            break
        assert message is not None
        if message.sequence < installation.accepted_sequence + len(rows) + 1:
            duplicates += 1
            continue
        at = _fact_time(message.at)
        assert at is not None  # _check refused it otherwise
        rows.append(
            FeedMessage(
                installation=installation,
                sequence=message.sequence,
                kind=message.kind,
                at=at,
                payload=dict(message.payload),
                signature=message.signature,
                received_at=now,
            )
        )
        by_sequence[message.sequence] = message.signature
        metrics.FEED_RECEIPT_LAG.observe(max(0.0, (now - at).total_seconds()))
    if rows:
        stored = FeedMessage.objects.bulk_create(rows)
        if any(row.pk is None for row in stored):  # a database that returns no ids from a bulk insert
            stored = list(
                FeedMessage.objects.filter(installation=installation, sequence__in=[r.sequence for r in rows])
                .select_related("installation")
                .order_by("sequence")
            )
        derived.check_all(stored)  # the alarms the messages themselves raise, kept with them
        livemodel.apply(installation, stored)  # the live page's rows, moved with the messages
        transaction.on_commit(lambda: live.published(stored))
        was_silent = installation.last_message_at is None or (
            (now - installation.last_message_at).total_seconds() > silence_window(installation)
        )
        installation.accepted_sequence = rows[-1].sequence
        installation.last_message_at = now
        installation.save(update_fields=["accepted_sequence", "last_message_at"])
        if was_silent:
            alarms.clear(installation=installation, kind=AlarmKind.SILENT, by="feed", at=now)
    return len(rows), duplicates, refusal


def _check(
    installation: Installation, key: Ed25519PublicKey, message: envelope.Envelope, raw: dict[str, Any]
) -> _Refusal | None:
    """Why the node refuses this message whatever it holds, or None (steps 2 to 4 of the module's
    docstring)."""
    if message.installation != installation.uid:
        return _Refusal(
            "mixed_batch",
            InvalidInput,
            _("A feed batch holds the messages of one installation only."),
        )
    if not envelope.signature_holds(message, key):
        return _Refusal(
            "bad_signature",
            PermissionDenied,
            _("Message %(seq)d's signature is not its installation's: refused.") % {"seq": message.sequence},
            alarm=AlarmKind.BAD_SIGNATURE,
        )
    try:
        schema.validate(raw)
        if _fact_time(message.at) is None:
            raise schema.SchemaError("$.at", "not a date and time with its UTC offset")
    except schema.SchemaError as bad:
        return _Refusal(
            "schema",
            InvalidInput,
            _("Message %(seq)d is outside its schema at %(where)s.")
            % {"seq": message.sequence, "where": bad.where or "$"},
            alarm=AlarmKind.SCHEMA,
            extra={"where": bad.where, "problem": str(bad)[:DETAIL_MAX]},
        )
    return None


def _in_sequence(
    installation: Installation, message: envelope.Envelope, expected: int, by_sequence: dict[int, str]
) -> _Refusal | None:
    """Why the node refuses this message at this point of its sequence, or None (step 5)."""
    if message.sequence > expected:
        return _Refusal(
            "out_of_order",
            Conflict,
            _("Message %(seq)d is out of order: the node expects message %(expected)d.")
            % {"seq": message.sequence, "expected": expected},
            alarm=AlarmKind.GAP,
        )
    if message.sequence < expected:
        held = by_sequence.get(message.sequence)
        if held is None:
            held = (
                FeedMessage.objects.filter(installation=installation, sequence=message.sequence)
                .values_list("signature", flat=True)
                .first()
            )
        if held != message.signature:
            return _Refusal(
                "replayed",
                Conflict,
                _("Message %(seq)d was already accepted with another content: refused.")
                % {"seq": message.sequence},
                alarm=AlarmKind.REPLAYED,
            )
    return None


def _refuse(
    installation: Installation | None, refusal: _Refusal, now: datetime, *, accepted: int | None
) -> NoReturn:
    """Record the refusal (and its alarm) and raise it to the caller."""
    with transaction.atomic():
        FeedRefusal.objects.create(
            installation=installation,
            claimed_installation=refusal.claimed,
            sequence=refusal.sequence,
            kind=refusal.kind,
            reason=refusal.reason,
            detail=str(refusal.extra.get("problem") or refusal.message)[:DETAIL_MAX],
            received_at=now,
        )
        if refusal.alarm is not None:
            detail: dict[str, Any] = {"sequence": refusal.sequence, "reason": refusal.reason}
            if installation is None:
                detail["claimed"] = refusal.claimed
            if accepted is not None:
                detail["expected"] = accepted + 1
            if "where" in refusal.extra:
                detail["where"] = refusal.extra["where"]
            alarms.raise_alarm(installation=installation, kind=refusal.alarm, detail=detail, at=now)
    log.warning(
        "refused a feed message (%s) of %s, sequence %s",
        refusal.reason,
        installation.uid if installation is not None else repr(refusal.claimed),
        refusal.sequence,
    )
    details: dict[str, Any] = {}
    if accepted is not None:
        details = {"expected": accepted + 1, "accepted": accepted}
    raise refusal.error(refusal.message, code=refusal.reason, **details)
