"""The queue's keys and what travels on it: a job's bytes and an answer's, both msgpack.

Every key of the queue shares one hash tag, ``{bots}``, so on a Redis Cluster they live in
one slot: a worker answers a job and acknowledges it in one script (the reply stream and the
job stream in one slot), and one consumer group serves every worker. One slot is one shard's
CPU: about four small commands per decision (XADD, XREADGROUP, the answer script, the node's
XREAD share) beside tens of milliseconds of search, so one shard carries thousands of decisions
a second, hundreds of worker cores (docs/bots.md, "Bot workers").

A job is untrusted input to a worker: its size is bounded, its fields are exactly these, the
reply key must be one of the queue's reply streams (a job cannot make a worker write
anywhere else), and the view is handed to the bots as the data it is (the bots read only a
seat's view; ``server.play.bot_jobs`` answers a view they cannot read with the fallback).

>>> keys = QueueKeys("hearts")
>>> keys.jobs, keys.reply("node1-ab12")
('hearts:{bots}:jobs', 'hearts:{bots}:reply:node1-ab12')
>>> job = Job("decide", "strong", {"phase": "passing"}, 7, 1.0, 1.8)
>>> read_job(pack_job("n1-1", keys.reply("n1"), job), keys) == ("n1-1", keys.reply("n1"), job)
True
"""

from __future__ import annotations

import math
from typing import Any

import msgpack

from server.core.bots.moves import Move
from server.play.bot_jobs import KINDS, Answer, Job

JOB_FIELD = b"j"
ANSWER_FIELD = b"a"
GROUP = "bot-workers"
MAX_JOB_BYTES = 64 * 1024  # a seat's view is about 2 KB at the end of a hand
JOB_KEYS = frozenset({"id", "reply", "kind", "level", "seed", "asked", "deadline", "view"})
MOVE_KINDS = {"pass": int, "play": int, "moon": str}


class QueueKeys:
    """The queue's key names under one prefix, all in the slot of ``{bots}``."""

    def __init__(self, prefix: str = "hearts") -> None:
        self.tag = f"{prefix}:{{bots}}"
        self.jobs = f"{self.tag}:jobs"
        self.reply_prefix = f"{self.tag}:reply:"

    def reply(self, asker: str) -> str:
        """The reply stream of one asking process."""
        return self.reply_prefix + asker


class BadJob(ValueError):
    """A job a worker cannot read: ``kind`` names the fault (logged once per kind); a job
    that still names a reply stream and an id is answered (with the fallback, or no move)."""

    def __init__(self, kind: str, job_id: str | None = None, reply: str | None = None) -> None:
        super().__init__(kind)
        self.kind = kind
        self.job_id = job_id
        self.reply = reply


def pack_job(job_id: str, reply: str, job: Job) -> bytes:
    return bytes(
        msgpack.packb(
            {
                "id": job_id,
                "reply": reply,
                "kind": job.kind,
                "level": job.level,
                "seed": job.seed,
                "asked": job.asked,
                "deadline": job.deadline,
                "view": job.view,
            }
        )
    )


def read_job(raw: bytes, keys: QueueKeys) -> tuple[str, str, Job]:
    """(job id, reply stream, job) from a job's bytes; BadJob if they are not a job. An
    unknown level is not a fault here: it is answered with the fallback (``answer_job``)."""
    if len(raw) > MAX_JOB_BYTES:
        raise BadJob("too_large")
    try:
        fields = msgpack.unpackb(raw, raw=False, strict_map_key=True)
    except Exception:
        raise BadJob("unreadable") from None
    if not isinstance(fields, dict):
        raise BadJob("unreadable")
    job_id, reply = fields.get("id"), fields.get("reply")
    if not isinstance(job_id, str) or not 0 < len(job_id) <= 100:
        raise BadJob("bad_id")
    if not isinstance(reply, str) or not reply.startswith(keys.reply_prefix):
        raise BadJob("bad_reply", job_id)
    if set(fields) != JOB_KEYS:
        raise BadJob("bad_fields", job_id, reply)
    kind, level, seed = fields["kind"], fields["level"], fields["seed"]
    asked, deadline, view = fields["asked"], fields["deadline"], fields["view"]
    if kind not in KINDS or not isinstance(level, str) or len(level) > 40:
        raise BadJob("bad_kind", job_id, reply)
    if seed is not None and (not isinstance(seed, int) or not 0 <= seed < 2**64):
        raise BadJob("bad_seed", job_id, reply)
    if not all(isinstance(t, (int, float)) and math.isfinite(t) for t in (asked, deadline)):
        raise BadJob("bad_time", job_id, reply)
    if not isinstance(view, dict):
        raise BadJob("bad_view", job_id, reply)
    return job_id, reply, Job(kind, level, view, seed, float(asked), float(deadline))


def pack_answer(job_id: str, answer: Answer) -> bytes:
    return bytes(
        msgpack.packb(
            {
                "id": job_id,
                "move": list(answer.move) if answer.move is not None else None,
                "hint": answer.hint,
                "fallback": answer.fallback,
                "started": answer.started,
                "took": answer.took,
            }
        )
    )


def read_answer(raw: bytes) -> tuple[str, Answer]:
    """(job id, answer); ValueError if the bytes are not one. A move's legality is the room's
    to judge (``bot_moved``), like any move."""
    try:
        fields: Any = msgpack.unpackb(raw, raw=False)
        job_id, move, hint = fields["id"], fields["move"], fields["hint"]
        fallback, started, took = fields["fallback"], fields["started"], fields["took"]
    except Exception as e:
        raise ValueError("not an answer") from e
    if not isinstance(job_id, str) or not isinstance(started, (int, float)):
        raise ValueError("not an answer")
    if not isinstance(took, (int, float)) or not (fallback is None or isinstance(fallback, str)):
        raise ValueError("not an answer")
    if hint is not None and not isinstance(hint, dict):
        raise ValueError("not an answer")
    return job_id, Answer(_move(move), hint, fallback, float(started), float(took))


def _move(value: Any) -> Move | None:
    if value is None:
        return None
    if isinstance(value, list) and len(value) == 2 and value[0] in MOVE_KINDS:
        kind, arg = value
        if isinstance(arg, MOVE_KINDS[kind]) and not isinstance(arg, bool):
            return kind, arg
    raise ValueError(f"not a move: {value!r}")
