"""The hall's PostgreSQL backend: Django's, knowing the project's money column (see `base`)."""
