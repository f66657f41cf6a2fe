"""Type B and C machines linked to progressive pools (issue 5 builds it)."""
