"""The network wing: games and prizes across linked venues, over the transport `halls.link`.

- `interconnected/`: the interconnected prize (IB-01 … IB-04) and automatic bingo's Gran Línea / Gran Bingo
  (AB-05, AB-08), played in rounds across the venues' own games (Django label "bingo_network").
- `simultaneous/`: one game played at once in every member venue from the central's draw (SB-01; label
  "bingo_simultaneous").

A venue's part plays on its traditional and electronic games through the hooks those offer
(`bingo.traditional.hooks`, `bingo.electronic.network_hooks`); neither of them imports this wing.
"""
