"""Durable ingest (docs/DESIGN.md, Processes): one Lua script stores updates in the bot's stream before
Telegram is told they arrived, skipping an id stored within the last :data:`RECENT_SECONDS` (trimmed
by arrival: Telegram may restart its ids lower). A resent polled write returns what the first took;
an update that is no valid Unicode goes to the capped dead letters."""

from __future__ import annotations

import json
import logging
import secrets
from typing import Any

from tgbot import metrics
from tgbot.storage.keys import IngestKeys

__all__ = [
    "ACKNOWLEDGED_MAX",
    "DEAD_LETTERS_MAX",
    "GROUP",
    "RECENT_SECONDS",
    "RECENT_UPDATES",
    "Entry",
    "Ingest",
    "dead_letter_fields",
]

log = logging.getLogger(__name__)

#: Update ids remembered to skip a repeated delivery, at most.
RECENT_UPDATES = 10_000
#: Seconds an update id is remembered: Telegram keeps an update 24 hours at most, so no repeated
#: delivery comes later (https://core.telegram.org/bots/api#getting-updates), and after a quiet
#: week its ids restart anywhere.
RECENT_SECONDS = 25 * 3600
#: Dead letters kept (about; ``XADD … MAXLEN ~``).
DEAD_LETTERS_MAX = 1000
#: Seconds a polled write's reply is kept for a resend of it.
REPLY_KEPT = 60
#: The consumer group every active process reads the stream with.
GROUP = "bot"
#: A stream entry read: its id and the update as Telegram sent it.
Entry = tuple[str, dict[str, Any]]

# KEYS: IngestKeys. ARGV: 1 the lease's value as held ('': no check, webhook), 2 the new offset
# ('': none), 3 the consumer that takes the new entries ('': none), 4 this call's id ('': none), 5
# the number k of entries processed, then their k ids (acknowledged and deleted), then update id
# and payload pairs: the JSON, or '!' error '\n' JSON for a dead letter. Returns nil when the lease
# is not held (nothing written), else the entries the consumer took as id, payload pairs: an entry
# of this batch as '#' and its update id (the caller has it parsed), another as its JSON. A call
# whose id is the last one's (redis-py resent it: the reply was lost) returns the same entries.
_INGEST = f"""
if ARGV[1] ~= '' and redis.call('GET', KEYS[4]) ~= ARGV[1] then return false end
local call = ARGV[4]
if call ~= '' then
  local last = redis.call('GET', KEYS[6])
  if last and string.sub(last, 1, #call + 1) == call .. ' ' then
    local taken, kept = {{}}, {{}}
    for word in string.gmatch(string.sub(last, #call + 2), '%S+') do kept[#kept + 1] = word end
    for i = 1, #kept, 2 do
      local found = redis.call('XRANGE', KEYS[1], kept[i], kept[i])[1]
      if found then
        taken[#taken + 1] = kept[i]
        taken[#taken + 1] = kept[i + 1] ~= '-' and kept[i + 1] or found[2][2]
      end
    end
    return taken
  end
end
local processed = tonumber(ARGV[5])
if processed > 0 then
  redis.call('XACK', KEYS[1], '{GROUP}', unpack(ARGV, 6, 5 + processed))
  redis.call('XDEL', KEYS[1], unpack(ARGV, 6, 5 + processed))
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - {RECENT_SECONDS * 1000})
local added = {{}}
for i = 6 + processed, #ARGV, 2 do
  if not redis.call('ZSCORE', KEYS[2], ARGV[i]) then
    redis.call('ZADD', KEYS[2], now, ARGV[i])
    local payload = ARGV[i + 1]
    if string.sub(payload, 1, 1) == '!' then
      local cut = string.find(payload, '\\n', 2, true)
      redis.call('XADD', KEYS[5], 'MAXLEN', '~', {DEAD_LETTERS_MAX}, '*', 'update_id', ARGV[i],
        'error', string.sub(payload, 2, cut - 1), 'update', string.sub(payload, cut + 1))
    else
      added[redis.call('XADD', KEYS[1], '*', 'update', payload)] = ARGV[i]
    end
  end
end
if redis.call('ZCARD', KEYS[2]) > {RECENT_UPDATES} then
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -{RECENT_UPDATES + 1})
end
if ARGV[2] ~= '' then redis.call('SET', KEYS[3], ARGV[2]) end
local taken = {{}}
if ARGV[3] == '' then return taken end
local read = redis.call('XREADGROUP', 'GROUP', '{GROUP}', ARGV[3], 'STREAMS', KEYS[1], '>')
-- one stream's reply: {{{{key, entries}}}}, or nil when none is new (fakeredis: {{key, entries}} or {{}})
local kept = {{call}}
for _, entry in ipairs(read and (read[2] or (read[1] and read[1][2])) or {{}}) do
  local mark = added[entry[1]] and ('#' .. added[entry[1]])
  taken[#taken + 1] = entry[1]
  taken[#taken + 1] = mark or entry[2][2]
  kept[#kept + 1] = entry[1]
  kept[#kept + 1] = mark or '-'
end
if call ~= '' then redis.call('SET', KEYS[6], table.concat(kept, ' '), 'EX', {REPLY_KEPT}) end
return taken
"""
#: Entries acknowledged by one write, at most (Lua's ``unpack`` has a stack limit).
ACKNOWLEDGED_MAX = 1000


class Ingest:
    """Writes updates to the stream (the keys share one Cluster slot: the tag ``{b<bot>}``)."""

    def __init__(self, redis: Any, keys: IngestKeys) -> None:
        self.redis = redis
        self.keys = keys
        self.stream, self.offset_key = keys.stream, keys.offset
        self._ingest = redis.register_script(_INGEST)

    async def polled(
        self, updates: list[dict[str, Any]], lease_value: str, offset: int, consumer: str, processed: list[str]
    ) -> list[Entry] | None:
        """Store a ``getUpdates`` batch with its offset while the lease is ``lease_value``, acknowledge
        the ``processed`` ids and read the new entries as ``consumer``, in one round trip. ``None``
        when the lease is not held (nothing written)."""
        parsed = {int(update["update_id"]): update for update in updates}
        call = secrets.token_hex(8)  # (a resend by redis-py carries the same)
        reply = await self._ingest(
            keys=list(self.keys),
            args=[lease_value, offset, consumer, call, len(processed), *processed, *_pairs(updates)],
        )
        if reply is None:
            return None
        return [
            (entry_id, parsed[int(payload[1:])] if payload.startswith("#") else json.loads(payload))
            for entry_id, payload in zip(reply[::2], reply[1::2], strict=True)
        ]

    async def pushed(self, update: dict[str, Any]) -> None:
        """Store one update received by the webhook (any process may)."""
        await self._ingest(keys=list(self.keys), args=["", "", "", "", 0, *_pairs([update])])

    async def offset(self) -> int:
        """The ``getUpdates`` offset after the last stored batch (0 before the first)."""
        return int(await self.redis.get(self.offset_key) or 0)


def dead_letter_fields(update: dict[str, Any], error: BaseException | str) -> dict[str, str]:
    """A dead letter's fields: the update's id, the error and the update (JSON, ASCII: any text
    Telegram's could not be stored as UTF-8 is escaped)."""
    text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    return {
        "update_id": str(update.get("update_id")),
        "error": " ".join(text.encode("utf-8", "backslashreplace").decode().split()),
        "update": json.dumps(update, separators=(",", ":")),
    }


def _pairs(updates: list[dict[str, Any]]) -> list[Any]:
    """The script's (update id, payload) arguments; an update that is no valid Unicode (a lone
    surrogate: Redis takes UTF-8 only) is logged and made a dead letter."""
    pairs: list[Any] = []
    for update in updates:
        payload = json.dumps(update, ensure_ascii=False, separators=(",", ":"))
        try:
            payload.encode()
        except UnicodeEncodeError as error:
            log.error("update %s set aside: %s", update.get("update_id"), error)
            metrics.UPDATES_SET_ASIDE.labels(kind=metrics.update_kind(update)).inc()
            fields = dead_letter_fields(update, error)
            payload = f"!{fields['error']}\n{fields['update']}"
        pairs += [int(update["update_id"]), payload]
    return pairs
