"""The portal's "verify now": each installation's anchors as received, against its registered key."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from halls.regulator.models import Alarm, AlarmKind
from halls.regulator.services.verify import verify, verify_now
from tests.portal.support import Sender, accept, anchor_line, anchor_payload, register

pytestmark = pytest.mark.django_db


@pytest.fixture
def venue() -> Sender:
    return register("Bingo Melilla Centro", uid="a1" * 8, licence="ML-B-0001")


def send_good_anchors(sender: Sender) -> None:
    accept(
        sender,
        "anchor",
        anchor_payload(
            sender, [anchor_line(sender, seq=10), anchor_line(sender, kind="pool", chain=2, seq=3)]
        ),
    )
    accept(sender, "heartbeat", {"last_sequence": 1})
    accept(sender, "anchor", anchor_payload(sender, [anchor_line(sender, seq=25)]))


def test_anchors_signed_by_the_registered_key_verify(venue: Sender) -> None:
    send_good_anchors(venue)
    (verdict,) = verify_now(actor="inspectora")
    assert verdict.ok, [p.text for p in verdict.problems]
    assert (verdict.messages, verdict.lines) == (2, 3)
    assert [(h.chain, h.length) for h in verdict.heads] == [("venue-1", 25)]
    assert not Alarm.objects.exists()


def test_a_tampered_line_fails_naming_its_message_and_line_and_raises_one_alarm(venue: Sender) -> None:
    send_good_anchors(venue)
    tampered = anchor_line(venue, seq=30)
    tampered["hash"] = "0" * 64  # edited after it was signed
    accept(
        venue, "anchor", anchor_payload(venue, [anchor_line(venue, kind="pool", chain=2, seq=4), tampered])
    )
    (verdict,) = verify_now(actor="inspectora")
    assert not verdict.ok
    assert [(p.code, p.message, p.line) for p in verdict.problems] == [("signature", 4, 2)]
    assert verdict.problems[0].text == "Message 4, line 2: Its signature does not match: forged or edited."
    alarm = Alarm.objects.get()
    assert alarm.kind == AlarmKind.ANCHOR and alarm.installation_id == venue.installation.pk
    assert alarm.detail["problems"] == [{"code": "signature", "message": 4, "line": 2, "values": {}}]
    assert alarm.detail["asked_by"] == "inspectora"
    verify_now(actor="inspectora")  # the same problems, the alarm still open: not raised twice
    assert Alarm.objects.count() == 1


def test_anchors_of_another_key_fail_on_every_line(venue: Sender) -> None:
    impostor = Sender(venue.installation, Ed25519PrivateKey.generate())
    accept(
        impostor,
        "anchor",
        anchor_payload(impostor, [anchor_line(impostor, seq=1), anchor_line(impostor, seq=2)]),
    )
    verdict = verify(venue.installation)
    assert not verdict.ok
    assert [(p.code, p.message, p.line) for p in verdict.problems] == [
        ("message_key", 1, None),
        ("other_key", 1, 1),
        ("other_key", 1, 2),
    ]
    assert verdict.problems[1].text.startswith("Message 1, line 1: It is signed by another key ('ed25519:")


def test_a_chain_cut_short_or_rewritten_since_its_anchor_fails(venue: Sender) -> None:
    accept(venue, "anchor", anchor_payload(venue, [anchor_line(venue, seq=10)]))
    accept(venue, "anchor", anchor_payload(venue, [anchor_line(venue, seq=10, hash_="ee" * 32)]))
    accept(venue, "anchor", anchor_payload(venue, [anchor_line(venue, seq=7)]))
    verdict = verify(venue.installation)
    assert [(p.code, p.message, p.line) for p in verdict.problems] == [
        ("rewritten", 2, 1),
        ("cut_short", 3, 1),
    ]
    assert verdict.problems[1].text == (
        "Message 3, line 1: venue 1 was cut short: anchored at 10 links in message 2, now at 7."
    )


def test_a_reported_head_that_is_not_its_lines_hash_fails(venue: Sender) -> None:
    payload = anchor_payload(venue, [anchor_line(venue, seq=10)])
    payload["chains"][0]["head"] = "ff" * 32
    accept(venue, "anchor", payload)
    assert [p.code for p in verify(venue.installation).problems] == ["head"]


def test_another_installations_line_fails_and_nothing_received_is_said_without_an_alarm(
    venue: Sender,
) -> None:
    quiet = register("Bingo Ceuta", uid="b2" * 8, licence="CE-B-0001")
    line = anchor_line(quiet, seq=1)  # quiet's own line, sent as venue's
    accept(venue, "anchor", {**anchor_payload(venue, []), "lines": [line]})
    verdicts = {v.installation.uid: v for v in verify_now(actor="inspectora")}
    assert [p.code for p in verdicts[venue.uid].problems] == ["other_installation"]
    assert [p.code for p in verdicts[quiet.uid].problems] == ["no_anchor"]
    assert list(Alarm.objects.values_list("installation__uid", flat=True)) == [venue.uid]
