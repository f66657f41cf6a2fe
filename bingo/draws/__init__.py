"""Verifiable draws (issue 28): each RNG game's secret seed, committed before its sales open, sealed to the
drawing workers' key, revealed after the game. The balls follow from the seed and the digest of the final
sales (bingo.verifiable, which specifies every byte); the wings wire their games to `services` and register
a reader in `rooms` for the public page."""
