import threading, time
import pytest
from django.db import connection
from machines.services import gateway, links
from tests.machines.machine_fixtures import an10_venue, pool_operator, slot_pool, register, play, live_amounts, GRAND_RATE  # noqa
pytestmark = pytest.mark.django_db(transaction=True)

def test_bench(an10_venue, pool_operator, slot_pool):
    g = links.create_link_group(venue=an10_venue, code="B", name="B", pool=slot_pool, same_type_and_denomination=None, actor=pool_operator)
    ms = []
    for i in range(64):
        m, _ = register(an10_venue, pool_operator)
        links.join_link(group=g, machine=m, actor=pool_operator)
        ms.append(m)
    N = 150
    T = 8
    def work(chunk):
        try:
            for seq in range(1, N + 1):
                for m in chunk:
                    gateway.receive(machine_id=m.pk, messages=[play(seq, "0.20")])
        finally:
            connection.close()
    chunks = [ms[i::T] for i in range(T)]
    threads = [threading.Thread(target=work, args=(c,)) for c in chunks]
    t0 = time.perf_counter()
    for t in threads: t.start()
    for t in threads: t.join()
    dt = time.perf_counter() - t0
    total = N * len(ms)
    print(f"\n{total} plays in {dt:.2f}s = {total/dt:.0f} plays/s ({T} threads, 1 play per call)")
    from decimal import Decimal
    assert live_amounts(slot_pool)["Grand"] == Decimal("1000") + Decimal("0.20") * total * GRAND_RATE
