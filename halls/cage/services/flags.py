"""The AML officer's review of a flag: an operator of the venue marks it reviewed, with a note. Once: a
reviewed flag is not reviewed again (already_reviewed). Audited with the flag's id (the note stays on the
flag: it may name the person)."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from halls.access import require_role
from halls.cage.models import Flag
from halls.errors import Conflict, InvalidInput, NotFound
from halls.models import Role
from halls.services import audit

NOTE_MAX = 2000


def review_flag(*, venue_id: int, flag_id: int, note: str, actor: User) -> Flag:
    require_role(actor, venue_id, Role.OPERATOR)
    text = str(note or "").strip()
    if not text or len(text) > NOTE_MAX:
        raise InvalidInput(
            _("Write what the review found (at most %(n)d characters).") % {"n": NOTE_MAX},
            code="bad_review_note",
        )
    with transaction.atomic():
        flag = Flag.objects.select_related("reviewed_by").filter(pk=flag_id, venue_id=venue_id).first()
        if flag is None:
            raise NotFound(_("No flag %(id)s in this venue.") % {"id": flag_id}, code="unknown_flag")
        now = timezone.now()
        # Compare-and-swap: of two reviews at once, one marks the flag, the other finds it reviewed.
        done = Flag.objects.filter(pk=flag.pk, reviewed_at__isnull=True).update(
            reviewed_by=actor, reviewed_at=now, review_note=text
        )
        if not done:
            flag.refresh_from_db()
            raise Conflict(
                _("This flag was already reviewed by %(who)s.")
                % {"who": flag.reviewed_by.get_username() if flag.reviewed_by else ""},
                code="already_reviewed",
            )
        flag.refresh_from_db()
        audit.record(
            venue_id=venue_id,
            actor=actor,
            action="cage.flag_reviewed",
            obj=flag,
            data={"flag": flag.pk, "kind": flag.kind},
        )
    return flag
