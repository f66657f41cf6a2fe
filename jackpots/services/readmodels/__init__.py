"""Read models of the pool engine: what meters show (`meters`) and what a hall screen shows of a pool
(`screens`). Read-only: nothing here writes."""
