"""A venue's gaming-tax return for a closed period: computed from the game records and meters (through
halls.tax.hooks), with the jurisdiction's rate table for the period, and filed: frozen append-only with the
CSV and its SHA-256, audited on the venue's chain and sent on the feed to the gaming authority.

Computing writes nothing. A period not over yet at the venue (409 period_not_closed), a period no rate table
covers or a game type with figures and no rate in it (409 no_rate_table, naming the jurisdiction, the
period and the game types), a period filed already (409 return_filed): refused, nothing written.
Recomputing a closed period gives the same figures to the cent (``recompute`` compares with what was filed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from halls import money
from halls.actors import Actor, actor_label
from halls.errors import Conflict
from halls.feed.kinds import FeedKind
from halls.feed.services.emit import emit
from halls.models import Jurisdiction, Venue
from halls.services import audit, locks
from halls.tax import compute, hooks
from halls.tax.compute import Computed, MissingRates, Period
from halls.tax.models import RateTable, TaxReturn
from halls.tax.services import periods, rates


@dataclass(frozen=True)
class Draft:
    """A return as computed now (not written)."""

    venue: Venue
    period: Period
    table: RateTable
    computed: Computed
    csv: str
    digest: str


def _label(game_type: str) -> str:
    return str(hooks.game_types().get(game_type, game_type))


def _no_rate(venue: Venue, period: Period, game_types: list[str]) -> Conflict:
    return Conflict(
        _(
            "No rate table of %(jurisdiction)s covers %(period)s for %(game_types)s: the return is blocked "
            "until the operator enters the rates in force for the whole period."
        )
        % {
            "jurisdiction": Jurisdiction(venue.jurisdiction).label,
            "period": period.label,
            "game_types": ", ".join(_label(g) for g in game_types) or _("any game type"),
        },
        code="no_rate_table",
        jurisdiction=venue.jurisdiction,
        period=period.label,
        game_types=game_types,
    )


def head(venue: Venue, period: Period, table: RateTable) -> dict[str, str]:
    """The CSV's first rows: who, which period, by which rates."""
    return {
        "venue": venue.licence_number,
        "jurisdiction": venue.jurisdiction,
        "period": period.label,
        "first_day": period.first.isoformat(),
        "last_day": period.last.isoformat(),
        "rate_table": table.reference,
        "rate_table_valid_from": table.valid_from.isoformat(),
    }


def _draft(venue: Venue, period: Period, table: RateTable | None) -> Draft:
    figures = hooks.figures(venue, period.first, period.last)
    if table is None:
        totals = compute.add_up(figures)
        raise _no_rate(venue, period, [game_type for game_type, f in totals.items() if f.active])
    try:
        computed = compute.compute(figures, rates.rates_of(table), table.rounding)
    except MissingRates as exc:
        raise _no_rate(venue, period, list(exc.game_types)) from exc
    text = compute.csv_text(head(venue, period, table), computed)
    return Draft(venue, period, table, computed, text, compute.digest(text))


def compute_return(*, venue: Venue, period: str) -> Draft:
    """The return of a closed period, computed (nothing written)."""
    found = periods.period_for(venue, period)
    periods.require_closed(venue, found)
    return _draft(venue, found, rates.table_for(venue.jurisdiction, found))


def recompute(tax_return: TaxReturn) -> Draft:
    """A filed return computed again from the records, with the rate table it was filed with."""
    period = compute.parse_period(tax_return.period, tax_return.period_kind)
    return _draft(tax_return.venue, period, tax_return.rate_table)


def feed_payload(tax_return: TaxReturn) -> dict[str, Any]:
    """The "tax.return" message of the feed (halls/feed/schemas/v1/tax.return.json): no person in it."""
    lines = [dict(zip(compute.COLUMNS, row, strict=True)) for row in tax_return.lines]
    return {
        "venue": tax_return.venue.licence_number,
        "jurisdiction": tax_return.jurisdiction,
        "period": tax_return.period,
        "bases": [
            {
                "game_type": line["game_type"],
                "basis": line["basis"],
                "base": line["base"],
                "machines": int(line["machines"]),
                "rate_percent": line["rate_percent"] or None,
                "fee_per_machine": line["fee_per_machine"] or None,
                "due": line["due"],
            }
            for line in lines
        ],
        "rate_table": tax_return.rate_reference,
        "rounding": tax_return.rounding,
        "due": str(tax_return.total_due),
        "digest": tax_return.digest,
    }


def file_return(*, venue: Venue, period: str, actor: Actor) -> TaxReturn:
    """File the venue's return for a closed period (the operator): frozen, audited, sent on the feed."""
    found = periods.period_for(venue, period)
    periods.require_closed(venue, found)
    try:
        with transaction.atomic():
            locks.lock_venue(venue.pk)
            if TaxReturn.objects.filter(venue=venue, period=found.label).exists():
                raise _filed(venue, found)
            draft = _draft(venue, found, rates.table_for(venue.jurisdiction, found))
            now = timezone.now()
            tax_return = TaxReturn.objects.create(
                venue=venue,
                jurisdiction=venue.jurisdiction,
                period=found.label,
                period_kind=found.kind,
                first_day=found.first,
                last_day=found.last,
                rate_table=draft.table,
                rate_reference=draft.table.reference,
                rounding=draft.computed.rounding,
                lines=[compute.line_row(line) for line in draft.computed.lines],
                total_due=money.cents(draft.computed.total),
                csv=draft.csv,
                digest=draft.digest,
                filed_at=now,
                filed_by=actor if isinstance(actor, User) else None,
                filed_by_label=actor_label(actor),
            )
            audit.record(
                venue_id=venue.pk,
                actor=actor,
                action="tax.return_filed",
                obj=tax_return,
                data={
                    "period": tax_return.period,
                    "rate_table": draft.table.pk,
                    "total_due": str(tax_return.total_due),
                    "digest": tax_return.digest,
                },
            )
            emit(FeedKind.TAX_RETURN, feed_payload(tax_return), venue_id=venue.pk, at=now)
    except IntegrityError as exc:
        raise _filed(venue, found) from exc
    return tax_return


def _filed(venue: Venue, period: Period) -> Conflict:
    return Conflict(
        _("The return of %(venue)s for %(period)s is filed already.")
        % {"venue": venue.name, "period": period.label},
        code="return_filed",
        period=period.label,
    )


def filed(venue: Venue) -> list[TaxReturn]:
    return list(TaxReturn.objects.filter(venue=venue).select_related("rate_table").order_by("-first_day"))


def filed_one(venue: Venue, period: str) -> TaxReturn | None:
    return TaxReturn.objects.filter(venue=venue, period=period.strip().upper()).first()
