"""The /memories file store: path guard, the six memory commands, limits, lock, journal."""
