"""agentctl: a command-line runner for long-running Claude agents."""

__version__ = "0.1.0"
