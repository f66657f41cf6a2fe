"""The gaming-tax rate tables: data the operator enters per jurisdiction (no rate lives in the code), with
the legal text that sets them, the days they hold for and, per game type, the base taxed, the rate % and/or
the fixed fee per machine and period.

Shared by the whole installation (like regions): changed by a superuser or the operator of every venue
(halls.access.require_installation_operator), audited in the chain of every venue of the jurisdiction.
Two tables of one jurisdiction never overlap; a table a filed return used is never changed (a new table,
from a later day, is recorded instead). A refusal names the problem and writes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from halls import access, money
from halls.actors import Actor
from halls.errors import Conflict, InvalidInput, PermissionDenied
from halls.models import Jurisdiction, Venue
from halls.services import audit
from halls.tax import hooks
from halls.tax.compute import BASES, ROUNDINGS, Period, Rate, number
from halls.tax.models import RateTable

MAX_REFERENCE = 240


def _require_operator(actor: Actor) -> None:
    """A superuser or the operator of every venue: the rates are the whole installation's."""
    if not isinstance(actor, User):
        raise PermissionDenied(_("Log in first."), code="not_authenticated")
    access.require_installation_operator(actor)


def _bad(message: str, field: str) -> InvalidInput:
    return InvalidInput(message, code="bad_rate_table", field=field)


def _percent(value: object, where: str) -> Decimal | None:
    if value is None or value == "":
        return None
    try:
        percent = money.parse(where, value, places=money.PERCENT_PLACES, maximum=money.HUNDRED)
    except money.MoneyError as exc:
        raise _bad(
            _("%(where)s: the rate is a percentage from 0 to 100 with at most 4 decimals.")
            % {"where": where},
            where,
        ) from exc
    return percent


def _fee(value: object, where: str) -> Decimal | None:
    if value is None or value == "":
        return None
    try:
        return money.cents(money.parse(where, value, places=money.CENT_PLACES, maximum=money.MAX_BET))
    except money.MoneyError as exc:
        raise _bad(
            _("%(where)s: the fee per machine is an amount in euros with at most 2 decimals.")
            % {"where": where},
            where,
        ) from exc


def checked_lines(raw: object) -> list[dict[str, Any]]:
    """The rate lines as stored (canonical strings), or 400 bad_rate_table naming the line and field."""
    if not isinstance(raw, list) or not raw:
        raise _bad(_("A rate table has at least one line (a game type and its rate)."), "lines")
    known = hooks.game_types()
    seen: set[str] = set()
    lines: list[dict[str, Any]] = []
    for index, item in enumerate(raw):
        where = f"lines[{index}]"
        if not isinstance(item, Mapping):
            raise _bad(_("%(where)s is not an object.") % {"where": where}, where)
        unknown = set(item) - {"game_type", "basis", "rate_percent", "fee_per_machine"}
        if unknown:
            raise _bad(
                _("%(where)s has unknown fields: %(fields)s.")
                % {"where": where, "fields": ", ".join(sorted(unknown))},
                where,
            )
        game_type = str(item.get("game_type") or "")
        if game_type not in known:
            raise _bad(
                _("%(where)s: unknown game type %(game_type)r (one of %(known)s).")
                % {"where": where, "game_type": game_type, "known": ", ".join(sorted(known))},
                f"{where}.game_type",
            )
        if game_type in seen:
            raise _bad(
                _("%(where)s: the game type %(game_type)s has a line already.")
                % {"where": where, "game_type": game_type},
                f"{where}.game_type",
            )
        seen.add(game_type)
        basis = str(item.get("basis") or "")
        if basis not in BASES:
            raise _bad(
                _("%(where)s: the base is one of %(bases)s, not %(basis)r.")
                % {"where": where, "bases": ", ".join(BASES), "basis": basis},
                f"{where}.basis",
            )
        percent = _percent(item.get("rate_percent"), f"{where}.rate_percent")
        fee = _fee(item.get("fee_per_machine"), f"{where}.fee_per_machine")
        if basis == "machines" and (percent is not None or fee is None):
            raise _bad(
                _("%(where)s: a fixed fee per machine has a fee and no rate.") % {"where": where},
                f"{where}.fee_per_machine",
            )
        if percent is None and fee is None:
            raise _bad(
                _("%(where)s: give a rate, a fee per machine or both.") % {"where": where},
                f"{where}.rate_percent",
            )
        lines.append(
            {
                "game_type": game_type,
                "basis": basis,
                "rate_percent": None if percent is None else number(percent),
                "fee_per_machine": None if fee is None else str(fee),
            }
        )
    return sorted(lines, key=lambda line: line["game_type"])


def rates_of(table: RateTable) -> list[Rate]:
    return [
        Rate(
            game_type=line["game_type"],
            basis=line["basis"],
            percent=None if line["rate_percent"] is None else Decimal(line["rate_percent"]),
            fee=None if line["fee_per_machine"] is None else Decimal(line["fee_per_machine"]),
        )
        for line in table.lines
    ]


def _checked(
    *, jurisdiction: str, reference: str, valid_from: date, valid_until: date | None, rounding: str
) -> tuple[str, str]:
    if jurisdiction not in Jurisdiction.values:
        raise InvalidInput(
            _("Unknown jurisdiction %(value)r.") % {"value": jurisdiction},
            code="bad_jurisdiction",
            field="jurisdiction",
        )
    reference = (reference or "").strip()
    if not reference or len(reference) > MAX_REFERENCE:
        raise _bad(
            _(
                "The legal reference (the law or order that sets these rates) is required, at most "
                "%(n)d characters."
            )
            % {"n": MAX_REFERENCE},
            "reference",
        )
    if valid_until is not None and valid_until < valid_from:
        raise _bad(
            _("The table ends (%(until)s) before it starts (%(from)s).")
            % {"until": valid_until, "from": valid_from},
            "valid_until",
        )
    if rounding not in ROUNDINGS:
        raise _bad(
            _("The rounding is one of %(roundings)s, not %(rounding)r.")
            % {"roundings": ", ".join(ROUNDINGS), "rounding": rounding},
            "rounding",
        )
    return jurisdiction, reference


def _overlapping(jurisdiction: str, valid_from: date, valid_until: date | None, exclude: int | None) -> Any:
    found = RateTable.objects.select_for_update().filter(jurisdiction=jurisdiction)
    if exclude is not None:
        found = found.exclude(pk=exclude)
    found = found.filter(Q(valid_until__isnull=True) | Q(valid_until__gte=valid_from))
    if valid_until is not None:
        found = found.filter(valid_from__lte=valid_until)
    return found.order_by("valid_from").first()


def _refuse_overlap(other: RateTable | None) -> None:
    if other is not None:
        raise Conflict(
            _(
                "The days overlap the rate table of %(jurisdiction)s from %(from)s (%(reference)s): "
                "end that one first."
            )
            % {"jurisdiction": other.jurisdiction, "from": other.valid_from, "reference": other.reference},
            code="rate_tables_overlap",
            table=other.pk,
        )


def _audit(table: RateTable, actor: Actor, action: str, data: dict[str, Any]) -> None:
    venue_ids = list(Venue.objects.filter(jurisdiction=table.jurisdiction).values_list("pk", flat=True))
    if venue_ids:
        audit.record_across(venue_ids=venue_ids, actor=actor, action=action, obj=table, data=data)


def _described(table: RateTable) -> dict[str, Any]:
    return {
        "jurisdiction": table.jurisdiction,
        "reference": table.reference,
        "valid_from": table.valid_from.isoformat(),
        "valid_until": None if table.valid_until is None else table.valid_until.isoformat(),
        "rounding": table.rounding,
        "lines": table.lines,
    }


def record_rate_table(
    *,
    jurisdiction: str,
    reference: str,
    valid_from: date,
    valid_until: date | None = None,
    rounding: str = "half_up",
    lines: object,
    actor: Actor,
) -> RateTable:
    """A new rate table (installation operator). 400 bad_rate_table / bad_jurisdiction, 409
    rate_tables_overlap."""
    _require_operator(actor)
    jurisdiction, reference = _checked(
        jurisdiction=jurisdiction,
        reference=reference,
        valid_from=valid_from,
        valid_until=valid_until,
        rounding=rounding,
    )
    checked = checked_lines(lines)
    try:
        with transaction.atomic():
            _refuse_overlap(_overlapping(jurisdiction, valid_from, valid_until, None))
            table = RateTable.objects.create(
                jurisdiction=jurisdiction,
                reference=reference,
                valid_from=valid_from,
                valid_until=valid_until,
                rounding=rounding,
                lines=checked,
                recorded_at=timezone.now(),
                recorded_by=actor if isinstance(actor, User) else None,
            )
            _audit(table, actor, "tax.rate_table_recorded", _described(table))
    except IntegrityError as exc:
        raise Conflict(
            _("A rate table of %(jurisdiction)s starts on %(from)s already.")
            % {"jurisdiction": jurisdiction, "from": valid_from},
            code="rate_tables_overlap",
        ) from exc
    return table


def change_rate_table(
    *,
    table: RateTable,
    reference: str,
    valid_from: date,
    valid_until: date | None,
    rounding: str,
    lines: object,
    actor: Actor,
) -> RateTable:
    """Correct a table no return was filed with (409 rate_table_used otherwise)."""
    _require_operator(actor)
    _jurisdiction, reference = _checked(
        jurisdiction=table.jurisdiction,
        reference=reference,
        valid_from=valid_from,
        valid_until=valid_until,
        rounding=rounding,
    )
    checked = checked_lines(lines)
    with transaction.atomic():
        table = RateTable.objects.select_for_update().get(pk=table.pk)
        if table.returns.exists():
            raise Conflict(
                _(
                    "Returns were filed with this rate table: it stays as filed; record a new table from "
                    "a later day instead."
                ),
                code="rate_table_used",
            )
        _refuse_overlap(_overlapping(table.jurisdiction, valid_from, valid_until, table.pk))
        old = _described(table)
        table.reference, table.valid_from, table.valid_until = reference, valid_from, valid_until
        table.rounding, table.lines, table.changed_at = rounding, checked, timezone.now()
        table.save()
        _audit(table, actor, "tax.rate_table_changed", {"old": old, "new": _described(table)})
    return table


def table_for(jurisdiction: str, period: Period) -> RateTable | None:
    """The table that holds for every day of the period, if one does."""
    return (
        RateTable.objects.filter(jurisdiction=jurisdiction, valid_from__lte=period.first)
        .filter(Q(valid_until__isnull=True) | Q(valid_until__gte=period.last))
        .order_by("-valid_from")
        .first()
    )


def tables(jurisdictions: Iterable[str] | None = None) -> list[RateTable]:
    found = RateTable.objects.all()
    if jurisdictions is not None:
        found = found.filter(jurisdiction__in=list(jurisdictions))
    return list(found.order_by("jurisdiction", "valid_from"))
