"""The prohibited-access registers: created, loaded from the authority's file, and looked up at the door.

`load_register_file` reads a register file (halls.door.registerfile: header, one line per person, a trailer
with the count and the SHA-256) in one transaction: the header is checked against the register (its
jurisdiction, a version newer than the one loaded and never loaded before), then every line is read,
checked and written as the keyed digest of the person's document (COPY on PostgreSQL, large batches on
SQLite), streaming, so memory stays flat whatever the file's size; the trailer is checked last. Any refusal
raises before the commit: a bad file changes nothing, and the message names the line and the problem, never
the line's content. On success the new version becomes the register's current one, the superseded
version's entries are deleted (its row stays: a visit names the version that decided), and the load is
audited in the chain of every venue the register binds, with counts, version and digest, never an ID.

`check_document` answers whether a document is on any register in force for a venue (the national
registers and those of its jurisdiction, each at its current version), which register and version listed
it, and which registers could not be consulted (never loaded, or keyed with another HALL_REGISTER_KEY).
With ``online=True`` (the door's admission) a register configured in HALL_DOOR_ONLINE_REGISTERS is asked
at its authority's URL first (halls.door.online), all of them within HALL_DOOR_ONLINE_BUDGET_SECONDS; the
authority's answer decides for that register, and while its service is down, slow or answering garbage,
the register's last loaded file decides and the check says so (`Consultation.FILE_FALLBACK`). Only the
register's code, the outcome and the time taken are logged, never the document.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from halls.actors import Actor, actor_label
from halls.door import online as online_query
from halls.door.documents import Document, keyed_digest
from halls.door.models import Consultation, Register, RegisterEntry, RegisterVersion
from halls.door.registerfile import NATIONAL, RegisterFile, RegisterFileError
from halls.door.services import locks, players
from halls.door.texts import file_problem
from halls.errors import Conflict, InvalidInput, NotFound
from halls.models import Jurisdiction, Venue
from halls.services import audit

log = logging.getLogger(__name__)

# Rows per executemany on SQLite and per COPY write on PostgreSQL.
BATCH = 10_000


def register_key() -> bytes:
    return str(settings.HALL_REGISTER_KEY).encode()


def key_id(key: bytes | None = None) -> str:
    """A short, public name of the register key (an HMAC of a fixed text): which key keyed a version."""
    return hmac.new(key or register_key(), b"halls.door register key", hashlib.sha256).hexdigest()[:16]


def _user(actor: Actor) -> User | None:
    return actor if isinstance(actor, User) else None


def _bound_venues(jurisdiction: str) -> list[int]:
    """The venues a register binds: every venue for a national one, else those of its jurisdiction."""
    venues = Venue.objects.all() if not jurisdiction else Venue.objects.filter(jurisdiction=jurisdiction)
    return list(venues.order_by("pk").values_list("pk", flat=True))


def _jurisdiction(value: str) -> str:
    """A file's or a caller's jurisdiction as the register stores it: blank for NATIONAL."""
    value = value.strip().upper()
    if value in ("", NATIONAL):
        return ""
    if value not in Jurisdiction.values:
        raise InvalidInput(
            _("Unknown jurisdiction %(value)s: NATIONAL or one of %(known)s.")
            % {"value": value, "known": ", ".join(Jurisdiction.values)},
            code="bad_jurisdiction",
        )
    return value


def _jurisdiction_label(value: str) -> str:
    return str(Jurisdiction(value).label) if value else _("national")


# --- registers ------------------------------------------------------------------------------------------


def create_register(*, code: str, name: str, jurisdiction: str, actor: Actor) -> Register:
    """A register of a jurisdiction (or national, blank or NATIONAL), to load its authority's files into."""
    with transaction.atomic():
        register = _create(code=code, name=name, jurisdiction=jurisdiction)
        _audit_created(register, actor)
    return register


def _create(*, code: str, name: str, jurisdiction: str) -> Register:
    code, name = code.strip().upper(), name.strip()
    if not code or len(code) > 20 or not name or len(name) > 120:
        raise InvalidInput(
            _("A register needs a code (at most 20 characters) and a name (at most 120)."),
            code="bad_register",
        )
    try:
        with transaction.atomic():
            return Register.objects.create(code=code, name=name, jurisdiction=_jurisdiction(jurisdiction))
    except IntegrityError as exc:
        raise Conflict(
            _("A register with code %(code)s exists.") % {"code": code}, code="register_code_taken"
        ) from exc


def _audit_created(register: Register, actor: Actor) -> None:
    audit.record_across(
        venue_ids=_bound_venues(register.jurisdiction),
        actor=actor,
        action="door.register_created",
        obj=register,
        data={
            "code": register.code,
            "name": register.name,
            "jurisdiction": register.jurisdiction or NATIONAL,
        },
    )


# --- loading a file -------------------------------------------------------------------------------------


def _refused(error: RegisterFileError) -> InvalidInput:
    return InvalidInput(file_problem(error), code=f"register_file_{error.problem.value}", line=error.line)


def load_register_file(*, stream: BinaryIO, actor: Actor, create_name: str | None = None) -> RegisterVersion:
    """Load one version of a register from its file (halls.door.registerfile's shape), all or nothing.

    The register is the one the header names; with ``create_name`` an unknown one is created (of the
    header's jurisdiction) in the same transaction. Refused, with nothing written: a malformed file (the
    line and the problem), a truncated one (no END line, or its count or digest not the file's), a version
    already loaded, one older than the current (by number or issue date), another jurisdiction's file.
    """
    started = time.monotonic()
    try:
        reader = RegisterFile(stream)
    except RegisterFileError as exc:
        raise _refused(exc) from None
    header = reader.header
    with transaction.atomic():
        found = Register.objects.filter(code=header.register).first()
        created = found is None
        if found is None:
            if create_name is None:
                raise NotFound(
                    _("There is no register %(code)s: create it first.") % {"code": header.register},
                    code="unknown_register",
                )
            found = _create(code=header.register, name=create_name, jurisdiction=header.jurisdiction)
        register = locks.lock_register(found.pk)
        if header.jurisdiction.strip().upper() != (register.jurisdiction or NATIONAL):
            raise Conflict(
                _("The file is of another jurisdiction (%(file)s): the register %(code)s is %(register)s.")
                % {
                    "file": header.jurisdiction,
                    "code": register.code,
                    "register": _jurisdiction_label(register.jurisdiction),
                },
                code="register_other_jurisdiction",
            )
        current = register.current_version
        if RegisterVersion.objects.filter(register=register, number=header.version).exists():
            raise Conflict(
                _("Version %(version)d of the register %(code)s is already loaded.")
                % {"version": header.version, "code": register.code},
                code="register_version_loaded",
            )
        if current is not None and (header.version < current.number or header.issued < current.issued_on):
            raise Conflict(
                _(
                    "The file is older than the register's current version: version %(version)d of "
                    "%(issued)s, and version %(current)d of %(current_issued)s is loaded."
                )
                % {
                    "version": header.version,
                    "issued": header.issued.isoformat(),
                    "current": current.number,
                    "current_issued": current.issued_on.isoformat(),
                },
                code="register_version_older",
            )
        now = timezone.now()
        version = RegisterVersion.objects.create(
            register=register,
            number=header.version,
            issued_on=header.issued,
            sha256="",
            key_id=key_id(),
            entry_count=0,
            loaded_at=now,
            loaded_by=_user(actor),
            loaded_by_label=actor_label(actor)[:150],
        )
        try:
            count = _write_entries(version.pk, _digests(reader.documents()))
        except RegisterFileError as exc:
            raise _refused(exc) from None
        version.sha256, version.entry_count = reader.sha256, count
        version.save(update_fields=["sha256", "entry_count"])
        if current is not None:
            with connection.cursor() as cursor:  # one statement (no rows brought into Python)
                cursor.execute(
                    f"DELETE FROM {RegisterEntry._meta.db_table} WHERE version_id = %s",  # noqa: S608
                    [current.pk],
                )
            current.superseded_at = now
            current.save(update_fields=["superseded_at"])
        register.current_version = version
        register.save(update_fields=["current_version"])
        # Players inside a bound venue whom the new version lists: admission withdrawn, cards blocked, the
        # door alerted (before the audit rows: the card locks rank below the chain heads).
        alerts = players.withdraw_listed(
            version=version, venue_ids=_bound_venues(register.jurisdiction), actor=actor
        )
        if created:  # audited after the register's lock (the audit heads come last in the lock order)
            _audit_created(register, actor)
        audit.record_across(
            venue_ids=_bound_venues(register.jurisdiction),
            actor=actor,
            action="door.register_loaded",
            obj=version,
            data={
                "register": register.code,
                "version": version.number,
                "issued_on": version.issued_on.isoformat(),
                "entries": count,
                "sha256": version.sha256,
                "replaced_version": current.number if current is not None else None,
                "players_inside_listed": len(alerts),
            },
        )
    log.info(
        "register %s version %d loaded: %d entries in %.1f s",
        register.code,
        version.number,
        count,
        time.monotonic() - started,
    )
    return version


def _digests(documents: Iterable[Document]) -> Iterator[bytes]:
    key = register_key()
    for document in documents:
        yield keyed_digest(key, document)


def _write_entries(version_id: int, digests: Iterator[bytes]) -> int:
    """Write every digest as an entry of the version; how many. COPY on PostgreSQL, batches elsewhere."""
    count = 0
    table = RegisterEntry._meta.db_table
    if connection.vendor == "postgresql":
        prefix = f"{version_id}\t\\\\x"
        with (
            connection.cursor() as cursor,
            cursor.copy(f"COPY {table} (version_id, digest) FROM STDIN") as copy,
        ):
            block: list[str] = []
            for digest in digests:
                block.append(prefix + digest.hex() + "\n")
                if len(block) == BATCH:
                    copy.write("".join(block))
                    count += len(block)
                    block.clear()
            copy.write("".join(block))
            count += len(block)
        return count
    # Elsewhere (SQLite, the embedded hall): one prepared INSERT run over batches of rows, no model objects.
    insert = f"INSERT INTO {table} (version_id, digest) VALUES (%s, %s)"  # noqa: S608
    batch: list[tuple[int, bytes]] = []
    with connection.cursor() as cursor:
        for digest in digests:
            batch.append((version_id, digest))
            if len(batch) == BATCH:
                cursor.executemany(insert, batch)
                count += len(batch)
                batch.clear()
        cursor.executemany(insert, batch)
    return count + len(batch)


# --- the lookup -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RegisterInForce:
    """A register binding the venue, and the version consulted (None: none loaded yet)."""

    register_id: int
    code: str
    version_id: int | None
    version: int | None
    readable: bool  # a version is loaded, keyed with the current HALL_REGISTER_KEY


@dataclass(frozen=True, slots=True)
class RegisterCheck:
    listed_on: RegisterInForce | None  # the register (and its version) that lists the document, if any
    consulted: tuple[RegisterInForce, ...]  # every register in force for the venue, national ones first
    # The online answers, by register id (registers asked online only; an outcome may be no answer).
    online: dict[int, online_query.Outcome] = field(default_factory=dict)

    @property
    def listed(self) -> bool:
        return self.listed_on is not None

    @property
    def listed_online(self) -> bool:
        """The authority's online service listed the document (no file version decided)."""
        return self.listed_on is not None and self.online.get(self.listed_on.register_id) is (
            online_query.Outcome.LISTED
        )

    @property
    def decided_by_version(self) -> int | None:
        """The id of the register's file version that listed the document (None: none did, or online)."""
        return None if self.listed_on is None or self.listed_online else self.listed_on.version_id

    @property
    def unreadable(self) -> tuple[RegisterInForce, ...]:
        """Registers that bind the venue but could not say: not answered online, and their file never
        loaded or keyed with another key."""
        return tuple(r for r in self.consulted if not r.readable and not self._answered(r))

    @property
    def consultation(self) -> Consultation:
        """Online: every register asked online answered; file fallback: one did not and its file decided;
        file: none is consulted online."""
        if not self.online:
            return Consultation.FILE
        if all(outcome.answered for outcome in self.online.values()):
            return Consultation.ONLINE
        return Consultation.FILE_FALLBACK

    def _answered(self, register: RegisterInForce) -> bool:
        outcome = self.online.get(register.register_id)
        return outcome is not None and outcome.answered


def registers_in_force(venue: Venue) -> tuple[RegisterInForce, ...]:
    """The national registers and those of the venue's jurisdiction, national first, then by code."""
    current_key = key_id()
    registers = (
        Register.objects.filter(Q(jurisdiction="") | Q(jurisdiction=venue.jurisdiction))
        .select_related("current_version")
        .order_by("jurisdiction", "code")
    )
    return tuple(
        RegisterInForce(
            register_id=r.pk,
            code=r.code,
            version_id=r.current_version_id,
            version=r.current_version.number if r.current_version else None,
            readable=r.current_version is not None and r.current_version.key_id == current_key,
        )
        for r in registers
    )


def online_registers() -> dict[str, online_query.OnlineRegister]:
    """The registers consulted online, by code (HALL_DOOR_ONLINE_REGISTERS); an entry without a URL is
    left out, with a warning (its file decides)."""
    found = {}
    configured: dict[str, Any] = settings.HALL_DOOR_ONLINE_REGISTERS or {}
    for code, spec in configured.items():
        url = str((spec or {}).get("url") or "").strip()
        if not url:
            log.warning("door: HALL_DOOR_ONLINE_REGISTERS[%s] has no url: its file decides", code)
            continue
        found[str(code).strip().upper()] = online_query.OnlineRegister(
            url=url,
            timeout=float(spec.get("timeout", settings.HALL_DOOR_ONLINE_TIMEOUT_SECONDS)),
            token=str(spec.get("token") or ""),
        )
    return found


def _ask_online(
    consulted: tuple[RegisterInForce, ...], document: Document
) -> dict[int, online_query.Outcome]:
    """Ask each register configured online, in order, all within the budget; the outcome of each (a
    register left without time is a timeout). Logs the register, the outcome and the time, never more."""
    configured = online_registers()
    asked = [r for r in consulted if r.code in configured]
    if not asked:
        return {}
    deadline = time.monotonic() + float(settings.HALL_DOOR_ONLINE_BUDGET_SECONDS)
    outcomes = {}
    for register in asked:
        left = deadline - time.monotonic()
        if left <= 0:
            outcomes[register.register_id] = online_query.Outcome.TIMEOUT
            log.warning("door: register %s not asked online: the time budget is spent", register.code)
            continue
        answer = online_query.query(configured[register.code], document, timeout=left)
        outcomes[register.register_id] = answer.outcome
        if answer.outcome.answered:
            log.info("door: register %s answered online in %.0f ms", register.code, answer.seconds * 1000)
        else:
            log.warning(
                "door: register %s online %s (HTTP %s) after %.0f ms: its last loaded file decides",
                register.code,
                answer.outcome.value,
                answer.status if answer.status is not None else "-",
                answer.seconds * 1000,
            )
    return outcomes


def check_document(*, venue: Venue, document: Document, online: bool = False) -> RegisterCheck:
    """Is this document on a register in force for the venue? Two queries: the registers, the digest.

    ``online``: ask the registers configured online first (outside any transaction: an HTTP call); each
    one's answer decides for it, and a register that did not answer is decided by its file."""
    consulted = registers_in_force(venue)
    outcomes = _ask_online(consulted, document) if online else {}
    by_version = {
        r.version_id: r
        for r in consulted
        if r.readable and r.version_id is not None and not outcomes.get(r.register_id, _NO_ANSWER).answered
    }
    hits: set[int] = set()
    if by_version:
        digest = keyed_digest(register_key(), document)
        hits = set(
            RegisterEntry.objects.filter(digest=digest, version_id__in=list(by_version)).values_list(
                "version_id", flat=True
            )
        )
    listed_on = next(
        (
            r
            for r in consulted
            if outcomes.get(r.register_id) is online_query.Outcome.LISTED
            or (r.version_id in hits and r.version_id in by_version)
        ),
        None,
    )
    return RegisterCheck(listed_on=listed_on, consulted=consulted, online=outcomes)


_NO_ANSWER = online_query.Outcome.DOWN
