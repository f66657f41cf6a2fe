"""The authority's alarms: cleared by a person of the authority, who and when kept on the alarm (never
deleted). The node has no venue, so no audit chain of a venue to write to: the alarm's row is the record."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from halls.errors import Conflict, NotFound
from halls.regulator.models import Alarm


def clear_alarm(*, alarm_id: int, actor: AbstractBaseUser) -> Alarm:
    """Clear an open alarm, recording who cleared it and when (404 unknown, 409 already cleared)."""
    with transaction.atomic():
        alarm = Alarm.objects.select_for_update().filter(pk=alarm_id).first()
        if alarm is None:
            raise NotFound(_("No alarm %(id)s.") % {"id": alarm_id}, code="unknown_alarm")
        if alarm.cleared_at is not None:
            raise Conflict(
                _("This alarm was already cleared by %(who)s.") % {"who": alarm.cleared_by or "—"},
                code="already_cleared",
            )
        alarm.cleared_at = timezone.now()
        alarm.cleared_by = actor.get_username()[:150]
        alarm.save(update_fields=["cleared_at", "cleared_by"])
    return alarm
