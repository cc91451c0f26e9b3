"""The `regbot` command line; `main` is the console entry point (`python -m bot.cli` runs it too)."""

from bot.cli.cli import main

__all__ = ["main"]
