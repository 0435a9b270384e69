"""The in-process stores: rooms, the league (the quick-play queue) and sessions held in this
process's memory, for one node with nothing else installed (and for the tests)."""
