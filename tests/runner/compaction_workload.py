"""A workload that passes the API's minimum compaction trigger (50,000 tokens): a sweep of 16
files of ~3,800 tokens each, read by the emulator's default model, with a compaction profile."""

from __future__ import annotations

from pathlib import Path

FILES = 16
PROFILE = """
model = "claude-sonnet-5"
max_turns = 120
[memory]
root = "mem"
[tools]
workspace_root = "ws"
[context_editing.tool_uses]
enabled = false
[context_editing.compaction]
enabled = true
trigger = 50000
pause_after_compaction = {pause}
"""
TASK = "# Sweep\n\nRead every file and collect every FINDING line. Answer with the list.\n"


def setup(folder: Path, pause: bool) -> tuple[Path, Path]:
    (folder / "ws").mkdir()
    for i in range(FILES):
        lines = [f"entry {n}: shard replica queue worker batch lease {i}" for n in range(240)]
        lines.insert(150, f"FINDING {i:02d}: item {i * 7} confirmed")
        (folder / "ws" / f"log-{i:02d}.txt").write_text("\n".join(lines) + "\n")
    profile = folder / "p.toml"
    profile.write_text(PROFILE.format(pause=str(pause).lower()))
    task = folder / "task.md"
    task.write_text(TASK)
    return profile, task
