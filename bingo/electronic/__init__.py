"""Electronic and automatic bingo on player terminals (spec §3, §4): specialities, terminals, one draw."""
