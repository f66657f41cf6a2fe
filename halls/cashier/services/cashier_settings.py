"""A venue's cashier settings: how long a ticket is valid, the most a ticket may hold, and the amount above
which a ticket is paid only at the cage. Read by the ticket services; changed by the operator (the admin)
through `change_cashier_settings`, audited with the old and new values.

A venue without its own figure follows its jurisdiction's (settings.HALL_TICKET_BY_JURISDICTION), else the
house default (settings.HALL_TICKET_MAX_AMOUNT / HALL_TICKET_CAGE_ABOVE); the decisions are
halls.cashier.ticketrules' (pure).
"""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.utils.translation import gettext as _

from halls import i18n, money
from halls.access import require_role
from halls.cashier.models import AMOUNT_DIGITS, CashierSettings
from halls.cashier.ticketrules import Problem, TicketLimits, problem, resolve
from halls.errors import InvalidInput
from halls.models import Role, Venue
from halls.services import audit

MAX_VALID_DAYS = 3650
MAX_TICKET = Decimal(10) ** (AMOUNT_DIGITS - money.CENT_PLACES) - money.CENT


def _figure(name: str, value: object) -> Decimal:
    try:
        return money.cents(
            money.parse(name, value, places=money.CENT_PLACES, positive=True, maximum=MAX_TICKET)
        )
    except money.MoneyError as exc:
        raise ImproperlyConfigured(f"{name} must be an amount in euros above 0, not {value!r}") from exc


def default_limits(jurisdiction: str) -> TicketLimits:
    """The ticket limits of a venue that set none of its own, in `jurisdiction`."""
    overrides = settings.HALL_TICKET_BY_JURISDICTION.get(jurisdiction, {})
    return TicketLimits(
        maximum=_figure(
            "HALL_TICKET_MAX_AMOUNT", overrides.get("max_amount", settings.HALL_TICKET_MAX_AMOUNT)
        ),
        cage_above=_figure(
            "HALL_TICKET_CAGE_ABOVE", overrides.get("cage_above", settings.HALL_TICKET_CAGE_ABOVE)
        ),
    )


def ticket_limits(venue_id: int) -> TicketLimits:
    """The ticket limits in force at the venue (its own figures, else its jurisdiction's)."""
    jurisdiction = Venue.objects.filter(pk=venue_id).values_list("jurisdiction", flat=True).first() or ""
    own = (
        CashierSettings.objects.filter(venue_id=venue_id)
        .values_list("ticket_max_amount", "ticket_cage_above")
        .first()
    )
    defaults = default_limits(jurisdiction)
    venue_max, venue_cage = own if own is not None else (None, None)
    return resolve(venue_max, venue_cage, defaults.maximum, defaults.cage_above)


def checked_figure(value: object, field: str) -> Decimal | None:
    """An operator's figure: empty for the jurisdiction's default, else whole cents above zero."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        return money.cents(
            money.parse(field, value, places=money.CENT_PLACES, positive=True, maximum=MAX_TICKET)
        )
    except money.MoneyError as exc:
        raise InvalidInput(
            _(
                "%(field)s: give an amount in euros and cents, above zero and at most %(max)s, or leave "
                "it empty for the jurisdiction's default (got %(value)s)."
            )
            % {"field": field, "max": i18n.amount(MAX_TICKET), "value": str(value)[:40]},
            code="bad_amount",
            field=field,
        ) from exc


def checked_days(days: object) -> int:
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_VALID_DAYS:
        raise InvalidInput(
            _("ticket_valid_days: a ticket is valid for 1 to %(max)s days (got %(value)s).")
            % {"max": MAX_VALID_DAYS, "value": str(days)[:20]},
            code="bad_valid_days",
            field="ticket_valid_days",
        )
    return days


def _checked_pair(limits: TicketLimits) -> None:
    found = problem(limits.maximum, limits.cage_above)
    if found is Problem.CAGE_ABOVE_MAXIMUM:
        raise InvalidInput(
            _(
                "The amount above which tickets are paid only at the cage (%(cage)s) is above the maximum "
                "ticket value (%(max)s): no ticket could reach it. Set it at or below the maximum."
            )
            % {"cage": i18n.amount(limits.cage_above), "max": i18n.amount(limits.maximum)},
            code="cage_above_maximum",
            field="ticket_cage_above",
        )
    if found is not None:  # not_positive: the figures were checked one by one
        raise AssertionError(found)


def checked_limits(*, jurisdiction: str, maximum: Decimal | None, cage_above: Decimal | None) -> TicketLimits:
    """The limits a venue of `jurisdiction` would have with these figures (None: the default), refused
    cage_above_maximum when its cage figure is above its maximum."""
    defaults = default_limits(jurisdiction)
    limits = resolve(maximum, cage_above, defaults.maximum, defaults.cage_above)
    _checked_pair(limits)
    return limits


def _values(row: CashierSettings | None) -> dict[str, str | int | None]:
    if row is None:
        return {"ticket_valid_days": None, "ticket_max_amount": None, "ticket_cage_above": None}
    return {
        "ticket_valid_days": row.ticket_valid_days,
        "ticket_max_amount": money.text(row.ticket_max_amount),
        "ticket_cage_above": money.text(row.ticket_cage_above),
    }


def change_cashier_settings(
    *,
    venue_id: int,
    actor: User,
    ticket_valid_days: int,
    ticket_max_amount: object,
    ticket_cage_above: object,
) -> CashierSettings:
    """The operator sets the venue's ticket validity and its two ticket figures (an empty figure: the
    jurisdiction's default). Refused, nothing written: bad_valid_days, bad_amount, cage_above_maximum (the
    figures in force, its own or the defaults, compared). Audited "cashier.settings_changed" with the old
    and new values; takes effect for the next ticket issued or redeemed (tickets already issued keep their
    amount and expiry)."""
    require_role(actor, venue_id, Role.OPERATOR)
    days = checked_days(ticket_valid_days)
    maximum = checked_figure(ticket_max_amount, "ticket_max_amount")
    cage_above = checked_figure(ticket_cage_above, "ticket_cage_above")
    jurisdiction = Venue.objects.values_list("jurisdiction", flat=True).get(pk=venue_id)
    checked_limits(jurisdiction=jurisdiction, maximum=maximum, cage_above=cage_above)
    with transaction.atomic():
        row = CashierSettings.objects.filter(venue_id=venue_id).first()
        before = _values(row)
        if row is None:
            row = CashierSettings(venue_id=venue_id)
        row.ticket_valid_days = days
        row.ticket_max_amount = maximum
        row.ticket_cage_above = cage_above
        row.save()
        after = _values(row)
        audit.record(
            venue_id=venue_id,
            actor=actor,
            action="cashier.settings_changed",
            obj=row,
            data={"before": before, "after": after},
        )
    return row
