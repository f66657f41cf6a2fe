"""What the venue's AML officer reads: the payouts tied to a person and the flags of a date range (the
venue's local days), for the compliance page, its CSV and its PDF. A person shows as a short reference
(the first hex digits of their document's keyed digest: the same person, the same reference; no number
behind it), and, for an identified payout, as the identification recorded at the cage."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

from django.utils.translation import gettext as _

from halls import i18n
from halls.cage.models import Flag, FlagKind, Identification, PayoutKind, PayoutRecord
from halls.cashier import cardnumber, tito
from halls.errors import InvalidInput
from halls.models import Venue

MAX_DAYS = 366
PERSON_HEX = 10


def person_ref(digest: bytes | memoryview | None) -> str:
    """A short, stable reference of a person for the officer's lists ("" once purged)."""
    return bytes(digest).hex()[:PERSON_HEX].upper() if digest is not None else ""


@dataclass(frozen=True)
class PayoutRow:
    record: int
    at: datetime
    kind: str
    kind_label: str
    source: str
    amount: Decimal
    paid_by: str
    person: str
    identification: Identification | None
    flags: tuple[int, ...]


@dataclass(frozen=True)
class FlagRow:
    flag: Flag
    kind_label: str
    person: str
    records: tuple[str, ...]  # the payouts involved, by their source ("payable:12")
    payouts: tuple[str, ...]  # the same, as a person reads them ("Bingo 900,00 € · 17:16")
    subject: str  # the card or ticket cashed out (little play), as printed
    reviewed_by: str


@dataclass(frozen=True)
class Compliance:
    venue: Venue
    first: date
    last: date
    payouts: list[PayoutRow]
    flags: list[FlagRow]

    @property
    def open_flags(self) -> int:
        return sum(1 for f in self.flags if f.flag.reviewed_at is None)


def checked_days(first: date, last: date | None) -> tuple[date, date]:
    last = last or first
    if last < first or (last - first).days >= MAX_DAYS or not 1900 <= first.year <= 9000:
        raise InvalidInput(
            _("The days must run from 'from' to 'to', at most %(n)d of them.") % {"n": MAX_DAYS},
            code="bad_days",
        )
    return first, last


def _bounds(venue: Venue, first: date, last: date) -> tuple[datetime, datetime]:
    zone = ZoneInfo(venue.time_zone)
    start = datetime.combine(first, datetime.min.time(), tzinfo=zone)
    end = datetime.combine(last + timedelta(days=1), datetime.min.time(), tzinfo=zone)
    return start, end


def compliance(venue: Venue, first: date, last: date | None = None) -> Compliance:
    first, last = checked_days(first, last)
    start, end = _bounds(venue, first, last)
    records = list(
        PayoutRecord.objects.filter(venue=venue, at__gte=start, at__lt=end)
        .select_related("identification")
        .prefetch_related("flags")
        .order_by("at", "pk")
    )
    payouts = [
        PayoutRow(
            record=r.pk,
            at=r.at,
            kind=r.kind,
            kind_label=str(PayoutKind(r.kind).label),
            source=r.source,
            amount=r.amount,
            paid_by=r.paid_by_label,
            person=person_ref(r.digest),
            identification=r.identification,
            flags=tuple(f.pk for f in r.flags.all()),
        )
        for r in records
    ]
    flags = [
        FlagRow(
            flag=f,
            kind_label=str(FlagKind(f.kind).label),
            person=person_ref(f.digest),
            records=tuple(r.source for r in _involved(f)),
            payouts=tuple(
                f"{PayoutKind(r.kind).label} {i18n.amount(r.amount)} · {local(venue, r.at)[11:]}"
                for r in _involved(f)
            ),
            subject=_subject(f),
            reviewed_by=f.reviewed_by.get_username() if f.reviewed_by is not None else "",
        )
        for f in Flag.objects.filter(venue=venue, at__gte=start, at__lt=end)
        .select_related("reviewed_by", "card", "ticket")
        .prefetch_related("records")
        .order_by("at", "pk")
    ]
    return Compliance(venue=venue, first=first, last=last, payouts=payouts, flags=flags)


def _involved(flag: Flag) -> list[PayoutRecord]:
    return sorted(flag.records.all(), key=lambda r: (r.at, r.pk))


def _subject(flag: Flag) -> str:
    if flag.ticket is not None:
        return _("ticket %(number)s") % {"number": tito.grouped(flag.ticket.number)}
    if flag.card is not None:
        return _("card %(number)s") % {"number": cardnumber.printed(flag.card.number)}
    return ""


def local(venue: Venue, at: datetime | None) -> str:
    if at is None:
        return ""
    return at.astimezone(ZoneInfo(venue.time_zone)).strftime("%Y-%m-%d %H:%M")


def identity_text(found: Identification | None) -> tuple[str, str, str, str, str]:
    """Name, document, date of birth, nationality, scan reference of an identification (blanks: none)."""
    if found is None:
        return "", "", "", "", ""
    document = f"{found.document_kind} {found.document_number} ({found.document_country})"
    return found.full_name, document, found.birth_date.isoformat(), found.nationality, found.scan_reference


def csv_rows(report: Compliance) -> list[list[str]]:
    """The report as CSV rows: the payouts, a blank line, then the flags."""
    venue = report.venue
    rows: list[list[str]] = [
        [
            _("Paid at"),
            _("Kind"),
            _("What"),
            _("Amount"),
            _("Paid by"),
            _("Person"),
            _("Identification"),
            _("Full name"),
            _("Document"),
            _("Date of birth"),
            _("Nationality"),
            _("Scan reference"),
            _("Flags"),
        ]
    ]
    for p in report.payouts:
        ident = p.identification
        rows.append(
            [
                local(venue, p.at),
                p.kind_label,
                p.source,
                str(p.amount),
                p.paid_by,
                p.person,
                str(ident.pk) if ident is not None else "",
                *identity_text(ident),
                " ".join(str(f) for f in p.flags),
            ]
        )
    rows.append([])
    rows.append(
        [
            _("Flag"),
            _("Flagged at"),
            _("Kind"),
            _("Person"),
            _("Total"),
            _("Cashed in"),
            _("Played"),
            _("Payouts involved"),
            _("Card or ticket"),
            _("Reviewed by"),
            _("Reviewed at"),
            _("Review note"),
        ]
    )
    for f in report.flags:
        flag = f.flag
        rows.append(
            [
                str(flag.pk),
                local(venue, flag.at),
                f.kind_label,
                f.person,
                str(flag.total),
                "" if flag.cashed_in is None else str(flag.cashed_in),
                "" if flag.played is None else str(flag.played),
                " ".join(f.records),
                f.subject,
                f.reviewed_by,
                local(venue, flag.reviewed_at),
                flag.review_note,
            ]
        )
    return rows
