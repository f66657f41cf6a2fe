"""The posted signage's read side: the terms a digest names (the public page the sheet's QR code opens).

A digest names the terms of a program version in force (or scheduled, or past), else of a proposal of a
program change still waiting for its second person. Reads only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from bingo.traditional.models import PrizeProgramVersion
from bingo.traditional.services.programs import clock
from bingo.traditional.services.programs.readmodels import version_at
from halls.models import Proposal, ProposalStatus, Room

# The four-eyes kinds whose params are a program's terms (bingo.traditional.services.four_eyes).
PROGRAM_KINDS = ("program.activate", "program.change")


@dataclass(frozen=True)
class Found:
    digest: str
    terms: dict[str, Any]
    status: str  # "in_force", "scheduled", "replaced", "inactive", "proposed"
    venue: str
    room: str
    currency: str
    versions: list[dict[str, Any]] = field(default_factory=list)


def _status(row: PrizeProgramVersion) -> str:
    program = row.program
    if not program.active:
        return "inactive"
    at = clock.venue_now(program.room.venue_id)
    if row.effective_from > at:
        return "scheduled"
    found = version_at(program, at)
    return "in_force" if found is not None and found[0].pk == row.pk else "replaced"


def terms_by_digest(digest: str) -> Found | None:
    """The terms with this digest and where they stand; None when no version nor proposal has them."""
    rows = list(
        PrizeProgramVersion.objects.filter(digest=digest)
        .select_related("program__room__venue")
        .order_by("pk")
    )
    if rows:
        versions = [
            {
                "program": row.program_id,
                "code": row.program.code,
                "version": row.version,
                "effective_from": row.effective_from.isoformat(),
                "status": _status(row),
            }
            for row in rows
        ]
        last = rows[-1]
        return Found(
            digest=digest,
            terms=last.terms,
            status=_status(last),
            venue=last.program.room.venue.name,
            room=last.program.room.name,
            currency=last.program.room.venue.currency,
            versions=versions,
        )
    proposal = (
        Proposal.objects.filter(
            digest=digest,
            kind__in=PROGRAM_KINDS,
            status=ProposalStatus.PROPOSED,
            expires_at__gt=timezone.now(),
        )
        .select_related("venue")
        .order_by("-pk")
        .first()
    )
    if proposal is None:
        return None
    room = Room.objects.filter(pk=proposal.params.get("room"), venue=proposal.venue).first()
    return Found(
        digest=digest,
        terms=proposal.params,
        status="proposed",
        venue=proposal.venue.name,
        room=room.name if room else "",
        currency=proposal.venue.currency,
    )
