"""The regulator node's intake (halls.regulator.services.intake, POST /api/regulator/feed/): each message
accepted once and in order; every bad input of issue 29 refused with a clear message, recorded as a
FeedRefusal, alarmed, and nothing of it applied; duplicates idempotent. PostgreSQL and SQLite."""

from __future__ import annotations

import contextlib
import secrets
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from halls.errors import DomainError
from halls.regulator.models import Alarm, AlarmKind, FeedMessage, FeedRefusal, Installation
from halls.regulator.services import intake, silence
from tests.feed.feed_support import AT, OTHER, message, register, tampered

pytestmark = pytest.mark.django_db
FEED = "/api/regulator/feed/"


@pytest.fixture(autouse=True)
def _node(settings: Any) -> None:
    settings.HALL_ROLE = "regulator"


@pytest.fixture
def node() -> Installation:
    return register("00112233aabbccdd")


def post(messages: Any, *, language: str = "en") -> Any:
    return Client().post(
        FEED, {"messages": messages}, content_type="application/json", headers={"Accept-Language": language}
    )


def held(installation: Installation) -> list[int]:
    return list(
        FeedMessage.objects.filter(installation=installation)
        .order_by("sequence")
        .values_list("sequence", flat=True)
    )


def refusals() -> list[tuple[str, int | None]]:
    return list(FeedRefusal.objects.order_by("pk").values_list("reason", "sequence"))


def open_alarms(kind: AlarmKind) -> list[Alarm]:
    return list(Alarm.objects.filter(kind=kind, cleared_at__isnull=True))


def test_messages_are_accepted_once_in_order_and_a_resend_is_a_duplicate(node: Installation) -> None:
    first = post([message(node.uid, n) for n in (1, 2, 3)])
    assert first.status_code == 200 and first.json() == {"accepted": 3}
    again = post([message(node.uid, n) for n in (2, 3, 4)])  # an acknowledgement lost: sent again
    assert again.status_code == 200 and again.json() == {"accepted": 4}
    assert held(node) == [1, 2, 3, 4]
    node.refresh_from_db()
    assert node.accepted_sequence == 4 and node.last_message_at is not None
    stored = FeedMessage.objects.get(installation=node, sequence=2)
    assert stored.kind == "heartbeat" and stored.payload == {"last_sequence": 1}
    assert stored.signature == message(node.uid, 2)["signature"]
    only_duplicates = post([message(node.uid, 4)])
    assert only_duplicates.json() == {"accepted": 4}
    assert FeedMessage.objects.count() == 4 and refusals() == [] and not Alarm.objects.exists()


@pytest.mark.parametrize("how", ["payload changed", "another key", "not hex"])
def test_a_bad_signature_is_refused_recorded_and_alarmed_and_the_ones_before_it_stay(
    node: Installation, how: str
) -> None:
    good = message(node.uid, 2)
    bad = {
        "payload changed": tampered(good, last_sequence=7),
        "another key": message(node.uid, 2, key=OTHER),
        "not hex": {**good, "signature": "zz" * 64},
    }[how]
    answer = post([message(node.uid, 1), bad, message(node.uid, 3)])
    assert answer.status_code == 403, answer.content
    error = answer.json()["error"]
    assert error["code"] == "bad_signature" and error["details"] == {"expected": 2, "accepted": 1}
    assert "signature" in error["message"]
    assert held(node) == [1]  # the one before stays; the bad one and those after it are not applied
    assert refusals() == [("bad_signature", 2)]
    (alarm,) = open_alarms(AlarmKind.BAD_SIGNATURE)
    assert alarm.installation == node and alarm.detail["sequence"] == 2
    post([bad])  # the same bad message again: one more refusal row, the same open alarm
    assert refusals() == [("bad_signature", 2), ("bad_signature", 2)]
    assert len(open_alarms(AlarmKind.BAD_SIGNATURE)) == 1
    assert post([good]).json() == {"accepted": 2}  # the genuine one goes in


def test_an_unknown_installation_is_refused_and_alarmed_and_nothing_applied(node: Installation) -> None:
    stranger = secrets.token_hex(8)
    answer = post([message(stranger, 1)])
    assert answer.status_code == 404
    assert answer.json()["error"]["code"] == "unknown_installation"
    assert stranger in answer.json()["error"]["message"]
    assert not FeedMessage.objects.exists()
    refusal = FeedRefusal.objects.get()
    assert (refusal.reason, refusal.claimed_installation, refusal.installation) == (
        "unknown_installation",
        stranger,
        None,
    )
    (alarm,) = open_alarms(AlarmKind.UNKNOWN)
    assert alarm.installation is None and alarm.detail["claimed"] == stranger


def test_a_replayed_message_with_another_body_is_refused_and_alarmed(node: Installation) -> None:
    assert post([message(node.uid, n) for n in (1, 2)]).json() == {"accepted": 2}
    # Signed with the installation's own key, at a sequence already accepted, with another content.
    replay = message(node.uid, 2, payload={"last_sequence": 41})
    answer = post([replay])
    assert answer.status_code == 409
    assert answer.json()["error"]["code"] == "replayed"
    assert answer.json()["error"]["details"] == {"expected": 3, "accepted": 2}
    assert FeedMessage.objects.get(installation=node, sequence=2).payload == {"last_sequence": 1}
    assert refusals() == [("replayed", 2)]
    (alarm,) = open_alarms(AlarmKind.REPLAYED)
    assert alarm.installation == node and alarm.detail["sequence"] == 2


def test_a_message_past_the_next_is_409_out_of_order_with_the_one_expected_and_a_gap_alarm(
    node: Installation,
) -> None:
    assert post([message(node.uid, 1)]).status_code == 200
    answer = post([message(node.uid, 3), message(node.uid, 4)])
    assert answer.status_code == 409
    error = answer.json()["error"]
    assert error["code"] == "out_of_order" and error["details"] == {"expected": 2, "accepted": 1}
    assert held(node) == [1] and refusals() == [("out_of_order", 3)]
    (alarm,) = open_alarms(AlarmKind.GAP)
    assert alarm.detail["expected"] == 2
    assert post([message(node.uid, n) for n in (2, 3, 4)]).json() == {"accepted": 4}


@pytest.mark.parametrize(
    ("kind", "payload", "at", "where"),
    [
        ("heartbeat", {"last_sequence": "nine"}, None, "$.last_sequence"),
        ("heartbeat", {"last_sequence": 0, "player": "x"}, None, "$"),
        ("no.such.kind", {}, None, "$.kind"),
        ("heartbeat", {"last_sequence": 0}, "2026-12-06T22:00:00", "$.at"),
    ],
)
def test_a_message_outside_its_schema_is_refused_and_alarmed(
    node: Installation, kind: str, payload: dict[str, Any], at: str | None, where: str
) -> None:
    bad = message(node.uid, 1, kind=kind, payload=payload, at=at or AT)
    answer = post([bad])
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == "schema" and error["details"] == {"expected": 1, "accepted": 0}
    assert where in error["message"]
    assert not FeedMessage.objects.exists() and refusals() == [("schema", 1)]
    (alarm,) = open_alarms(AlarmKind.SCHEMA)
    assert alarm.detail["where"].startswith(where)


@pytest.mark.parametrize(
    ("batch", "code"),
    [
        ([], "bad_batch"),
        ("messages", "bad_batch"),
        ([["not", "an", "object"]], "shape"),
        ([{"format": "hall-feed/v0"}], "format"),
    ],
)
def test_a_batch_that_is_no_feed_is_refused_and_recorded(node: Installation, batch: Any, code: str) -> None:
    answer = post(batch)
    assert answer.status_code == 400 and answer.json()["error"]["code"] == code
    assert not FeedMessage.objects.exists() and refusals() == [(code, None)]


def test_one_batch_holds_one_installations_messages(node: Installation) -> None:
    other = register()
    answer = post([message(node.uid, 1), message(other.uid, 1)])
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "mixed_batch"
    assert held(node) == [1] and held(other) == []


def test_the_refusal_is_said_in_spanish(node: Installation) -> None:
    answer = post([message(node.uid, 5)], language="es")
    assert answer.status_code == 409
    assert "espera" in answer.json()["error"]["message"], answer.json()


def test_a_venue_or_a_central_serves_no_node(settings: Any, node: Installation) -> None:
    for role in ("venue", "central"):
        settings.HALL_ROLE = role
        answer = post([message(node.uid, 1)])
        assert answer.status_code == 404 and answer.json()["error"]["code"] == "not_regulator"
    assert not FeedMessage.objects.exists() and not FeedRefusal.objects.exists()


def test_a_silent_installation_raises_one_alarm_cleared_when_it_is_heard_again(settings: Any) -> None:
    settings.HALL_REGULATOR_SILENCE_SECONDS = 120
    quiet = register(silence_seconds=30)
    default = register()
    now = timezone.now()
    assert silence.sweep(now=now + timedelta(seconds=20)) == 0
    assert silence.sweep(now=now + timedelta(seconds=60)) == 1  # past its own window, not the node's
    assert silence.sweep(now=now + timedelta(seconds=61)) == 0  # one open alarm, not one per sweep
    (alarm,) = open_alarms(AlarmKind.SILENT)
    assert alarm.installation == quiet and alarm.detail["window_seconds"] == 30
    assert silence.sweep(now=now + timedelta(seconds=200)) == 1  # the node's window for the other
    assert {a.installation for a in open_alarms(AlarmKind.SILENT)} == {quiet, default}
    assert post([message(quiet.uid, 1)]).status_code == 200
    alarm.refresh_from_db()
    assert alarm.cleared_at is not None and alarm.cleared_by == "feed"
    assert [a.installation for a in open_alarms(AlarmKind.SILENT)] == [default]


def test_the_silence_task_runs_on_the_node_only(settings: Any) -> None:
    from halls.regulator import tasks

    installation = register(silence_seconds=1)
    Installation.objects.filter(pk=installation.pk).update(
        registered_at=timezone.now() - timedelta(seconds=5)
    )
    settings.HALL_ROLE = "venue"
    assert tasks.watch_silence() == 0
    settings.HALL_ROLE = "regulator"
    assert tasks.watch_silence() == 1


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    n=st.integers(min_value=1, max_value=8),
    batches=st.lists(
        st.lists(st.integers(min_value=1, max_value=10), min_size=1, max_size=5), min_size=1, max_size=8
    ),
)
def test_whatever_arrives_the_node_holds_each_message_once_in_order(
    node: Installation, n: int, batches: list[list[int]]
) -> None:
    """Resends, reorders, sequences never sent: the node holds a prefix 1..k, each once; after the
    sender's in-order resend, all n; and refusals were only ever "out of order"."""
    fresh = register()
    refused_before = FeedRefusal.objects.exclude(reason="out_of_order").count()
    for batch in batches:
        with contextlib.suppress(DomainError):
            intake.receive(messages=[message(fresh.uid, s) for s in batch])
        assert held(fresh) == list(range(1, len(held(fresh)) + 1))
    intake.receive(messages=[message(fresh.uid, s) for s in range(1, n + 1)])
    top = len(held(fresh))
    assert held(fresh) == list(range(1, top + 1)) and top >= n
    assert FeedRefusal.objects.exclude(reason="out_of_order").count() == refused_before


@pytest.mark.django_db(transaction=True)
def test_each_stored_message_is_checked_for_derived_alarms_and_the_run_told_to_the_portal_once_committed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from django.db import transaction as db_transaction

    from halls.regulator.services import derived, live

    node = register("00112233aabbccee")
    checked: list[tuple[int, bool]] = []
    told: list[list[int]] = []
    check = derived.check

    def checking(message: Any, **kwargs: Any) -> list[Any]:
        checked.append((message.sequence, db_transaction.get_connection().in_atomic_block))
        return check(message, **kwargs)

    monkeypatch.setattr(derived, "check", checking)
    monkeypatch.setattr(live, "published", lambda run: told.append([m.sequence for m in run]))
    assert post([message(node.uid, n) for n in (1, 2)]).json() == {"accepted": 2}
    assert checked == [(1, True), (2, True)] and told == [[1, 2]]  # one event for the batch's run
    post([message(node.uid, n) for n in (2, 3)] + [message(node.uid, 9)])  # a duplicate, one new, a gap
    assert checked[2:] == [(3, True)] and told[1:] == [[3]]
