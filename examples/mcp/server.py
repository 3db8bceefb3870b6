"""A small MCP server for the example: unit conversions and a glossary, over stdio.

Written with the official `mcp` SDK (installed with agentctl). Run by agentctl as
`python server.py` (see agentctl.toml); nothing here reaches the network.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("units", log_level="ERROR")

# Factors to one base unit per dimension.
FACTORS = {
    "m": 1.0,
    "km": 1000.0,
    "mi": 1609.344,
    "ft": 0.3048,
    "kg": 1.0,
    "lb": 0.45359237,
}
DIMENSION = {
    "m": "length",
    "km": "length",
    "mi": "length",
    "ft": "length",
    "kg": "mass",
    "lb": "mass",
}
GLOSSARY = {
    "mile": "A unit of length equal to 1,609.344 metres (the international mile).",
    "pound": "A unit of mass equal to 0.45359237 kilograms (the avoirdupois pound).",
}


@server.tool()
def convert(value: float, from_unit: str, to_unit: str) -> str:
    """Convert a value between units of the same dimension (m, km, mi, ft, kg, lb)."""
    for unit in (from_unit, to_unit):
        if unit not in FACTORS:
            raise ToolError(f"unknown unit {unit!r}; known: {', '.join(FACTORS)}")
    if DIMENSION[from_unit] != DIMENSION[to_unit]:
        raise ToolError(f"cannot convert {DIMENSION[from_unit]} to {DIMENSION[to_unit]}")
    result = value * FACTORS[from_unit] / FACTORS[to_unit]
    return f"{value:g} {from_unit} = {result:.4f} {to_unit}"


@server.tool()
def define(term: str) -> str:
    """Look a unit up in a small glossary."""
    return GLOSSARY.get(term.lower(), f"no entry for {term!r}")


if __name__ == "__main__":
    server.run("stdio")
