"""The demo hall (`make demo`): its seed, its self-playing rooms, tables and machines, its beat entries and
``manage.py demo``. It sits above every app and nothing imports it; production (HALL_ENV=production) does
not install it (config/settings.py)."""
