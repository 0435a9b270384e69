"""The store of record's tables: one schema for PostgreSQL and SQLite (SQLAlchemy Core).

Types are the ones both databases treat alike:
- times are epoch seconds as ``Double`` (the service's clock everywhere: the rooms, the league
  and the wire all carry ``time.time()`` floats on the nodes' shared clock). ``DateTime`` would
  be a timezone-free string on SQLite and a timestamp on PostgreSQL: two behaviours, and a
  conversion at every edge for nothing;
- small documents (a table's options, final scores, departures) are ``JSON``; a game's hand
  records are bytes in their own compact encoding (``hand_codec.py``: JSON would be about 27 KB
  a game);
- ids and names are bounded strings, checked in Python before any write (SQLite does not
  enforce a ``VARCHAR`` length; PostgreSQL does, as a second guard).

The first migration (``migrations/versions``) creates exactly these tables; a change here needs
a new revision beside it (``tests/record/test_migrations.py`` compares the two).
"""

from __future__ import annotations

import sqlalchemy as sa

from .records import MAX_ID, MAX_KIND, MAX_NAME

MAX_HASH = 256  # an argon2id PHC string is about 100 characters
MAX_ENDPOINT = 2048  # a push service's subscription URL (the API refuses longer ones)
MAX_LANG = 16
MAX_LABEL = 64

metadata = sa.MetaData(
    naming_convention={  # stable constraint names, so later migrations can name what they alter
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

accounts = sa.Table(
    "accounts",
    metadata,
    sa.Column("player_id", sa.String(MAX_ID), primary_key=True),
    sa.Column("name", sa.String(MAX_NAME), nullable=False),
    # the name's confusable skeleton (server/accounts/names.py): the uniqueness key
    sa.Column("name_key", sa.String(MAX_NAME), nullable=False, unique=True),
    sa.Column("password_hash", sa.String(MAX_HASH), nullable=False),
    sa.Column("created_at", sa.Double, nullable=False),
    sa.Column("claimed_guest", sa.Boolean, nullable=False),  # took over a guest's identity
)

ratings = sa.Table(
    "ratings",
    metadata,
    # no foreign key to accounts: guests are rated too (docs/ratings.md)
    sa.Column("player_id", sa.String(MAX_ID), primary_key=True),
    sa.Column("mu", sa.Double, nullable=False),
    sa.Column("sigma", sa.Double, nullable=False),
    sa.Column("games", sa.Integer, nullable=False),
    sa.Column("version", sa.Integer, nullable=False),  # bumped by each post: compare-and-set
    # The ladder's sort key (conservative_rating, display scale) for an account past its
    # provisional games, else NULL. Stored, not computed: "is an account" is another table,
    # which neither database lets a generated column or an expression index read.
    sa.Column("ladder_score", sa.Integer, nullable=True),
)
sa.Index(
    "ix_ratings_ladder",
    ratings.c.ladder_score.desc(),
    ratings.c.player_id,
    postgresql_where=ratings.c.ladder_score.is_not(None),
    sqlite_where=ratings.c.ladder_score.is_not(None),
)

games = sa.Table(
    "games",
    metadata,
    sa.Column("game_id", sa.String(MAX_ID), primary_key=True),
    sa.Column("room_id", sa.String(MAX_ID), nullable=False),
    sa.Column("kind", sa.String(MAX_KIND), nullable=False),
    sa.Column("options", sa.JSON, nullable=False),
    sa.Column("started_at", sa.Double, nullable=False),
    sa.Column("finished_at", sa.Double, nullable=False),
    sa.Column("scores", sa.JSON, nullable=False),
    sa.Column("winners", sa.JSON, nullable=False),
    sa.Column("rated", sa.Boolean, nullable=False),
    sa.Column("departures", sa.JSON, nullable=False),
    # Every hand's hand_over and hand_audit data, the whole game in one value (hand_codec.py):
    # one row and one compression context a game, not a row, a key and an index entry a hand.
    sa.Column("hands_format", sa.SmallInteger, nullable=False),  # hand_codec.FORMAT
    sa.Column("hands", sa.LargeBinary, nullable=False),
)


def _game_key() -> sa.Column[str]:
    return sa.Column(
        "game_id",
        sa.String(MAX_ID),
        sa.ForeignKey("games.game_id", ondelete="CASCADE"),  # a retention purge takes it all
        primary_key=True,
    )


game_seats = sa.Table(
    "game_seats",
    metadata,
    _game_key(),
    sa.Column("seat", sa.SmallInteger, primary_key=True),
    # NULL for a bot (then ``bot`` is its level) or a deleted account (name NULL too)
    sa.Column("participant_id", sa.String(MAX_ID), nullable=True),
    sa.Column("name", sa.String(MAX_NAME), nullable=True),
    sa.Column("bot", sa.String(MAX_KIND), nullable=True),
    sa.Column("rating_before", sa.Integer, nullable=True),  # display ratings, rated games only
    sa.Column("rating_after", sa.Integer, nullable=True),
    sa.Column("finished_at", sa.Double, nullable=False),  # the game's, for the index below
)
# A player's games, newest first, paged by key (issue 53); unique: one seat per player a game.
sa.Index(
    "ix_game_seats_player",
    game_seats.c.participant_id,
    game_seats.c.finished_at,
    game_seats.c.game_id,
    unique=True,
)

# The key is (player, at, game): a player's history, newest first, is one backward range scan
# of it, with no second index. ``at`` is the game's finish, one value per game, so the key
# still allows one point per player and game.
rating_history = sa.Table(
    "rating_history",
    metadata,
    sa.Column("player_id", sa.String(MAX_ID), nullable=False),
    sa.Column(
        "game_id",
        sa.String(MAX_ID),
        sa.ForeignKey("games.game_id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("at", sa.Double, nullable=False),
    sa.Column("mu_before", sa.Double, nullable=False),
    sa.Column("sigma_before", sa.Double, nullable=False),
    sa.Column("mu_after", sa.Double, nullable=False),
    sa.Column("sigma_after", sa.Double, nullable=False),
    sa.Column("display", sa.Integer, nullable=False),  # after the game
    sa.Column("games", sa.Integer, nullable=False),  # rated games after this one
    sa.PrimaryKeyConstraint("player_id", "at", "game_id"),
)

# Accounts deleted for good: only the opaque player id (no time, no name), so a game that
# finishes after the deletion seats "a deleted player" and posts no rating under that id
# (``store.archive_game``).
deleted_players = sa.Table(
    "deleted_players",
    metadata,
    sa.Column("player_id", sa.String(MAX_ID), primary_key=True),
)

server_keys = sa.Table(
    "server_keys",
    metadata,
    sa.Column("name", sa.String(MAX_ID), primary_key=True),
    sa.Column("value", sa.LargeBinary, nullable=False),
    sa.Column("created_at", sa.Double, nullable=False),
)

push_subscriptions = sa.Table(
    "push_subscriptions",
    metadata,
    sa.Column("endpoint", sa.String(MAX_ENDPOINT), primary_key=True),
    sa.Column("player_id", sa.String(MAX_ID), nullable=False, index=True),
    sa.Column("keys", sa.JSON, nullable=False),  # the browser's p256dh and auth keys
    sa.Column("created_at", sa.Double, nullable=False),
    # Issue 54 (revision 0002): the language its notifications are written in, and a short
    # label the page gave the device ("Chrome on Android"), shown in the player's device list.
    sa.Column("lang", sa.String(MAX_LANG), nullable=False, server_default="en"),
    sa.Column("label", sa.String(MAX_LABEL), nullable=False, server_default=""),
)

# Which pushes a player wants (issue 54); no row: every kind, the defaults.
push_settings = sa.Table(
    "push_settings",
    metadata,
    sa.Column("player_id", sa.String(MAX_ID), primary_key=True),
    sa.Column("turn_correspondence", sa.Boolean, nullable=False),
    sa.Column("turn_live", sa.Boolean, nullable=False),
    sa.Column("waited", sa.Boolean, nullable=False),  # a correspondence game waited 48 hours
    sa.Column("game_end", sa.Boolean, nullable=False),  # a correspondence game ended
    sa.Column("updated_at", sa.Double, nullable=False),
)
