"""Many tasks at once: `read_source` (a folder, glob or JSONL) -> `run_batch` on worker threads,
each task a normal run (runner.plan_new / execute); results in a folder (batch.store).

Not here yet: `--via batches` (the Message Batches API) and `--executor ray`.
"""

from __future__ import annotations

from agentctl.batch.scheduler import BatchReport, Budget, run_batch
from agentctl.batch.source import BatchTask, read_source
from agentctl.batch.store import BatchSpec, ResultsStore, create, load_spec, new_out_dir
from agentctl.batch.summary import Summary, summarize, summary_lines

__all__ = [
    "BatchReport",
    "BatchSpec",
    "BatchTask",
    "Budget",
    "ResultsStore",
    "Summary",
    "create",
    "load_spec",
    "new_out_dir",
    "read_source",
    "run_batch",
    "summarize",
    "summary_lines",
]
