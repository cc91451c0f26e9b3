"""The conversation key: where a conversation's history, lock, rate buckets and records are filed.

    slack:{team}:{channel}:{thread_ts}          a Slack thread (a DM's top-level message opens one)
    slack:{team}:{channel}:command:{id}         a slash command (one turn)
    teams:{tenant}:{conversation id}            a Teams chat or channel thread (the id carries `;messageid=`)
    web:{conversation id}                       a playground tab (ids are opaque tokens without `:`)

Keys are stored (Redis `history:{key}`, the salted hash in turn records), so this format is fixed: compose keys
with the constructors here and read them with `ConversationKey.parse`, which reads every key written before.
A key of no known platform (a test's `session-42`) reads as platform "other", with no workspace or channel.
"""

from __future__ import annotations

from dataclasses import dataclass

PLATFORMS = frozenset({"slack", "teams", "web", "cli"})


@dataclass(frozen=True, slots=True)
class ConversationKey:
    """One conversation's key (`text`, as stored) and what it says about where the conversation is."""

    text: str
    platform: str = "other"  # slack | teams | web | cli | other
    workspace: str = ""  # the Slack team or Teams tenant; "" for the playground
    channel: str = ""  # the Slack channel, or the Teams conversation without its thread part; "" elsewhere

    @classmethod
    def parse(cls, text: str) -> ConversationKey:
        """Read a stored key; never fails (what cannot be read stays "")."""
        parts = text.split(":", 2)
        if parts[0] not in PLATFORMS:
            return cls(text)
        platform = parts[0]
        if len(parts) < 3:
            return cls(text, platform)
        workspace, rest = parts[1], parts[2]
        channel = ""
        if platform == "slack":
            channel = rest.split(":", 1)[0]
        elif platform == "teams":
            channel = rest.split(";", 1)[0]
        return cls(text, platform, workspace, channel)

    @classmethod
    def slack(cls, team: str, channel: str, thread_ts: str) -> ConversationKey:
        return cls.parse(f"slack:{team}:{channel}:{thread_ts}")

    @classmethod
    def slack_command(cls, team: str, channel: str, command_id: str) -> ConversationKey:
        return cls.parse(f"slack:{team}:{channel}:command:{command_id}")

    @classmethod
    def teams(cls, tenant: str, conversation_id: str) -> ConversationKey:
        return cls.parse(f"teams:{tenant}:{conversation_id}")

    @classmethod
    def web(cls, conversation_id: str) -> ConversationKey:
        return cls.parse(f"web:{conversation_id}")

    def __str__(self) -> str:
        return self.text


__all__ = ["PLATFORMS", "ConversationKey"]
