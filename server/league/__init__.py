"""The league's shell: posting rated games to the store exactly once."""
