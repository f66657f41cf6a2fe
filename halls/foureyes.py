"""Four eyes: the registry of the changes that need a second person (issue 28).

A money-deciding change is not made by one person: it is *proposed* (halls.services.proposals.propose),
then *approved* by a second member of the venue's staff who holds one of the kind's roles and types their
own password in the approval itself, and only then applied, in the approval's transaction, by the kind's
applier. halls offers the registry; the apps above it (jackpots, machines, bingo) register their kinds in
their ``AppConfig.ready``, so halls never imports them.

How to register a kind (one call per kind, at ``ready``)::

    from halls.foureyes import Kind, register_kind

    register_kind(Kind(
        name="pool.parameters",                 # stable key, stored on every Proposal
        label=gettext_lazy("Change a pool's parameters"),  # what the pending page shows
        roles=(Role.OPERATOR,),                 # who may propose it and who may approve it
        validate=validate_parameters,           # (venue, target, params) -> canonical params, or raises
        apply=apply_parameters,                 # (proposal, approver) -> result dict, in the approval's tx
        posted=False,                           # True: the approver must type the posted sheet's digest
        api=True,                               # False: only its own door proposes it (not /api/proposals/)
    ))

- ``validate(venue, target, params)`` runs when the change is proposed: it checks the target belongs to
  the venue and the params make sense (raising halls.errors.DomainError with a message a person can act
  on) and returns the params in canonical form (JSON types only: str for Decimals, ints for ids). The
  proposal keeps what it returned and its digest (``params_digest``).
- ``apply(proposal, approver)`` runs inside the approval's transaction, after every four-eyes check
  (halls' PROPOSAL lock is held: the applier takes its own locks after it). It calls the kind's ordinary
  service with ``actor=approver`` and returns a small JSON dict kept as the proposal's ``result``; a
  DomainError it raises refuses the approval and rolls everything back (the proposal stays proposed).
- ``posted=True`` marks a change shown on a sheet posted on the hall's wall (a prize program's table):
  its approval must carry the digest printed on the sheet (``posted_digest``), equal to the proposal's.
  Any kind accepts an optional ``posted_digest`` and refuses one that differs. The approver may type it
  as printed (groups of four, any case) or scan the sheet's QR code (a URL ending in the digest):
  ``posted_digest_of`` reads both. ``sheet(proposal)`` gives the URL the sheet is printed from.

``params`` never holds personal data: ids, amounts, rates, names of things, digests of files.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.utils.translation import gettext as _

from halls.errors import InvalidInput

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from halls.models import Proposal, Venue

# (venue, target, params as sent) -> params in canonical form (JSON types); raises DomainError.
Validator = Callable[["Venue", str, Mapping[str, Any]], dict[str, Any]]
# (proposal, approver) -> what was done (ids, counts), kept on the proposal; runs in the approval's tx.
Applier = Callable[["Proposal", "User"], dict[str, Any]]
# (proposal) -> the URL of the sheet to post (a posted kind's printable document), shown with the proposal.
SheetURL = Callable[["Proposal"], str]


@dataclass(frozen=True)
class Kind:
    name: str
    label: Any  # a lazy translation: shown to people on the pending page and in the admin
    roles: tuple[str, ...]  # roles of the venue that may propose and approve it (the operator always may)
    validate: Validator
    apply: Applier
    posted: bool = False  # its approval must carry the posted sheet's digest (``posted_digest``)
    # Proposed through POST /api/proposals/ too; False for a change only its own door proposes (a file on
    # the server loaded by a management command, a decision taken at the door).
    api: bool = True
    sheet: SheetURL | None = None  # where a posted kind's sheet is printed from (the pending page links it)


_kinds: dict[str, Kind] = {}


def register_kind(kind: Kind) -> None:
    """Register (or re-register, on a reload) a kind of change behind four eyes."""
    _kinds[kind.name] = kind


def kind_named(name: str) -> Kind | None:
    return _kinds.get(name)


def kinds() -> list[Kind]:
    return sorted(_kinds.values(), key=lambda k: k.name)


def canonical_params(params: Mapping[str, Any]) -> bytes:
    """The params as the digest reads them: JSON, keys sorted, no spaces, UTF-8."""
    return json.dumps(params, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def posted_digest_of(text: str) -> str:
    """A digest as the approver typed or scanned it from the posted sheet, in its stored form: the sheet
    prints it in groups of four ("3F2A 9C10 …", any case, spaces or dashes) and its QR code holds a URL
    ending in it; anything else is kept as typed (lower case), and so differs."""
    value = re.sub(r"[\s\-]", "", str(text or "")).lower()
    found = re.search(r"(?:^|/)([0-9a-f]{64})/?(?:[?#].*)?$", value)
    return found.group(1) if found else value


def params_digest(params: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical params: what a posted sheet prints and an approval compares."""
    return hashlib.sha256(canonical_params(params)).hexdigest()


def param_id(params: Mapping[str, Any], key: str) -> int:
    """``params[key]`` as a positive id, or a refusal naming it (for the kinds' validators)."""
    value = params.get(key)
    try:
        number = int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        number = 0
    if number <= 0 or isinstance(value, bool):
        raise InvalidInput(_("%(key)s: an id is needed.") % {"key": key}, code="bad_params", field=key)
    return number


def target_of(kind: str, pk: int) -> str:
    """What a proposal is about, as its `target` says it: "room:3", "program:5", "game:7"."""
    return f"{kind}:{pk}"


def target_pk(target: str, kind: str) -> int:
    """The id in a target of `kind` ("room:3" → 3), or a refusal naming the shape expected."""
    name, _sep, value = target.partition(":")
    if name != kind or not value.isdigit():
        raise InvalidInput(
            _("The target of this change is %(kind)s:<id>.") % {"kind": kind}, code="bad_target"
        )
    return int(value)
