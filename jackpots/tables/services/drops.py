"""A table's drop, counted: one amount per table and venue-local day (the drop box's cash and chips), the
table drop the gaming tax may be levied on (halls.tax, through jackpots.tables.taxfigures).

Written once (append-only): the same count again is a no-op that answers the row; another amount for a day
counted already is refused (409 drop_counted), as a day not over yet at the venue (409 day_not_over) or an
amount that is no whole cents (400 bad_amount). Audited in the venue's chain."""

from __future__ import annotations

from datetime import date
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from halls import money
from halls.actors import Actor, actor_label
from halls.errors import Conflict, InvalidInput
from halls.services import audit, venueclock
from jackpots.tables.models import CasinoTable, TableDrop
from jackpots.tables.services.locks import lock_table


def record_drop(*, table: CasinoTable, day: date, amount: Any, actor: Actor) -> TableDrop:
    try:
        counted = money.cents(money.parse("amount", amount, places=money.CENT_PLACES, maximum=money.MAX_BET))
    except money.MoneyError as exc:
        raise InvalidInput(
            _("The drop is an amount in euros of at least 0.00 with at most 2 decimals."),
            code="bad_amount",
            field="amount",
        ) from exc
    if day >= venueclock.today(table.venue):
        raise Conflict(
            _("The drop of %(day)s is counted once the day is over.") % {"day": day.isoformat()},
            code="day_not_over",
        )
    with transaction.atomic():
        table = lock_table(table.pk)
        found = TableDrop.objects.filter(table=table, day=day).first()
        if found is not None:
            if found.amount == counted:
                return found
            raise Conflict(
                _("The drop of table %(table)s for %(day)s was counted already: %(amount)s.")
                % {"table": table.number, "day": day.isoformat(), "amount": found.amount},
                code="drop_counted",
            )
        drop = TableDrop.objects.create(
            table=table,
            day=day,
            amount=counted,
            counted_at=timezone.now(),
            counted_by=actor if isinstance(actor, User) else None,
            counted_by_label=actor_label(actor),
        )
        audit.record(
            venue_id=table.venue_id,
            actor=actor,
            action="table.drop_counted",
            obj=drop,
            data={"table": table.number, "day": day.isoformat(), "amount": str(counted)},
        )
    return drop
