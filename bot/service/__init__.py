"""The bot service behind every adapter (`BotService`), with its limits, scopes and metrics."""
