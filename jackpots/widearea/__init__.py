"""Wide-area progressives: a pool owned by a network's central whose members are machines and casino tables
of several venues, fed over the link (halls.link) and decided once at the central. See `core` for the pure
rules, `services.central` and `services.venue` for the two sides, `link_handlers` for the link's kinds."""
