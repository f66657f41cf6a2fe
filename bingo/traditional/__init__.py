"""Traditional bingo (spec §1–2): paper or printed cards sold at the till, a caller's console, the blower's
reader or the CSPRNG, claims verified against the master card, accumulated prize programs (BA-1 … BA-20),
paper stock and printing, the caller's voice. Stands on the card core (`bingo.cards`, `bingo.detect_index`,
…); imports neither `bingo.electronic` nor the network wing, which plug into it through `hooks`."""
