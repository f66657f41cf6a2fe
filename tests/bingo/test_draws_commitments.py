"""The draw commitments (bingo.draws): committed before sales, sealed to the workers' key, fixed by the sales
digest, drawn in the seed's order, revealed after the game; every wrong step refused with nothing written."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from bingo import verifiable
from bingo.draws import seedbox, services
from bingo.draws.models import DrawCommitment
from halls.errors import Conflict, InvalidInput
from halls.models import AuditEntry, Venue
from tests.tampering import as_db_owner

pytestmark = pytest.mark.django_db

CARDS = [("A1", [1, 15, 90]), ("A2", [3, 4]), ("B7", [22, 61, 80])]


def _commit(venue: Venue, game_ref: str = "41", max_ball: int = 90) -> DrawCommitment:
    return services.commit_draw(
        venue_id=venue.pk, room="traditional", game_ref=game_ref, max_ball=max_ball, actor="test"
    )


def _actions(venue: Venue) -> list[str]:
    return list(
        AuditEntry.objects.filter(venue=venue, action__startswith="draw.").values_list("action", flat=True)
    )


def test_a_commitment_is_made_once_and_audited(venue: Venue) -> None:
    row = _commit(venue)
    again = _commit(venue)
    assert again.pk == row.pk and again.commitment == row.commitment
    assert len(row.commitment) == 64 and row.seed == "" and row.sales_digest == ""
    assert bytes(row.sealed_seed) and row.key_id == seedbox.key_id(services.public_key())
    entry = AuditEntry.objects.get(venue=venue, action="draw.committed")
    assert entry.data["commitment"] == row.commitment
    assert "seed" not in entry.data  # the seed is never in the audit before its reveal


def test_the_whole_draw_follows_from_the_revealed_seed_and_the_sales(venue: Venue) -> None:
    row = _commit(venue)
    with pytest.raises(Conflict) as refused:
        services.ball_at(room="traditional", game_ref="41", ordinal=1)
    assert refused.value.code == "sales_open"
    closed = services.close_sales(room="traditional", game_ref="41", cards=CARDS, actor="test")
    sales = services.sales_of(closed, CARDS)
    assert closed.sales_digest == verifiable.sales_digest(sales) and closed.cards == 3
    drawn = [services.ball_at(room="traditional", game_ref="41", ordinal=n) for n in range(1, 31)]
    assert sorted(set(drawn)) == sorted(drawn) and all(1 <= ball <= 90 for ball in drawn)
    revealed = services.reveal(room="traditional", game_ref="41", actor="test")
    seed = bytes.fromhex(revealed.seed)
    assert hashlib.sha256(seed).hexdigest() == row.commitment
    assert drawn == verifiable.balls(seed, closed.sales_digest, 90)[:30]
    assert services.check(room="traditional", game_ref="41", drawn=drawn, sales=sales).verified
    assert _actions(venue) == ["draw.committed", "draw.sales_closed", "draw.revealed"]


def test_a_restarted_worker_opens_the_sealed_seed_and_goes_on_with_the_same_order(venue: Venue) -> None:
    _commit(venue)
    services.close_sales(room="traditional", game_ref="41", cards=CARDS, actor="test")
    first = [services.ball_at(room="traditional", game_ref="41", ordinal=n) for n in range(1, 11)]
    services.forget(room="traditional", game_ref="41")  # a new worker: nothing in memory
    services._private_key.cache_clear()
    after = [services.ball_at(room="traditional", game_ref="41", ordinal=n) for n in range(1, 21)]
    assert after[:10] == first


def test_the_same_sales_close_again_and_other_sales_are_refused(venue: Venue) -> None:
    _commit(venue)
    closed = services.close_sales(room="traditional", game_ref="41", cards=CARDS, actor="test")
    assert (
        services.close_sales(
            room="traditional", game_ref="41", cards=list(reversed(CARDS)), actor="test"
        ).sales_digest
        == closed.sales_digest
    )
    with pytest.raises(Conflict) as refused:
        services.close_sales(room="traditional", game_ref="41", cards=[*CARDS, ("C1", [5])], actor="test")
    assert refused.value.code == "sales_digest_differs" and closed.sales_digest in refused.value.message
    assert DrawCommitment.objects.get(pk=closed.pk).cards == 3
    assert _actions(venue).count("draw.sales_closed") == 1


def test_sales_without_a_canonical_form_are_refused(venue: Venue) -> None:
    _commit(venue)
    with pytest.raises(InvalidInput):
        services.close_sales(
            room="traditional", game_ref="41", cards=[("A1", [1]), ("A1", [2])], actor="test"
        )
    assert DrawCommitment.objects.get(room="traditional", game_ref="41").sales_digest == ""


def test_a_web_process_seals_to_the_public_key_and_can_never_open_a_seed(
    venue: Venue, settings: Any, tmp_path: Path
) -> None:
    worker_key = services.private_key()
    assert worker_key is not None
    settings.HALL_DRAW_SEED_PUBLIC_KEY = seedbox.public_bytes(worker_key.public_key()).hex()
    settings.HALL_DRAW_SEED_KEY_FILE = str(tmp_path / "absent.key")
    row = _commit(venue)
    services.close_sales(room="traditional", game_ref="41", cards=CARDS, actor="test")
    with pytest.raises(services.SeedUnavailable):
        services.ball_at(room="traditional", game_ref="41", ordinal=1)
    with pytest.raises(services.SeedUnavailable):
        services.reveal(room="traditional", game_ref="41", actor="test")
    assert not (tmp_path / "absent.key").exists()  # a web process never makes a key of its own
    # The worker, holding the key, opens what the web process sealed.
    assert seedbox.open_sealed(row.sealed_seed, worker_key, row.game)


def test_a_seed_replaced_after_its_commitment_is_refused_at_the_reveal(venue: Venue) -> None:
    row = _commit(venue)
    services.close_sales(room="traditional", game_ref="41", cards=CARDS, actor="test")
    other = verifiable.new_seed()  # sealed properly, but not the committed one
    forged = seedbox.seal(other, services.public_key(), row.game)
    with as_db_owner(DrawCommitment):
        DrawCommitment.objects.filter(pk=row.pk).update(sealed_seed=forged)
    services.forget(room="traditional", game_ref="41")
    with pytest.raises(Conflict) as refused:
        services.reveal(room="traditional", game_ref="41", actor="test")
    assert refused.value.code == "seed_mismatch"
    assert DrawCommitment.objects.get(pk=row.pk).seed == ""
    assert "draw.revealed" not in _actions(venue)


def test_a_sealed_seed_moved_to_another_game_does_not_open(venue: Venue) -> None:
    first, second = _commit(venue, "41"), _commit(venue, "42")
    for ref in ("41", "42"):
        services.close_sales(room="traditional", game_ref=ref, cards=CARDS, actor="test")
    with as_db_owner(DrawCommitment):
        DrawCommitment.objects.filter(pk=second.pk).update(sealed_seed=first.sealed_seed)
    with pytest.raises(Conflict) as refused:
        services.ball_at(room="traditional", game_ref="42", ordinal=1)
    assert refused.value.code == "seed_altered"


def test_what_was_published_cannot_be_edited_nor_deleted(venue: Venue) -> None:
    from django.db import DatabaseError, transaction

    row = _commit(venue)
    services.close_sales(room="traditional", game_ref="41", cards=CARDS, actor="test")
    for change in ({"commitment": "0" * 64}, {"sales_digest": "1" * 64}, {"game_ref": "43"}):
        with pytest.raises(DatabaseError), transaction.atomic():
            DrawCommitment.objects.filter(pk=row.pk).update(**change)
    with pytest.raises(DatabaseError), transaction.atomic():
        DrawCommitment.objects.filter(pk=row.pk).delete()
