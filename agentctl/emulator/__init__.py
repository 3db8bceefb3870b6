"""Offline Messages API emulator: HTTP server, scripted model, faults (docs/emulator.md)."""
