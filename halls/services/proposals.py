"""Four eyes (issue 28): propose a money-deciding change, then a second person approves or rejects it.

`propose` checks the proposer's role for the kind (halls.foureyes' registry), runs the kind's validator and
keeps the canonical params with their digest; it expires after HALL_FOUR_EYES_EXPIRY_MINUTES. `approve`
is the second person's act: someone other than the proposer, holding one of the kind's roles in the venue,
who typed their own password in this very call (checked here, never a session left open); the digest of
the posted sheet, when given (or required by the kind), must equal the proposal's. The kind's applier then
makes the change in the same transaction, so an approval either applies the change or writes nothing.
`reject` is a decision too (the second person's, or the proposer withdrawing it), with the password.
Every refusal raises before anything is written. The audit names both people: ``foureyes.proposed`` under
the proposer, ``foureyes.approved`` / ``foureyes.rejected`` under the decider with the proposer's name in
its data, next to the entries of the change itself (under the approver).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext as _

from halls import access
from halls.actors import actor_label
from halls.errors import Conflict, InvalidInput, PermissionDenied
from halls.foureyes import Kind, kind_named, params_digest, posted_digest_of
from halls.models import Proposal, ProposalStatus, Role, Venue
from halls.services import audit, locks
from halls.throttling import locked_out_message

PROPOSED = "foureyes.proposed"
APPROVED = "foureyes.approved"
REJECTED = "foureyes.rejected"
EXPIRED = "foureyes.expired"


def _kind(name: str) -> Kind:
    kind = kind_named(name)
    if kind is None:
        raise InvalidInput(
            _("Unknown kind of change %(kind)r.") % {"kind": name}, code="unknown_kind", field="kind"
        )
    return kind


def _require_kind_role(user: User, venue: Venue, kind: Kind, code: str) -> None:
    if not access.write_roles_in(user, venue.pk).intersection({*kind.roles, Role.OPERATOR}):
        raise PermissionDenied(
            _("This change needs a person with the %(roles)s role in this venue.")
            % {"roles": " / ".join(str(Role(r).label) for r in kind.roles)},
            code=code,
        )


def expiry() -> timedelta:
    return timedelta(minutes=settings.HALL_FOUR_EYES_EXPIRY_MINUTES)


def _data(proposal: Proposal) -> dict[str, Any]:
    """What every four-eyes audit entry keeps: the change and its digest (never personal data)."""
    return {
        "proposal": proposal.pk,
        "kind": proposal.kind,
        "target": proposal.target,
        "params": proposal.params,
        "digest": proposal.digest,
    }


def propose(
    *,
    venue: Venue,
    kind: str,
    target: str,
    params: Mapping[str, Any],
    actor: User,
    reason: str = "",
) -> Proposal:
    """Propose a change of ``kind`` on ``target``: validated now, applied only once a second person
    approves it (`approve`)."""
    spec = _kind(kind)
    _require_kind_role(actor, venue, spec, "proposer_role_required")
    target = str(target).strip()
    if not target or len(target) > 120:
        raise InvalidInput(_("Name what the change is about (at most 120 characters)."), code="bad_target")
    if not isinstance(params, Mapping):
        raise InvalidInput(_("The change must be a JSON object."), code="bad_params", field="params")
    canonical = spec.validate(venue, target, params)
    at = timezone.now()
    with transaction.atomic():
        proposal = Proposal.objects.create(
            venue=venue,
            kind=spec.name,
            target=target,
            params=canonical,
            digest=params_digest(canonical),
            proposed_by=actor,
            proposed_at=at,
            expires_at=at + expiry(),
            reason=str(reason).strip()[:500],
        )
        data = {**_data(proposal), "expires_at": proposal.expires_at}
        audit.record(venue_id=venue.pk, actor=actor, action=PROPOSED, obj=proposal, data=data)
    return proposal


def _check_password(decider: User, password: str, client: HttpRequest | None) -> None:
    """The decider's own password, typed in this call. ``client`` (the door's request, when there is one)
    lets django-axes count a wrong password against its address and refuse a locked-out one."""
    if not password:
        raise InvalidInput(
            _("Type your own password to decide on this change."), code="password_required", field="password"
        )
    user = authenticate(client, username=decider.get_username(), password=password)
    if client is not None and getattr(client, "axes_locked_out", False):
        raise PermissionDenied(locked_out_message(), code="locked_out")
    if user is None or user.pk != decider.pk:
        raise PermissionDenied(_("The password is wrong."), code="wrong_password")


def _check_open(proposal: Proposal, now: datetime) -> None:
    if proposal.status != ProposalStatus.PROPOSED:
        raise Conflict(
            _("This proposal was already decided (%(status)s): nothing changed.")
            % {"status": ProposalStatus(proposal.status).label},
            code="already_decided",
        )
    if now >= proposal.expires_at:
        raise Conflict(
            _("This proposal expired at %(at)s: propose the change again.")
            % {"at": timezone.localtime(proposal.expires_at).strftime("%H:%M")},
            code="proposal_expired",
        )


def approve(
    *,
    proposal: Proposal,
    approver: User,
    password: str,
    posted_digest: str = "",
    client: HttpRequest | None = None,
) -> Proposal:
    """The second person approves: the change is applied by its kind in this same transaction.

    Refused with nothing written: the proposer approving their own change, a decided or expired proposal,
    a wrong password, an approver without the kind's role, a posted digest that differs (or is missing
    where the kind posts a sheet), and whatever the kind's applier refuses."""
    spec = _kind(proposal.kind)
    posted = posted_digest_of(posted_digest)
    with transaction.atomic():
        proposal = locks.lock_proposal(proposal.pk)
        now = timezone.now()
        _check_open(proposal, now)
        if approver.pk == proposal.proposed_by_id:
            raise PermissionDenied(
                _("A change is approved by a second person: you proposed it, someone else must approve it."),
                code="same_person",
            )
        venue = proposal.venue
        _require_kind_role(approver, venue, spec, "approver_role_required")
        _check_password(approver, password, client)
        if spec.posted and not posted:
            raise InvalidInput(
                _("Type the digest printed on the posted sheet to approve this change."),
                code="posted_digest_required",
                field="posted_digest",
            )
        if posted and posted != proposal.digest:
            raise Conflict(
                _(
                    "The digest of the posted sheet (%(posted)s…) is not the digest of this proposal "
                    "(%(digest)s…): post the sheet of this proposal, nothing was approved."
                )
                % {"posted": posted[:12], "digest": proposal.digest[:12]},
                code="posted_digest_differs",
            )
        if params_digest(proposal.params) != proposal.digest:  # the stored change is the one proposed
            raise Conflict(_("The proposal's change does not match its digest."), code="proposal_tampered")
        result = spec.apply(proposal, approver)
        proposal.status = ProposalStatus.APPLIED
        proposal.decided_by = approver
        proposal.decided_at = now
        proposal.posted_digest = posted
        proposal.result = result or {}
        proposal.save(update_fields=["status", "decided_by", "decided_at", "posted_digest", "result"])
        data = {
            **_data(proposal),
            "proposed_by": actor_label(proposal.proposed_by),
            "posted_digest": posted,
            "result": proposal.result,
        }
        audit.record(venue_id=venue.pk, actor=approver, action=APPROVED, obj=proposal, data=data)
    return proposal


def reject(
    *,
    proposal: Proposal,
    decider: User,
    password: str,
    reason: str = "",
    client: HttpRequest | None = None,
) -> Proposal:
    """Reject the change (a second person with the kind's role, or the proposer withdrawing it), with the
    decider's password; nothing of the change is applied."""
    spec = _kind(proposal.kind)
    with transaction.atomic():
        proposal = locks.lock_proposal(proposal.pk)
        now = timezone.now()
        _check_open(proposal, now)
        venue = proposal.venue
        if decider.pk != proposal.proposed_by_id:
            _require_kind_role(decider, venue, spec, "approver_role_required")
        _check_password(decider, password, client)
        proposal.status = ProposalStatus.REJECTED
        proposal.decided_by = decider
        proposal.decided_at = now
        if reason.strip():
            proposal.reason = reason.strip()[:500]
        proposal.save(update_fields=["status", "decided_by", "decided_at", "reason"])
        data = {**_data(proposal), "proposed_by": actor_label(proposal.proposed_by)}
        audit.record(venue_id=venue.pk, actor=decider, action=REJECTED, obj=proposal, data=data)
    return proposal


def expire_proposals(*, now: datetime | None = None) -> int:
    """Mark the proposals nobody decided in time as expired (a beat task); returns how many."""
    now = now or timezone.now()
    due = list(
        Proposal.objects.filter(status=ProposalStatus.PROPOSED, expires_at__lte=now)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    expired = 0
    for pk in due:
        with transaction.atomic():
            proposal = locks.lock_proposal(pk)
            if proposal.status != ProposalStatus.PROPOSED:
                continue  # decided meanwhile
            proposal.status = ProposalStatus.EXPIRED
            proposal.decided_at = now
            proposal.save(update_fields=["status", "decided_at"])
            data = {**_data(proposal), "proposed_by": actor_label(proposal.proposed_by)}
            audit.record(venue_id=proposal.venue_id, actor="beat", action=EXPIRED, obj=proposal, data=data)
            expired += 1
    return expired


def pending(venue_ids: list[int], *, now: datetime | None = None) -> list[Proposal]:
    """Proposals still waiting for their second person (not expired), oldest first."""
    now = now or timezone.now()
    return list(
        Proposal.objects.filter(venue_id__in=venue_ids, status=ProposalStatus.PROPOSED, expires_at__gt=now)
        .select_related("venue", "proposed_by")
        .order_by("proposed_at", "pk")
    )


def decider(*, current: User, username: str = "") -> User:
    """Who decides: the logged-in user, or the second person who typed their username at the same
    terminal (their password is checked by `approve` / `reject`). An unknown username is refused the way
    a wrong password is (nobody learns which usernames exist)."""
    username = username.strip()
    if not username or username == current.get_username():
        return current
    found = User.objects.filter(username=username, is_active=True).first()
    if found is None:
        raise PermissionDenied(_("The password is wrong."), code="wrong_password")
    return found


def record_decided(
    *,
    venue: Venue,
    kind: str,
    target: str,
    params: Mapping[str, Any],
    proposer: User,
    approver: User,
) -> Proposal:
    """A four-eyes decision taken in one act where both people stand (the door's admission override: the
    second person typed their own password at the door, checked there by the door with Django's
    authenticate): recorded the same way as a proposal approved, in the caller's transaction, so the
    audit names both people alike (``foureyes.proposed`` under the first, ``foureyes.approved`` under the
    second). Refused: the same person twice, a second person without the kind's role."""
    spec = _kind(kind)
    if approver.pk == proposer.pk:
        raise PermissionDenied(
            _("A change is approved by a second person: you proposed it, someone else must approve it."),
            code="same_person",
        )
    _require_kind_role(approver, venue, spec, "approver_role_required")
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("record_decided must run inside the caller's transaction")
    now = timezone.now()
    canonical = dict(params)
    proposal = Proposal.objects.create(
        venue=venue,
        kind=spec.name,
        target=str(target)[:120],
        params=canonical,
        digest=params_digest(canonical),
        proposed_by=proposer,
        proposed_at=now,
        expires_at=now,
        status=ProposalStatus.APPLIED,
        decided_by=approver,
        decided_at=now,
    )
    audit.record(venue_id=venue.pk, actor=proposer, action=PROPOSED, obj=proposal, data=_data(proposal))
    data = {**_data(proposal), "proposed_by": actor_label(proposer), "posted_digest": "", "result": {}}
    audit.record(venue_id=venue.pk, actor=approver, action=APPROVED, obj=proposal, data=data)
    return proposal
