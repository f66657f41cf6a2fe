"""The one pool engine for every progressive prize (issue 3 builds it)."""
