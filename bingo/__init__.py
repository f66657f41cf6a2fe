"""Bingo, in rooms: each game type a folder of its own, all standing on the shared card core here.

- The card core (this folder's modules, pure, no Django): `cards` (the 3x9 card and its rules), `cardgen`
  (series of cards from a seed), `detect` and `detect_index` (which cards a ball completes), `balls` (ball
  sets and their colours), `claims` (is a Line or Bingo claim good, and why not), `prizes` (a prize from
  sales, split among co-winners), `announce` (the sales formula said at the close of sales), `verifiable`
  (a draw's committed seed, the sales digest and the balls derived from both): one set of rules for a
  hall's own game and for a network game played in it.
- `traditional/`: paper cards, a caller, a blower and its reader or the CSPRNG; claims, prize programs
  (bolsa acumulada), paper stock, the caller's voice. Its Django label stays "bingo".
- `electronic/`: electronic and automatic bingo (specialities, terminals, the common RNG draw).
- `network/`: the wing of linked venues (the interconnected prize and the simultaneous game), over the
  transport `halls.link`; it plays on the traditional and electronic games through their hooks.
- `venuewide/`: what spans wings: the venue's setup page, the staff pages' URL map, the session minutes and
  the inspector's pages, each wing read through its own read model.

Who imports whom is a contract (pyproject.toml, import-linter "bingo-rooms"): venuewide above network above
traditional | electronic (never each other) above the card core.
"""
