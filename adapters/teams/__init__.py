"""Microsoft Teams adapter on the Microsoft 365 Agents SDK: activities in, streamed cited answers out.

Other packages import only `TeamsAdapter` (and its options) from here.
"""

from adapters.teams.app import MESSAGES_ROUTE, TeamsAdapter, TeamsRenderOptions

__all__ = ["MESSAGES_ROUTE", "TeamsAdapter", "TeamsRenderOptions"]
