"""The store of record's first tables (issue 52): accounts, ratings and their history, finished
games with their seats and hands (a game's hands in one value of its row), deleted players'
ids, the server's keys and push subscriptions.

Revision ID: 0001
Revises: (none)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("player_id", sa.String(64), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("name_key", sa.String(64), nullable=False),
        sa.Column("password_hash", sa.String(256), nullable=False),
        sa.Column("created_at", sa.Double(), nullable=False),
        sa.Column("claimed_guest", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("player_id", name=op.f("pk_accounts")),
        sa.UniqueConstraint("name_key", name=op.f("uq_accounts_name_key")),
    )
    op.create_table(
        "ratings",
        sa.Column("player_id", sa.String(64), nullable=False),
        sa.Column("mu", sa.Double(), nullable=False),
        sa.Column("sigma", sa.Double(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("ladder_score", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("player_id", name=op.f("pk_ratings")),
    )
    op.create_index(
        "ix_ratings_ladder",
        "ratings",
        [sa.literal_column("ladder_score DESC"), "player_id"],
        postgresql_where=sa.text("ladder_score IS NOT NULL"),
        sqlite_where=sa.text("ladder_score IS NOT NULL"),
    )
    op.create_table(
        "games",
        sa.Column("game_id", sa.String(64), nullable=False),
        sa.Column("room_id", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("started_at", sa.Double(), nullable=False),
        sa.Column("finished_at", sa.Double(), nullable=False),
        sa.Column("scores", sa.JSON(), nullable=False),
        sa.Column("winners", sa.JSON(), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("departures", sa.JSON(), nullable=False),
        sa.Column("hands_format", sa.SmallInteger(), nullable=False),
        sa.Column("hands", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("game_id", name=op.f("pk_games")),
    )
    op.create_table(
        "game_seats",
        sa.Column("game_id", sa.String(64), nullable=False),
        sa.Column("seat", sa.SmallInteger(), nullable=False),
        sa.Column("participant_id", sa.String(64), nullable=True),
        sa.Column("name", sa.String(64), nullable=True),
        sa.Column("bot", sa.String(32), nullable=True),
        sa.Column("rating_before", sa.Integer(), nullable=True),
        sa.Column("rating_after", sa.Integer(), nullable=True),
        sa.Column("finished_at", sa.Double(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.game_id"],
            name=op.f("fk_game_seats_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("game_id", "seat", name=op.f("pk_game_seats")),
    )
    op.create_index(
        "ix_game_seats_player",
        "game_seats",
        ["participant_id", "finished_at", "game_id"],
        unique=True,
    )
    op.create_table(
        "rating_history",
        sa.Column("player_id", sa.String(64), nullable=False),
        sa.Column("game_id", sa.String(64), nullable=False),
        sa.Column("at", sa.Double(), nullable=False),
        sa.Column("mu_before", sa.Double(), nullable=False),
        sa.Column("sigma_before", sa.Double(), nullable=False),
        sa.Column("mu_after", sa.Double(), nullable=False),
        sa.Column("sigma_after", sa.Double(), nullable=False),
        sa.Column("display", sa.Integer(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.game_id"],
            name=op.f("fk_rating_history_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("player_id", "at", "game_id", name=op.f("pk_rating_history")),
    )
    op.create_table(
        "deleted_players",
        sa.Column("player_id", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("player_id", name=op.f("pk_deleted_players")),
    )
    op.create_table(
        "server_keys",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("value", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.Double(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_server_keys")),
    )
    op.create_table(
        "push_subscriptions",
        sa.Column("endpoint", sa.String(1024), nullable=False),
        sa.Column("player_id", sa.String(64), nullable=False),
        sa.Column("keys", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.Double(), nullable=False),
        sa.PrimaryKeyConstraint("endpoint", name=op.f("pk_push_subscriptions")),
    )
    op.create_index(op.f("ix_push_subscriptions_player_id"), "push_subscriptions", ["player_id"])


def downgrade() -> None:
    for table in (
        "push_subscriptions",
        "server_keys",
        "deleted_players",
        "rating_history",
        "game_seats",
        "games",
        "ratings",
        "accounts",
    ):
        op.drop_table(table)  # its indexes go with it
