import pytest
from django.db import connection
from machines.consumers import in_db_thread
from machines.models import Machine

pytestmark = pytest.mark.django_db(transaction=True)


def probe(tag):
    before = connection.connection is not None
    Machine.objects.count()
    return tag, before, connection.close_at, connection.in_atomic_block, connection.get_autocommit()


def after():
    return connection.connection is not None


async def test_probe() -> None:
    print("P1", await in_db_thread(probe)("a"))
    print("P2", await in_db_thread(after)())
    print("P3", await in_db_thread(probe)("b"))
    assert 0
