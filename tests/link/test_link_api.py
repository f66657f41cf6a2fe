"""The central's doors of the link (POST /api/link/messages/, GET /api/link/streams/<stream>/), the venue
credentials behind them (issue, rotate with a grace, revoke), and the central's view of each venue's link.
Run on PostgreSQL and on SQLite (tests/link is in SQLITE_SUITE)."""

from __future__ import annotations

import io
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.db import transaction
from django.test import Client
from django.utils import timezone

from halls.errors import DomainError
from halls.link.kinds import LinkKind
from halls.link.models import InboxMessage, LinkNotice, OutboxMessage, StreamEntry, VenueCredential, VenueLink
from halls.link.services import credentials, notices, outbox, presence, reach, streams, venue_side
from halls.link.services.credentials import Issued
from halls.models import AuditEntry, Network, Venue

pytestmark = pytest.mark.django_db

MESSAGES = "/api/link/messages/"


@pytest.fixture(autouse=True)
def _central(settings: Any) -> None:
    settings.HALL_ROLE = "central"


@pytest.fixture
def issued(venue: Venue) -> Issued:
    return credentials.issue(venue=venue, actor="test")


def _client(issued: Issued | None = None, *, secret: str | None = None) -> Client:
    headers = {}
    if issued is not None:
        headers["Authorization"] = credentials.header(
            issued.key, secret if secret is not None else issued.secret
        )
    return Client(headers=headers)


def _hello(n: int, software: str = "hall 9.9") -> dict[str, Any]:
    return {"sequence": n, "kind": "link.hello", "payload": {"software": software, "started_at": None}}


def _post(client: Client, messages: list[dict[str, Any]], **more: Any) -> Any:
    return client.post(MESSAGES, {"messages": messages, **more}, content_type="application/json")


def _written() -> tuple[int, int, int]:
    return InboxMessage.objects.count(), VenueLink.objects.count(), StreamEntry.objects.count()


# --- credentials ----------------------------------------------------------------------------------------


def test_the_secret_is_shown_once_and_only_its_salted_hash_is_kept(venue: Venue, issued: Issued) -> None:
    row = VenueCredential.objects.get(key=issued.key)
    assert issued.secret not in row.secret_hash and row.secret_hash.startswith("sha256$")
    assert credentials.authenticate(key=issued.key, secret=issued.secret) == venue.pk
    other = credentials.issue(venue=Venue.objects.create(name="Otra", licence_number="X-2"), actor="test")
    assert row.secret_hash != VenueCredential.objects.get(key=other.key).secret_hash  # salted
    assert AuditEntry.objects.filter(venue=venue, action="link.credential_issued").count() == 1
    with pytest.raises(DomainError, match="already has a link credential"):
        credentials.issue(venue=venue, actor="test")


@pytest.mark.parametrize("how", ["wrong secret", "unknown key", "no header", "another scheme"])
def test_a_wrong_credential_is_401_and_writes_nothing(venue: Venue, issued: Issued, how: str) -> None:
    client = {
        "wrong secret": _client(issued, secret="not-the-secret"),
        "unknown key": Client(headers={"Authorization": credentials.header("lk_nobody", issued.secret)}),
        "no header": Client(),
        "another scheme": Client(headers={"Authorization": f"Token {issued.key}:{issued.secret}"}),
    }[how]
    before = _written()
    answer = _post(client, [_hello(1)])
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "bad_credential"
    assert client.get("/api/link/streams/venue.1/").status_code == 401
    assert _written() == before == (0, 0, 0)


def test_a_revoked_credential_is_401_revoked_and_writes_nothing(venue: Venue, issued: Issued) -> None:
    assert credentials.revoke(venue=venue, actor="test") == 1
    answer = _post(_client(issued), [_hello(1)])
    assert (answer.status_code, answer.json()["error"]["code"]) == (401, "revoked_credential")
    assert _written() == (0, 0, 0)
    assert AuditEntry.objects.filter(venue=venue, action="link.credential_revoked").count() == 1


def test_a_rotated_credential_works_through_its_grace_then_is_refused(venue: Venue, issued: Issued) -> None:
    new = credentials.rotate(venue=venue, actor="test", grace=timedelta(minutes=10))
    assert new.key != issued.key
    # Both work during the grace.
    assert _post(_client(issued), [_hello(1)]).status_code == 200
    assert _post(_client(new), [_hello(2)]).status_code == 200
    # The venue is told, on its own stream.
    (notice,) = streams.after(stream=reach.venue_stream(venue.pk), sequence=0)
    assert notice.kind == LinkKind.NOTICE and notice.payload["level"] == "warning"
    # The grace is over: the old one is refused, the new one goes on. (The row is moved by hand, past the
    # service: this process forgets what it verified, as a rotation or revocation makes every process do.)
    VenueCredential.objects.filter(key=issued.key).update(expires_at=timezone.now() - timedelta(seconds=1))
    credentials.forget_verified()
    answer = _post(_client(issued), [_hello(3)])
    assert (answer.status_code, answer.json()["error"]["code"]) == (401, "revoked_credential")
    assert _post(_client(new), [_hello(3)]).status_code == 200
    assert AuditEntry.objects.filter(venue=venue, action="link.credential_rotated").count() == 1


def test_the_operators_command_prints_the_venues_settings(venue: Venue) -> None:
    out = io.StringIO()
    call_command(
        "link_credential", "issue", venue.licence_number, "--central-url", "https://c.example", stdout=out
    )
    lines = dict(line.split("=", 1) for line in out.getvalue().splitlines() if "=" in line)
    assert lines["HALL_CENTRAL_URL"] == "https://c.example"
    assert lines["HALL_LINK_VENUE"] == venue.licence_number
    assert credentials.authenticate(key=lines["HALL_LINK_KEY"], secret=lines["HALL_LINK_SECRET"]) == venue.pk
    call_command(
        "link_credential", "rotate", venue.licence_number, "--grace-seconds", "0", stdout=io.StringIO()
    )
    with pytest.raises(credentials.RevokedCredential):
        credentials.authenticate(key=lines["HALL_LINK_KEY"], secret=lines["HALL_LINK_SECRET"])


# --- messages -------------------------------------------------------------------------------------------


def test_messages_are_applied_in_order_and_a_replay_is_a_duplicate_counted_once(
    venue: Venue, issued: Issued
) -> None:
    client = _client(issued)
    clock = (timezone.now() - timedelta(seconds=3)).isoformat()
    answer = _post(client, [_hello(1), _hello(2, "hall 1.2")], reported=5, clock=clock)
    assert answer.status_code == 200, answer.content
    assert [(a["sequence"], a["status"]) for a in answer.json()["accepted"]] == [
        (1, "applied"),
        (2, "applied"),
    ]
    link = VenueLink.objects.get(venue=venue)
    assert (link.applied_sequence, link.reported_sequence, link.software_version) == (2, 5, "hall 1.2")
    assert link.clock_offset_ms is not None and 2500 < link.clock_offset_ms < 60_000
    # The answer was lost: the venue sends 2 again, with 3.
    again = _post(client, [_hello(2, "replayed"), _hello(3)])
    assert [(a["sequence"], a["status"]) for a in again.json()["accepted"]] == [
        (2, "duplicate"),
        (3, "applied"),
    ]
    assert list(InboxMessage.objects.order_by("sequence").values_list("sequence", flat=True)) == [1, 2, 3]
    assert VenueLink.objects.get(venue=venue).software_version == "hall 9.9"  # the replay changed nothing


def test_an_out_of_order_message_is_409_with_the_one_expected(venue: Venue, issued: Issued) -> None:
    client = _client(issued)
    answer = _post(client, [_hello(1), _hello(2), _hello(4), _hello(5)])
    assert answer.status_code == 409
    error = answer.json()["error"]
    assert error["code"] == "out_of_order"
    assert (error["details"]["expected"], error["details"]["got"]) == (3, 4)
    assert [a["sequence"] for a in error["details"]["accepted"]] == [1, 2]  # applied before it: kept
    assert InboxMessage.objects.count() == 2


def test_an_unknown_kind_is_refused_whole(issued: Issued) -> None:
    answer = _post(_client(issued), [{"sequence": 1, "kind": "link.nonsense", "payload": {}}])
    assert (answer.status_code, answer.json()["error"]["code"]) == (400, "unknown_kind")
    assert InboxMessage.objects.count() == 0


def test_a_venue_installation_serves_no_link_doors(settings: Any, issued: Issued) -> None:
    settings.HALL_ROLE = "venue"
    answer = _post(_client(issued), [_hello(1)])
    assert (answer.status_code, answer.json()["error"]["code"]) == (404, "not_central")


# --- streams --------------------------------------------------------------------------------------------


def test_a_venue_reads_its_own_and_its_networks_streams_only(
    venue: Venue, other_venue: Venue, issued: Issued
) -> None:
    ours = Network.objects.create(name="Red Norte", code="NORTE", jurisdiction=venue.jurisdiction)
    ours.venues.add(venue)
    Network.objects.create(name="Red Sur", code="SUR", jurisdiction=venue.jurisdiction).venues.add(
        other_venue
    )
    with transaction.atomic():
        for n in range(3):
            streams.append(stream="network.NORTE", kind=LinkKind.NOTICE, payload={"text": f"n{n}"})
    client = _client(issued)
    page = client.get("/api/link/streams/network.NORTE/", {"after": 1}).json()
    assert (page["head"], [e["sequence"] for e in page["entries"]]) == (3, [2, 3])
    assert client.get(f"/api/link/streams/venue.{venue.pk}/").status_code == 200
    for stream, status, code in [
        ("network.SUR", 403, "stream_forbidden"),
        (f"venue.{other_venue.pk}", 403, "stream_forbidden"),
        ("network.NOWHERE", 404, "unknown_stream"),
        ("secrets", 404, "unknown_stream"),
    ]:
        answer = client.get(f"/api/link/streams/{stream}/")
        assert (answer.status_code, answer.json()["error"]["code"]) == (status, code), stream
    assert client.get("/api/link/streams/network.NORTE/", {"after": "-1"}).status_code == 400
    assert reach.followed(venue_id=venue.pk) == [f"venue.{venue.pk}", "network.NORTE"]


def test_a_notice_reaches_the_venue_operator_once(venue: Venue) -> None:
    entry = notices.send(venue=venue, text="Corte programado a las 04:00", level="warning", actor="test")
    payload = {"sequence": entry.sequence, "kind": entry.kind, "payload": entry.payload}
    for _ in range(2):  # pushed, then fetched again: applied once
        venue_side.apply_entries(stream=entry.stream, entries=[payload])
    (notice,) = LinkNotice.objects.all()
    assert (notice.text, notice.level) == ("Corte programado a las 04:00", "warning")
    out = io.StringIO()
    call_command("link_notices", stdout=out)
    assert "[warning] Corte programado a las 04:00" in out.getvalue()


def test_an_unknown_kind_from_a_newer_central_is_counted_as_read(venue: Venue) -> None:
    applied = venue_side.apply_entries(
        stream="network.X", entries=[{"sequence": 1, "kind": "future.kind", "payload": {}}]
    )
    assert (applied.position, applied.applied, applied.gap) == (1, 1, False)


# --- the venue's outbox, resent from what the central expects -------------------------------------------


def test_the_outbox_rewinds_to_what_the_central_expects(venue: Venue) -> None:
    for _ in range(5):
        venue_side.say_hello(venue_id=venue.pk)
    outbox.acknowledge(venue_id=venue.pk, up_to=4)
    # A central restored from a backup expects 3: 3 and 4 go again, 1 and 2 stay sent.
    assert outbox.rewind(venue_id=venue.pk, expected=3) == (0, 2)
    assert [m.sequence for m in outbox.pending(venue_id=venue.pk)] == [3, 4, 5]
    # A central that has more than we knew: everything before 6 is sent.
    assert outbox.rewind(venue_id=venue.pk, expected=6) == (3, 0)
    assert outbox.backlog(venue_id=venue.pk) == 0
    assert venue_side.next_batch(venue_id=venue.pk, limit=10) == ([], 5)
    assert OutboxMessage.objects.count() == 5


# --- the network map ------------------------------------------------------------------------------------


def test_the_network_map_shows_each_member_venues_link(
    settings: Any, venue: Venue, other_venue: Venue
) -> None:
    network = Network.objects.create(name="Red Norte", code="NORTE", jurisdiction=venue.jurisdiction)
    third = Venue.objects.create(name="Zeta", licence_number="Z-3")
    network.venues.add(venue, other_venue, third)
    presence.seen(venue_id=venue.pk, reported=9)
    presence.connected(venue_id=other_venue.pk)
    VenueLink.objects.filter(venue=venue).update(applied_sequence=4)
    presence.disconnected(venue_id=other_venue.pk)
    by_venue = {s.venue_id: s for s in presence.network_map()}
    assert (by_venue[venue.pk].state, by_venue[venue.pk].backlog) == ("online", 5)
    assert by_venue[other_venue.pk].state == "offline" and by_venue[other_venue.pk].since is not None
    assert (by_venue[third.pk].state, by_venue[third.pk].backlog) == ("never", 0)
    assert by_venue[venue.pk].networks == ("NORTE",)
    # Silent for longer than the window: offline since its last contact.
    settings.HALL_LINK_OFFLINE_SECONDS = 0
    (state,) = [s for s in presence.network_map() if s.venue_id == venue.pk]
    assert (state.state, state.since) == ("offline", VenueLink.objects.get(venue=venue).last_seen_at)


def test_a_batch_is_applied_in_as_few_transactions_as_the_lock_order_allows(
    venue: Venue, issued: Issued, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Consecutive messages go on in one transaction while they take the locks it holds or higher ones;
    a message needing a lower one starts the next transaction; each applied once, in order."""
    from halls.link import registry
    from halls.link.services import inbox
    from halls.locks import Rank, take

    def handler(message: registry.VenueMessage) -> dict[str, Any]:
        for rank, key in message.payload["locks"]:
            take(Rank[rank], key)
        return {"n": message.sequence}

    monkeypatch.setitem(registry._venue_handlers, LinkKind.HELLO, handler)
    groups: list[list[int]] = []
    real = inbox._accept_group

    def spy(venue_id: int, messages: list[dict[str, Any]], contact: Any) -> Any:
        done, refusal = real(venue_id, messages, contact)
        groups.append([a.sequence for a in done])
        return done, refusal

    monkeypatch.setattr(inbox, "_accept_group", spy)
    plan = [
        [("GAME", 1), ("AUDIT_HEAD", 1)],
        [("GAME", 1), ("AUDIT_HEAD", 1)],  # what the first holds: the same transaction
        [("GAME", 1), ("STREAM", "s")],  # a higher rank: the same transaction
        [("GAME", 2), ("AUDIT_HEAD", 1)],  # another game: the next transaction
        [("ROOM", 3)],  # a lower rank: the next one again
        [("ROOM", 3), ("GAME", 2)],
    ]
    messages = [
        {"sequence": n, "kind": "link.hello", "payload": {"locks": locks}} for n, locks in enumerate(plan, 1)
    ]
    answer = _post(_client(issued), messages, reported=6)
    assert answer.status_code == 200, answer.content
    assert [(a["sequence"], a["status"], a["answer"]) for a in answer.json()["accepted"]] == [
        (n, "applied", {"n": n}) for n in range(1, 7)
    ]
    assert groups == [[1, 2, 3], [4], [5, 6]]
    assert list(InboxMessage.objects.order_by("sequence").values_list("sequence", flat=True)) == [
        1,
        2,
        3,
        4,
        5,
        6,
    ]
    link = VenueLink.objects.get(venue=venue)
    assert (link.applied_sequence, link.reported_sequence) == (6, 6)
    # Replayed with the next one: the duplicates answer as first, the next one is applied.
    again = _post(
        _client(issued), [*messages[4:], {"sequence": 7, "kind": "link.hello", "payload": {"locks": []}}]
    )
    assert [(a["sequence"], a["status"]) for a in again.json()["accepted"]] == [
        (5, "duplicate"),
        (6, "duplicate"),
        (7, "applied"),
    ]
    assert InboxMessage.objects.count() == 7
