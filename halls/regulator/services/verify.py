"""The portal's "verify now": each installation's anchors, as the node received them (anchor messages),
checked against the public key the installation was registered with.

For every anchor message of an installation, in its order:
- the message names the registered key (its key_id is the key's id);
- every line is an anchor of that installation signed by that key (halls.anchor_lines.check_line: the pure
  check scripts/verify_anchors.py makes, so an edited or forged line, another key's or another
  installation's, is named by its message's sequence and its place in the message);
- no chain goes back: a chain's anchored length never shrinks, and the same length keeps the same hash,
  across every message received (a chain cut short or rewritten since it was anchored);
- the heads the message reports ("chains") agree with its lines (a head anchored at a chain's length).

An installation whose anchors do not verify raises an alarm (AlarmKind.ANCHOR, once while its problems are
the same and it is not cleared).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy

from halls import anchor_lines
from halls.feed.kinds import FeedKind
from halls.regulator.models import Alarm, AlarmKind, FeedMessage, Installation

# A head's chain as a message reports it: "venue-3", "venue 3", "venue:3" (the anchors' kind and id).
_CHAIN = re.compile(r"^(?P<kind>[a-z_]+)[-: ](?P<id>\d+)$")
# Problems kept in an alarm's detail (the page lists them all).
_IN_ALARM = 10

# What a problem says, by its code (the alarm keeps the code and values: the page says it in its language).
SAID = {
    "key_unreadable": gettext_lazy("The registered public key cannot be read (%(error)s)."),
    "no_anchor": gettext_lazy("No anchor received yet."),
    "message_key": gettext_lazy("It names another key (%(given)s; the registered one is %(registered)s)."),
    "not_a_line": gettext_lazy("It is not an anchor line."),
    "legacy": gettext_lazy(
        "It is signed with %(alg)s, before the Ed25519 key: the public key cannot check it."
    ),
    "other_installation": gettext_lazy("It is another installation's anchor (%(inst)s)."),
    "other_key": gettext_lazy("It is signed by another key (%(kid)s)."),
    "signature": gettext_lazy("Its signature does not match: forged or edited."),
    "incomplete": gettext_lazy("It lacks its chain, length or hash."),
    "cut_short": gettext_lazy(
        "%(chain)s was cut short: anchored at %(before)s links in message %(earlier)s, now at %(seq)s."
    ),
    "rewritten": gettext_lazy(
        "%(chain)s was rewritten: another hash at %(seq)s links than in message %(earlier)s."
    ),
    "head": gettext_lazy("The head of %(chain)s is not the hash its line anchors at %(length)s links."),
}


@dataclass(frozen=True)
class Problem:
    """What does not verify: where (the message's sequence, the line's place in it) and what (a code)."""

    code: str
    message: int | None = None
    line: int | None = None
    values: dict[str, str] = field(default_factory=dict)

    def as_detail(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "line": self.line, "values": self.values}

    @classmethod
    def from_detail(cls, detail: dict[str, Any]) -> Problem:
        return cls(
            str(detail.get("code", "")),
            detail.get("message"),
            detail.get("line"),
            dict(detail.get("values") or {}),
        )

    @property
    def text(self) -> str:
        said = SAID.get(self.code)
        what = str(said) % self.values if said is not None else self.code
        if self.message is not None and self.line is not None:
            return gettext("Message %(message)s, line %(line)s: %(what)s") % {
                "message": self.message,
                "line": self.line,
                "what": what,
            }
        if self.message is not None:
            return gettext("Message %(message)s: %(what)s") % {"message": self.message, "what": what}
        return what


def _line_problem(line: Any, key: Any, installation: str) -> tuple[str, dict[str, str]] | None:
    """Why `line` is not an anchor of `installation` signed by `key` (halls.anchor_lines.check_line), as a
    code and its values, or None."""
    problem = anchor_lines.check_line(line, key, installation)
    if not problem:
        return None
    if not isinstance(line, dict):
        return "not_a_line", {}
    if line.get("alg") != anchor_lines.ALG:
        return "legacy", {"alg": repr(line.get("alg"))}
    if line.get("inst") != installation:
        return "other_installation", {"inst": repr(line.get("inst"))}
    if line.get("kid") != anchor_lines.key_id(key):
        return "other_key", {"kid": repr(line.get("kid"))}
    if "signature" in problem:
        return "signature", {}
    return "incomplete", {}


@dataclass
class Head:
    chain: str
    head: str
    length: int


@dataclass
class Verdict:
    installation: Installation
    messages: int = 0  # anchor messages checked
    lines: int = 0  # lines verified
    problems: list[Problem] = field(default_factory=list)
    heads: list[Head] = field(default_factory=list)  # the latest message's chain heads
    at: Any = None  # the latest anchor's time

    @property
    def ok(self) -> bool:
        """Verified: at least one line, and nothing wrong."""
        return self.lines > 0 and not self.problems


def _line(raw: Any) -> Any:
    return anchor_lines.parse_line(raw) if isinstance(raw, str) else raw


def verify(installation: Installation) -> Verdict:
    """The installation's anchors as received, checked (reads only)."""
    verdict = Verdict(installation)
    try:
        key = anchor_lines.public_key(installation.public_key)
    except ValueError as exc:
        verdict.problems.append(Problem("key_unreadable", values={"error": str(exc)}))
        return verdict
    kid = anchor_lines.key_id(key)
    anchored: dict[tuple[str, int], tuple[int, str, int]] = {}  # chain -> (seq, hash, message sequence)
    messages = FeedMessage.objects.filter(installation=installation, kind=FeedKind.ANCHOR).order_by(
        "sequence"
    )
    for message in messages.only("sequence", "payload", "at").iterator():
        verdict.messages += 1
        sequence = int(message.sequence)
        payload = message.payload if isinstance(message.payload, dict) else {}
        if payload.get("key_id") != kid:
            given = {"given": repr(payload.get("key_id")), "registered": repr(kid)}
            verdict.problems.append(Problem("message_key", sequence, values=given))
        lines_here: dict[tuple[str, int], tuple[int, str]] = {}
        for number, raw in enumerate(payload.get("lines", []), start=1):
            line = _line(raw)
            found = _line_problem(line, key, installation.uid)
            if found is not None:
                verdict.problems.append(Problem(found[0], sequence, number, found[1]))
                continue
            verdict.lines += 1
            chain, seq, hash_ = (str(line["kind"]), int(line["id"])), int(line["seq"]), str(line["hash"])
            before = anchored.get(chain)
            if before is not None and (seq < before[0] or (seq == before[0] and hash_ != before[1])):
                values = {
                    "chain": f"{chain[0]} {chain[1]}", "before": str(before[0]), "earlier": str(before[2]),
                    "seq": str(seq),
                }  # fmt: skip
                code = "cut_short" if seq < before[0] else "rewritten"
                verdict.problems.append(Problem(code, sequence, number, values))
            if before is None or seq >= before[0]:
                anchored[chain] = (seq, hash_, sequence)
            lines_here[chain] = (seq, hash_)
        heads = _heads(payload.get("chains", []))
        for head in heads:
            named = _CHAIN.match(head.chain)
            here = lines_here.get((named["kind"], int(named["id"]))) if named else None
            if here is not None and here[0] == head.length and here[1] != head.head:
                values = {"chain": head.chain, "length": str(head.length)}
                verdict.problems.append(Problem("head", sequence, values=values))
        verdict.heads, verdict.at = heads or verdict.heads, message.at
    if verdict.messages == 0:
        verdict.problems.append(Problem("no_anchor"))
    return verdict


def _heads(chains: Iterable[Any]) -> list[Head]:
    heads = []
    for entry in chains:
        if isinstance(entry, dict):
            length = entry.get("length")
            heads.append(Head(str(entry.get("chain", "")), str(entry.get("head", "")), int(length or 0)))
    return heads


def verify_now(*, installation_id: int | None = None, actor: str) -> list[Verdict]:
    """Verify every installation's anchors (or one's), raising an alarm for each that does not verify
    (`actor`: who asked, kept in the alarm's detail). An installation that never sent an anchor is
    reported, not alarmed."""
    installations = Installation.objects.order_by("name", "pk")
    if installation_id is not None:
        installations = installations.filter(pk=installation_id)
    verdicts = [verify(installation) for installation in installations]
    with transaction.atomic():
        for verdict in verdicts:
            if verdict.ok or verdict.messages == 0:
                continue
            problems = [problem.as_detail() for problem in verdict.problems[:_IN_ALARM]]
            already = Alarm.objects.filter(
                installation=verdict.installation, kind=AlarmKind.ANCHOR, cleared_at__isnull=True
            )
            if any(alarm.detail.get("problems") == problems for alarm in already):
                continue
            Alarm.objects.create(
                installation=verdict.installation,
                kind=AlarmKind.ANCHOR,
                detail={"problems": problems, "count": len(verdict.problems), "asked_by": actor},
                raised_at=timezone.now(),
            )
    return verdicts
