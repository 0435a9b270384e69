"""Identity: accounts, sessions, guests and names."""
