"""The in-process stores: rooms, the league and accounts held in this process's memory,
for one node with nothing else installed (and for the tests)."""
