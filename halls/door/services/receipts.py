"""The receipt of a person's self-exclusion (issue 27), printed at the till or shown as a PDF at the door.

The door's, printed through the cashier's printing (halls.cashier.printing: the door stands above the
cashier; the cashier never imports the door). The receipt shows the venue, the day
the self-exclusion was recorded, its term (from, until: never lifted before), its reference (the
self-exclusion's id) and the document as "DNI ******78Z": its type and last three characters, so that its
holder recognises it and nobody else learns whose it is (the hall keeps no more of it: the number itself
is only a keyed digest). Every print or PDF is audited with the self-exclusion's id, never the document.
"""

from __future__ import annotations

import hashlib
from datetime import date
from zoneinfo import ZoneInfo

from django.db import transaction
from django.utils import formats, timezone
from django.utils.translation import gettext as _

from halls.actors import Actor
from halls.cashier.models import Till
from halls.cashier.printing.document import Document, Field, Rule
from halls.cashier.services.printing import PrintResult, print_document
from halls.door.documents import masked
from halls.door.models import SelfExclusion
from halls.models import Venue
from halls.services import audit


def reference(found: SelfExclusion) -> str:
    """The receipt's reference: the self-exclusion's id, as the venue and the authority quote it."""
    return f"AE-{found.venue_id}-{found.pk:06d}"


def _day(value: date) -> str:
    return formats.date_format(value, "SHORT_DATE_FORMAT")


def receipt_document(found: SelfExclusion) -> Document:
    venue = Venue.objects.only("name", "licence_number", "time_zone").get(pk=found.venue_id)
    recorded = timezone.localtime(found.recorded_at, ZoneInfo(venue.time_zone))
    document = masked(found.document_kind, found.document_tail) if found.document_tail else "-"
    return Document(
        venue=venue.name,
        title=_("Self-exclusion receipt"),
        kind="self_exclusion",
        lines=(
            Field(_("Licence"), venue.licence_number),
            Field(_("Reference"), reference(found)),
            Field(_("Recorded on"), f"{_day(recorded.date())} {formats.time_format(recorded, 'H:i')}"),
            Field(_("Document"), document),
            Rule(),
            Field(_("Excluded from"), _day(found.since)),
            Field(_("Excluded until"), _day(found.until)),
            Rule(),
            _(
                "You have asked not to be admitted to this venue. The self-exclusion is in force until the "
                "last day above, inclusive, and cannot be lifted before it. It has been notified to the "
                "gaming authority."
            ),
        ),
        footer=(_("Keep this receipt."),),
    )


def receipt_pdf(*, found: SelfExclusion, actor: Actor) -> bytes:
    """The receipt as a PDF (a door with no till printer shows it to print), audited."""
    from halls.cashier.printing import pdf  # reportlab loads its fonts on import: only when printing

    data = pdf.render(receipt_document(found))
    with transaction.atomic():
        audit.record(
            venue_id=found.venue_id,
            actor=actor,
            action="door.self_exclusion_receipt",
            obj=found,
            data={"medium": "pdf", "size": len(data), "sha256": hashlib.sha256(data).hexdigest()},
        )
    return data


def print_receipt(*, found: SelfExclusion, till: Till, actor: Actor) -> PrintResult:
    """The receipt at ``till``: its printer, else a PDF in the result; audited by print_document."""
    if till.venue_id != found.venue_id:
        raise ValueError(f"till {till.pk} is not of the self-exclusion's venue")
    return print_document(till=till, document=receipt_document(found), actor=actor, subject=found)
