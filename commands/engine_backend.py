"""Moved to commands/backends/engine.py. This name stays only while cli/console_consumer.py
imports EngineBackend from it; delete it once that import names pk.commands.backends.engine."""

from .backends.engine import EngineBackend

__all__ = ["EngineBackend"]
