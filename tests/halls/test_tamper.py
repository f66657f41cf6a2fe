"""Tamper evidence that holds against someone with the database owner's rights (issue 10).

Each tamper is done as such an attacker would: the append-only triggers switched off (``as_db_owner``),
then raw edits, with every hash the attacker can recompute recomputed (plain SHA-256: the audit key is not
in the database). ``verify_audit`` must report it and name the first bad link; an intact chain must verify
as intact while games are played.
"""

# ruff: noqa: F811

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, HTTPServer
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from rest_framework.test import APIClient

from bingo.traditional.models import DrawSource
from bingo.traditional.services import draw, games, sales
from halls import tasks as halls_tasks
from halls.models import AuditChainHead, AuditEntry, Venue
from halls.services import anchors, audit
from halls.services.verify import AuditReport, verify_audit
from jackpots.models import Contribution, LedgerSeal, Pool
from jackpots.services import contributions, seals
from jackpots.sources import PoolSource
from tests.jackpots.pool_fixtures import (  # noqa: F401 - fixtures
    an10_venue,
    carousel,
    key,
    pool_operator,
)
from tests.ports import free_port
from tests.tampering import as_db_owner

pytestmark = pytest.mark.django_db

KEY = "test-audit-key-not-in-the-database"


@pytest.fixture(autouse=True)
def audit_key(settings: Any) -> None:
    settings.HALL_AUDIT_KEY = KEY


def write_chain(venue: Venue, n: int) -> list[AuditEntry]:
    made = []
    for i in range(n):
        with transaction.atomic():
            made.append(
                audit.record(venue_id=venue.pk, actor="t", action="test.money", obj=venue, data={"i": i})
            )
    return made


def entries(venue: Venue) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(venue_id=venue.pk).order_by("pk"))


def plain_sha(prev: str, entry: AuditEntry, *, as_legacy: bool = False) -> str:
    """What an attacker without the key can compute: the old plain SHA-256 of the canonical fields."""
    fields = audit._fields(entry)
    if as_legacy:
        fields.pop("alg", None)
    canonical = json.dumps({"prev": prev, **fields}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def recompute_from(venue: Venue, start: int, *, as_legacy: bool = False) -> None:
    """Rewrite every hash from the ``start``-th entry (1-based) on, and the head, as an attacker can."""
    chain = entries(venue)
    prev = chain[start - 2].hash if start > 1 else audit.GENESIS
    with as_db_owner(AuditEntry, AuditChainHead):
        for entry in chain[start - 1 :]:
            if as_legacy:
                entry.alg = "sha256"
            entry.prev_hash, entry.hash = prev, plain_sha(prev, entry, as_legacy=as_legacy)
            AuditEntry.objects.filter(pk=entry.pk).update(
                prev_hash=entry.prev_hash, hash="x" + entry.hash[1:], alg=entry.alg
            )  # a placeholder first: the hashes are unique
            prev = entry.hash
        for entry in chain[start - 1 :]:
            AuditEntry.objects.filter(pk=entry.pk).update(hash=entry.hash)
        AuditChainHead.objects.filter(venue_id=venue.pk).update(last_hash=prev, alg=chain[-1].alg)


def bad_chain(report: Any, kind: str, chain_id: int) -> Any:
    found = [c for c in report.chains if (c.kind, c.id) == (kind, chain_id)]
    assert found, report
    return found[0]


# --- the database refuses the edits ------------------------------------------------------------------


def test_the_database_refuses_to_update_or_delete_audit_and_ledger_rows(venue: Venue, carousel: Pool) -> None:
    write_chain(venue, 2)
    contributions.contribute(
        pool=carousel,
        source=PoolSource.of("table", 1).at("seat", 1),
        bet=Decimal("1"),
        idempotency_key=key(),
        actor="t",
    )
    seals.seal(carousel)
    attempts: list[Callable[[], object]] = [
        lambda: AuditEntry.objects.filter(venue_id=venue.pk).update(action="x"),
        lambda: AuditEntry.objects.filter(venue_id=venue.pk).delete(),
        lambda: Contribution.objects.filter(pool=carousel).update(to_meter=Decimal(0)),
        lambda: Contribution.objects.filter(pool=carousel).delete(),
        lambda: LedgerSeal.objects.filter(pool=carousel).update(digest="0" * 64),
        lambda: AuditChainHead.objects.filter(venue_id=venue.pk).update(length=1),  # rewind
        lambda: AuditChainHead.objects.filter(venue_id=venue.pk).delete(),
    ]
    for attempt in attempts:
        with pytest.raises(DatabaseError, match="Cannot"), transaction.atomic():
            attempt()
    assert verify_audit(venue_ids=[venue.pk]).ok


def test_an_unsealed_contribution_cannot_be_changed_and_then_sealed(
    carousel: Pool, an10_venue: Venue
) -> None:
    contributions.contribute(
        pool=carousel,
        source=PoolSource.of("table", 1).at("seat", 1),
        bet=Decimal("2"),
        idempotency_key=key(),
        actor="t",
    )
    row = Contribution.objects.get(pool=carousel)
    with pytest.raises(DatabaseError), transaction.atomic():
        Contribution.objects.filter(pk=row.pk).update(to_meter=Decimal("999"))
    assert seals.seal(carousel) is not None
    assert Contribution.objects.get(pk=row.pk).to_meter == row.to_meter  # the seal covers the genuine row
    assert verify_audit(venue_ids=[an10_venue.pk]).ok


def test_an_owner_who_switches_the_triggers_off_is_reported(carousel: Pool, an10_venue: Venue) -> None:
    """The owner may switch the append-only trigger off to edit an unsealed row before the seal: the
    verification reports the switched-off trigger (and a missing one) while it stays off."""
    contributions.contribute(
        pool=carousel,
        source=PoolSource.of("table", 1).at("seat", 1),
        bet=Decimal("2"),
        idempotency_key=key(),
        actor="t",
    )
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute('ALTER TABLE "jackpots_contribution" DISABLE TRIGGER USER')
    Contribution.objects.filter(pool=carousel).update(to_meter=Decimal("999"))
    seals.seal(carousel)
    report = verify_audit(venue_ids=[an10_venue.pk])
    assert not report.ok
    bad = bad_chain(report, "triggers", 0)
    assert "jackpots_contribution" in bad.reason


# --- edit and recompute ---------------------------------------------------------------------------------


def test_an_edited_entry_with_every_later_hash_recomputed_is_named(venue: Venue) -> None:
    write_chain(venue, 6)
    target = entries(venue)[2]  # the 3rd entry of the chain
    with as_db_owner(AuditEntry):
        AuditEntry.objects.filter(pk=target.pk).update(data={"i": 999})
    recompute_from(venue, 3)

    report = verify_audit(venue_ids=[venue.pk])
    chain = bad_chain(report, "venue", venue.pk)
    assert not report.ok and not chain.ok
    assert (chain.first_bad_seq, chain.first_bad_id) == (3, target.pk)
    assert "edited" in chain.reason


def test_a_chain_rewritten_as_unkeyed_is_caught_by_its_anchor(venue: Venue) -> None:
    write_chain(venue, 5)
    assert len(anchors.write()) == 1
    with as_db_owner(AuditEntry):
        AuditEntry.objects.filter(pk=entries(venue)[1].pk).update(data={"i": 999})
    recompute_from(venue, 1, as_legacy=True)  # everything plain SHA-256, as if from before the key

    chain = bad_chain(verify_audit(venue_ids=[venue.pk]), "venue", venue.pk)
    assert not chain.ok and chain.first_bad_seq == 5 and "anchored" in chain.reason


def test_a_key_change_is_recorded_and_old_entries_still_verify(venue: Venue, settings: Any) -> None:
    write_chain(venue, 2)
    settings.HALL_AUDIT_OLD_KEYS = [KEY]
    settings.HALL_AUDIT_KEY = "the-next-key"
    write_chain(venue, 2)
    chain = entries(venue)
    assert [e.action for e in chain] == ["test.money"] * 2 + [audit.KEY_CHANGED] + ["test.money"] * 2
    assert chain[2].data["length"] == 2 and chain[2].alg != chain[1].alg
    assert verify_audit(venue_ids=[venue.pk]).ok
    settings.HALL_AUDIT_OLD_KEYS = []  # without the old key the old entries cannot be checked
    chain_report = bad_chain(verify_audit(venue_ids=[venue.pk]), "venue", venue.pk)
    assert chain_report.first_bad_seq == 1 and "does not hold" in chain_report.reason


# --- tail cut, chain wiped ------------------------------------------------------------------------------


def test_a_cut_tail_with_the_head_rewound_is_caught_by_the_anchor(venue: Venue) -> None:
    write_chain(venue, 6)
    anchors.write()
    chain = entries(venue)
    with as_db_owner(AuditEntry, AuditChainHead):
        AuditEntry.objects.filter(pk__in=[e.pk for e in chain[4:]]).delete()
        AuditChainHead.objects.filter(venue_id=venue.pk).update(last_hash=chain[3].hash, length=4)
    assert audit.verify_chain(venue.pk).ok  # without the anchor the shorter chain looks whole

    report = verify_audit(venue_ids=[venue.pk])
    bad = bad_chain(report, "venue", venue.pk)
    assert not bad.ok and bad.first_bad_seq == 5 and "removed" in bad.reason and bad.anchored_seq == 6


def test_a_wiped_chain_is_caught_by_its_anchors(venue: Venue, other_venue: Venue) -> None:
    write_chain(venue, 3)
    write_chain(other_venue, 2)
    anchors.write()
    with as_db_owner(AuditEntry, AuditChainHead):
        AuditEntry.objects.filter(venue_id=venue.pk).delete()
        AuditChainHead.objects.filter(venue_id=venue.pk).delete()

    report = verify_audit()
    bad = bad_chain(report, "venue", venue.pk)
    assert not report.ok and bad.first_bad_seq == 1 and "removed" in bad.reason
    assert bad_chain(report, "venue", other_venue.pk).ok


def test_a_forged_anchor_line_is_reported(venue: Venue, settings: Any) -> None:
    write_chain(venue, 2)
    anchors.write()
    path = anchors.path("venue", venue.pk)
    line = json.loads(path.read_text().splitlines()[-1])
    path.write_text(path.read_text() + json.dumps({**line, "seq": 1}) + "\n")  # a rewind, unsigned
    report = verify_audit(venue_ids=[venue.pk])
    assert not report.ok and "signature" in bad_chain(report, "anchors", venue.pk).reason


# --- the pools' seals ------------------------------------------------------------------------------------


def give(pool: Pool, n: int = 2) -> None:
    for _ in range(n):
        contributions.contribute(
            pool=pool,
            source=PoolSource.of("table", 1).at("seat", 1),
            bet=Decimal("1.00"),
            idempotency_key=key(),
            actor="t",
        )


def test_a_sealed_row_edited_with_the_seals_recomputed_is_named(carousel: Pool, an10_venue: Venue) -> None:
    give(carousel)
    seals.seal(carousel)
    give(carousel)
    seals.seal(carousel)
    row = Contribution.objects.filter(pool=carousel).order_by("pk").first()
    assert row is not None
    with as_db_owner(Contribution, LedgerSeal):
        Contribution.objects.filter(pk=row.pk).update(to_meter=row.to_meter + 1)
        prev = seals.GENESIS
        after = seals._empty_through()
        for seal in LedgerSeal.objects.filter(pool=carousel).order_by("seq"):
            seal.digest, seal.rows = seals._digest(carousel.pk, after, seal.through)
            seal.prev_hash, seal.hash = prev, seals._chain(prev, seal, None)  # plain SHA-256: no key
            LedgerSeal.objects.filter(pk=seal.pk).update(
                digest=seal.digest, rows=seal.rows, prev_hash=seal.prev_hash, hash=seal.hash
            )
            prev, after = seal.hash, seal.through

    pool = bad_chain(verify_audit(venue_ids=[an10_venue.pk]), "pool", carousel.pk)
    assert not pool.ok and pool.first_bad_seq == 1 and "altered" in pool.reason


def test_a_cut_seal_chain_is_caught_by_its_anchor(carousel: Pool, an10_venue: Venue) -> None:
    for _ in range(3):
        give(carousel)
        seals.seal(carousel)
    anchors.write()
    with as_db_owner(LedgerSeal):
        LedgerSeal.objects.filter(pool=carousel, seq=3).delete()
    pool = bad_chain(verify_audit(venue_ids=[an10_venue.pk]), "pool", carousel.pk)
    assert not pool.ok and pool.first_bad_seq == 3 and "removed" in pool.reason


# --- the doors --------------------------------------------------------------------------------------------


def test_the_command_exits_non_zero_and_names_the_bad_entry(venue: Venue) -> None:
    write_chain(venue, 3)
    out = StringIO()
    call_command("verify_audit", "--venue", str(venue.pk), stdout=out)
    assert f"ok   venue {venue.pk}" in out.getvalue()
    target = entries(venue)[1]
    with as_db_owner(AuditEntry):
        AuditEntry.objects.filter(pk=target.pk).update(actor_label="someone else")
    out = StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command("verify_audit", "--venue", str(venue.pk), stdout=out)
    assert exit_.value.code == 1
    assert f"BAD  venue {venue.pk}" in out.getvalue() and f"entry 2 (id {target.pk})" in out.getvalue()


def test_the_api_verifies_for_the_operator_only(venue: Venue, operator: Any, caller: Any) -> None:
    write_chain(venue, 2)
    client = APIClient()
    url = f"/api/venues/{venue.pk}/audit/verify/"
    client.force_authenticate(caller)
    denied = client.get(url)
    assert denied.status_code == 403 and denied.json()["error"]["code"] == "role_required"
    client.force_authenticate(operator)
    answer = client.post(url)
    assert answer.status_code == 200 and answer.json()["ok"] is True
    with as_db_owner(AuditEntry):
        AuditEntry.objects.filter(pk=entries(venue)[0].pk).update(action="test.other")
    body = client.get(url).json()
    chain = next(c for c in body["chains"] if c["kind"] == "venue")
    assert (
        body["ok"] is False and chain["first_bad_seq"] == 1 and chain["first_bad_id"] == entries(venue)[0].pk
    )


def test_the_admin_action_reports_each_chain(venue: Venue, admin_client: Any) -> None:
    write_chain(venue, 2)
    answer = admin_client.post(
        "/admin/halls/venue/", {"action": "verify_audit", "_selected_action": [venue.pk]}, follow=True
    )
    assert answer.status_code == 200
    assert "intact, 2 links verified" in answer.content.decode()


# --- a live hall -------------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_an_intact_hall_verifies_as_intact_while_balls_are_drawn_and_pools_sealed(
    session: Any, room: Any, caller: Any, cashier: Any, card_series: Any, ball_set: Any,
    carousel: Pool, monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """A thread draws a game's balls (audited), another contributes to a pool and seals it, the heads are
    anchored meanwhile; every verification taken during it says intact, and each saw a longer chain."""
    monkeypatch.setattr(draw, "dispatch", lambda *args, **kwargs: None)  # the test draws each ball itself
    game = games.create_game(
        room=room, actor=caller, draw_source=DrawSource.RNG, pace_seconds=Decimal("2"), ball_set=ball_set
    )
    games.open_sales(game=game, actor=caller)
    sales.sell_range(game=game, series=card_series, first=1, last=12, actor=cashier)
    games.close_sales(game=game, actor=caller)
    games.start_draw(game=game, actor=caller)
    anchors.write()
    stop = threading.Event()
    errors: list[BaseException] = []
    drawn: list[int] = []
    sealed: list[int] = []

    def play() -> None:
        try:
            for ordinal in range(1, 91):
                if stop.is_set():
                    break
                if draw.draw_rng_ball(game_id=game.pk, ordinal=ordinal) is not None:
                    drawn.append(ordinal)
                if ordinal % 10 == 0:
                    anchors.write()  # the beat anchoring heads meanwhile
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    def bet() -> None:
        try:
            while not stop.is_set():
                give(carousel, 3)
                made = seals.seal(carousel)
                sealed.append(made.seq if made else 0)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    workers = [threading.Thread(target=play), threading.Thread(target=bet)]
    for worker in workers:
        worker.start()
    reports: list[AuditReport] = []
    try:
        while workers[0].is_alive() and len(reports) < 40:
            reports.append(verify_audit())
    finally:
        stop.set()
        for worker in workers:
            worker.join(60)
    assert not errors, errors
    assert len(reports) >= 3 and len(drawn) >= 10 and max(sealed) >= 2
    assert all(r.ok for r in reports), [r.first_bad for r in reports if not r.ok]
    lengths = [bad_chain(r, "venue", room.venue_id).length for r in reports]
    assert lengths == sorted(lengths) and lengths[-1] > lengths[0]  # it read a growing chain each time
    seal_counts = [bad_chain(r, "pool", carousel.pk).length for r in reports]
    assert seal_counts[-1] > seal_counts[0]


# --- the anchors ------------------------------------------------------------------------------------------


def test_anchors_are_written_when_a_head_moves_and_posted_to_the_endpoint(
    venue: Venue, settings: Any
) -> None:
    received: list[Any] = []

    class Endpoint(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Endpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        settings.HALL_AUDIT_ANCHOR_URL = f"http://127.0.0.1:{server.server_port}/anchors"
        write_chain(venue, 2)
        assert halls_tasks.anchor_audit_heads() == 1
        assert anchors.write() == []  # nothing moved: nothing written, nothing posted
        write_chain(venue, 1)
        out = StringIO()
        call_command("anchor_audit", stdout=out)
        assert out.getvalue().startswith("1 anchors written")
    finally:
        server.shutdown()
        server.server_close()
    assert [[(line["kind"], line["id"], line["seq"]) for line in batch] for batch in received] == [
        [("venue", venue.pk, 2)],
        [("venue", venue.pk, 3)],
    ]
    assert received[-1][0]["hash"] == entries(venue)[-1].hash and received[-1][0]["sig"]
    lines = anchors.path("venue", venue.pk).read_text().splitlines()
    assert [json.loads(line) for line in lines] == [batch[0] for batch in received]


def test_an_unreachable_endpoint_still_leaves_the_anchor_in_its_file(venue: Venue, settings: Any) -> None:
    port = free_port()
    settings.HALL_AUDIT_ANCHOR_URL = f"http://127.0.0.1:{port}/anchors"  # nobody listens there
    write_chain(venue, 2)
    assert len(anchors.write()) == 1
    latest = anchors.read_all()[("venue", venue.pk)].latest
    assert latest is not None and (latest.seq, latest.hash) == (2, entries(venue)[-1].hash)


def test_production_without_an_audit_key_fails_the_deploy_check(settings: Any) -> None:
    from halls.services.audit_keys import check_audit_key

    settings.HALL_AUDIT_KEY, settings.HALL_EMBEDDED = "", False
    assert [m.id for m in check_audit_key()] == ["halls.E101"]
    settings.HALL_AUDIT_KEY = KEY
    assert check_audit_key() == []
