"""TOML profiles: typed settings, loading, validation and writing (see docs/profile.md)."""
