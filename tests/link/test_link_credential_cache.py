"""The central's process cache of verified link credentials (issue 30): a venue's requests read its credential
once, a rotation or revocation is seen by every process at its next request, a rotated credential's grace
still ends on time, and nothing is kept when the shared cache cannot be read."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from django.db import transaction
from django.test import Client
from django.utils import timezone

from halls.link.models import VenueCredential
from halls.link.services import credentials
from halls.link.services.credentials import BadCredential, Issued, RevokedCredential
from halls.models import Venue


@pytest.fixture(autouse=True)
def _central(settings: Any) -> Iterator[None]:
    settings.HALL_ROLE = "central"
    settings.HALL_LINK_CREDENTIAL_CACHE_SECONDS = 10.0
    credentials.forget_verified()
    yield
    credentials.forget_verified()


@pytest.fixture
def issued(venue: Venue) -> Issued:
    return credentials.issue(venue=venue, actor="test")


def _check(issued: Issued, secret: str | None = None) -> int:
    return credentials.authenticate(key=issued.key, secret=issued.secret if secret is None else secret)


def test_a_verified_credential_is_not_read_again(
    venue: Venue, issued: Issued, django_assert_num_queries: Any
) -> None:
    with django_assert_num_queries(1):
        assert _check(issued) == venue.pk
    with django_assert_num_queries(0):
        assert _check(issued) == venue.pk
        assert _check(issued) == venue.pk


def test_the_process_keeps_a_digest_of_the_secret_never_the_secret(issued: Issued) -> None:
    _check(issued)
    assert all(issued.secret not in repr(key) for key in credentials._verified)
    assert all(isinstance(digest, bytes) and len(digest) == 32 for _key, digest in credentials._verified)


def test_a_wrong_secret_is_refused_even_when_the_key_is_kept(issued: Issued) -> None:
    _check(issued)
    for _ in range(2):  # a refusal is never kept either
        with pytest.raises(BadCredential):
            _check(issued, secret="not-the-secret")
    with pytest.raises(BadCredential):
        credentials.authenticate(key="lk_nobody", secret=issued.secret)


def test_a_revocation_in_another_process_is_seen_within_half_a_second(
    venue: Venue,
    issued: Issued,
    django_capture_on_commit_callbacks: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [1000.0]
    monkeypatch.setattr(credentials, "time", SimpleNamespace(monotonic=lambda: now[0]))
    assert _check(issued) == venue.pk
    kept = dict(credentials._verified)
    generation = credentials._generation()
    with django_capture_on_commit_callbacks(execute=True):  # the revoking process commits
        assert credentials.revoke(venue=venue, actor="test") == 1
    # This process as another one would be: it verified the credential before, read the generation a
    # moment ago, and is told nothing but what the shared cache says, which it reads half a second later.
    credentials._verified.update(kept)
    credentials._read[:] = [(now[0], generation)]
    assert _check(issued) == venue.pk
    now[0] += credentials.GENERATION_READ_SECONDS
    with pytest.raises(RevokedCredential):
        _check(issued)


def test_a_revocation_is_seen_by_its_own_process_before_it_commits(venue: Venue, issued: Issued) -> None:
    _check(issued)
    with transaction.atomic():
        credentials.revoke(venue=venue, actor="test")
        with pytest.raises(RevokedCredential):
            _check(issued)


def test_a_rotation_renews_the_generation_and_both_credentials_work_through_the_grace(
    venue: Venue, issued: Issued, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    _check(issued)
    before = credentials._generation()
    with django_capture_on_commit_callbacks(execute=True):
        new = credentials.rotate(venue=venue, actor="test", grace=timedelta(minutes=10))
    assert credentials._generation() not in (None, before)  # read again: the rotation forgot the last read
    assert _check(issued) == _check(new) == venue.pk


def test_a_kept_rotated_credential_is_refused_when_its_grace_ends(
    venue: Venue, issued: Issued, monkeypatch: pytest.MonkeyPatch, django_assert_num_queries: Any
) -> None:
    new = credentials.rotate(venue=venue, actor="test", grace=timedelta(minutes=10))
    assert _check(issued) == venue.pk  # kept, with its grace's end
    later = timezone.now() + timedelta(minutes=11)
    monkeypatch.setattr(credentials, "timezone", SimpleNamespace(now=lambda: later))
    with pytest.raises(RevokedCredential, match="grace is over"):
        _check(issued)
    assert _check(new) == venue.pk


def test_a_change_the_shared_cache_never_heard_of_is_seen_within_the_cache_seconds(
    venue: Venue, issued: Issued, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [1000.0]
    monkeypatch.setattr(credentials, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    _check(issued)
    VenueCredential.objects.filter(key=issued.key).update(revoked_at=timezone.now())  # behind the services
    clock[0] += 9.9
    assert _check(issued) == venue.pk  # still kept
    clock[0] += 0.2
    with pytest.raises(RevokedCredential):
        _check(issued)


def test_nothing_is_kept_when_the_shared_cache_cannot_be_read(
    venue: Venue, issued: Issued, monkeypatch: pytest.MonkeyPatch, django_assert_num_queries: Any
) -> None:
    def down(*_: Any, **__: Any) -> Any:
        raise ConnectionError("redis is down")

    monkeypatch.setattr(credentials, "cache", SimpleNamespace(get=down, add=down, set=down))
    for _ in range(2):
        with django_assert_num_queries(1):
            assert _check(issued) == venue.pk
    assert not credentials._verified


def test_no_cache_when_its_seconds_are_zero(
    venue: Venue, issued: Issued, settings: Any, django_assert_num_queries: Any
) -> None:
    settings.HALL_LINK_CREDENTIAL_CACHE_SECONDS = 0
    for _ in range(2):
        with django_assert_num_queries(1):
            assert _check(issued) == venue.pk


def test_a_venues_requests_stop_at_the_revocation(
    venue: Venue, issued: Issued, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    client = Client(headers={"Authorization": credentials.header(issued.key, issued.secret)})
    assert client.get(f"/api/link/streams/venue.{venue.pk}/").status_code == 200
    assert client.get(f"/api/link/streams/venue.{venue.pk}/").status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        credentials.revoke(venue=venue, actor="test")
    answer = client.get(f"/api/link/streams/venue.{venue.pk}/")
    assert (answer.status_code, answer.json()["error"]["code"]) == (401, "revoked_credential")
