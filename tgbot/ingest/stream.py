"""Durable ingest (docs/DESIGN.md, Processes): one Lua script stores updates in the bot's stream before
Telegram is told they arrived, skipping an id among the last :data:`RECENT_UPDATES`."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["ACKNOWLEDGED_MAX", "GROUP", "RECENT_UPDATES", "Entry", "Ingest"]

#: Update ids remembered to skip a repeated delivery.
RECENT_UPDATES = 10_000
#: The consumer group every active process reads the stream with.
GROUP = "bot"
#: A stream entry read: its id and the update as Telegram sent it.
Entry = tuple[str, dict[str, Any]]

# KEYS: 1 the stream, 2 the recent update ids (sorted set), 3 the next getUpdates offset, 4 the
# lease. ARGV: 1 the lease's value as held ('': no check, webhook), 2 the new offset ('': none),
# 3 the consumer that takes the new entries ('': none), 4 the number k of entries processed, then
# their k ids (acknowledged and deleted), then update id and JSON pairs. Returns nil when the lease
# is not held (nothing written), else the entries the consumer took as id, payload pairs: an entry
# of this batch as '#' and its update id (the caller has it parsed), another as its JSON.
_INGEST = f"""
if ARGV[1] ~= '' and redis.call('GET', KEYS[4]) ~= ARGV[1] then return false end
local processed = tonumber(ARGV[4])
if processed > 0 then
  redis.call('XACK', KEYS[1], '{GROUP}', unpack(ARGV, 5, 4 + processed))
  redis.call('XDEL', KEYS[1], unpack(ARGV, 5, 4 + processed))
end
local added = {{}}
for i = 5 + processed, #ARGV, 2 do
  if not redis.call('ZSCORE', KEYS[2], ARGV[i]) then
    redis.call('ZADD', KEYS[2], ARGV[i], ARGV[i])
    added[redis.call('XADD', KEYS[1], '*', 'update', ARGV[i + 1])] = ARGV[i]
  end
end
if redis.call('ZCARD', KEYS[2]) > {RECENT_UPDATES} then
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -{RECENT_UPDATES + 1})
end
if ARGV[2] ~= '' then redis.call('SET', KEYS[3], ARGV[2]) end
local taken = {{}}
if ARGV[3] == '' then return taken end
local read = redis.call('XREADGROUP', 'GROUP', '{GROUP}', ARGV[3], 'STREAMS', KEYS[1], '>')
-- one stream's reply: {{{{key, entries}}}}, or nil when none is new (fakeredis: {{key, entries}})
for _, entry in ipairs(read and (read[2] or read[1][2]) or {{}}) do
  taken[#taken + 1] = entry[1]
  taken[#taken + 1] = added[entry[1]] and ('#' .. added[entry[1]]) or entry[2][2]
end
return taken
"""
#: Entries acknowledged by one write, at most (Lua's ``unpack`` has a stack limit).
ACKNOWLEDGED_MAX = 1000


class Ingest:
    """Writes updates to the stream. ``keys``: the stream, the recent ids, the offset, the lease
    (one Cluster slot: they share the tag ``{b<bot>}``)."""

    def __init__(self, redis: Any, keys: tuple[str, str, str, str]) -> None:
        self.redis = redis
        self.stream, self.offset_key = keys[0], keys[2]
        self._keys = list(keys)
        self._ingest = redis.register_script(_INGEST)

    async def polled(
        self, updates: list[dict[str, Any]], lease_value: str, offset: int, consumer: str, processed: list[str]
    ) -> list[Entry] | None:
        """Store a ``getUpdates`` batch with its offset while the lease is ``lease_value``, acknowledge
        the ``processed`` ids and read the new entries as ``consumer``, in one round trip. ``None``
        when the lease is not held (nothing written)."""
        parsed = {int(update["update_id"]): update for update in updates}
        reply = await self._ingest(
            keys=self._keys, args=[lease_value, offset, consumer, len(processed), *processed, *_pairs(updates)]
        )
        if reply is None:
            return None
        return [
            (entry_id, parsed[int(payload[1:])] if payload.startswith("#") else json.loads(payload))
            for entry_id, payload in zip(reply[::2], reply[1::2], strict=True)
        ]

    async def pushed(self, update: dict[str, Any]) -> None:
        """Store one update received by the webhook (any process may)."""
        await self._ingest(keys=self._keys, args=["", "", "", 0, *_pairs([update])])

    async def offset(self) -> int:
        """The ``getUpdates`` offset after the last stored batch (0 before the first)."""
        return int(await self.redis.get(self.offset_key) or 0)


def _pairs(updates: list[dict[str, Any]]) -> list[Any]:
    """The script's (update id, JSON) arguments."""
    pairs: list[Any] = []
    for update in updates:
        pairs += [int(update["update_id"]), json.dumps(update, ensure_ascii=False, separators=(",", ":"))]
    return pairs
