"""Web Push (issue 54): a subscription's language and label, endpoints up to 2 KB, and which
pushes each player wants (``push_settings``).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # Batch: SQLite alters a column's type by copying the table; PostgreSQL alters it in place.
    with op.batch_alter_table("push_subscriptions") as batch:
        batch.alter_column(
            "endpoint", existing_type=sa.String(1024), type_=sa.String(2048), nullable=False
        )
        batch.add_column(sa.Column("lang", sa.String(16), nullable=False, server_default="en"))
        batch.add_column(sa.Column("label", sa.String(64), nullable=False, server_default=""))
    op.create_table(
        "push_settings",
        sa.Column("player_id", sa.String(64), nullable=False),
        sa.Column("turn_correspondence", sa.Boolean(), nullable=False),
        sa.Column("turn_live", sa.Boolean(), nullable=False),
        sa.Column("waited", sa.Boolean(), nullable=False),
        sa.Column("game_end", sa.Boolean(), nullable=False),
        sa.Column("updated_at", sa.Double(), nullable=False),
        sa.PrimaryKeyConstraint("player_id", name=op.f("pk_push_settings")),
    )


def downgrade() -> None:
    op.drop_table("push_settings")
    with op.batch_alter_table("push_subscriptions") as batch:
        batch.drop_column("label")
        batch.drop_column("lang")
        batch.alter_column(
            "endpoint", existing_type=sa.String(2048), type_=sa.String(1024), nullable=False
        )
