"""The room service: actors that run a room's commands one at a time, the deadline
scheduler, the bot pool and quick play. A move's trip through the shell reads top down here."""
