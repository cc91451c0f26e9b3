"""`Runtime`: what the server holds for its lifetime, in a module of its own so that the routes built on it
(`bot.server.lifecycle`, `bot.report.admin`) and the server that builds it never import one another."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.app import Components
from bot.config import Settings
from bot.report.recorder import TurnRecorder
from bot.service.metrics import Metrics
from bot.service.service import BotService
from bot.state import StateStores


@dataclass
class Runtime:
    """What the server holds for its lifetime: components, the service, state, metrics and adapters."""

    settings: Settings
    components: Components
    store: StateStores
    metrics: Metrics
    service: BotService
    adapters: list = field(default_factory=list)
    recorder: TurnRecorder | None = None
