"""The Slack adapter: `SlackAdapter` serves events, the slash command and buttons (HTTP or Socket Mode).

Everything else in this package is internal: blocks (Block Kit), streaming (native stream and
chat.update writers), sanitize (reading user text; posting follows adapters.text), history (thread rebuild), labels.
"""

from adapters.slack.app import SlackAdapter

__all__ = ["SlackAdapter"]
