"""The test run's password hasher: Django's PBKDF2-SHA256 at 1,000 iterations instead of 1,000,000.

Tests create thousands of users, and at the production cost each hash takes 0.5–2.5 s of CPU here: most
of the suite's time went to hashing. The hash keeps the algorithm's name and carries its iteration count,
so a server process that a test starts (standard hashers) still verifies these passwords (and upgrades them
on a successful login, as Django does when the iterations changed).
"""

from __future__ import annotations

from django.contrib.auth.hashers import PBKDF2PasswordHasher


class FastPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    iterations = 1_000
