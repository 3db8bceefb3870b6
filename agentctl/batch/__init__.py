"""Many tasks at once: `read_source` (a folder, glob or JSONL) -> `run_tasks` on worker threads,
each task a normal run (runner.plan_new / execute) on an executor (this process, or Ray);
results in a folder (batch.folder). `run_batch` (batch.launch) is the whole batch in one call;
`plan_batch` takes the one `BatchRequest` (a `BatchSpec` and where it goes) that `agentctl
batch` and `run_batch` build.
"""

from __future__ import annotations

from agentctl.batch.folder import BatchSpec, ResultsStore, create, load_spec, new_out_dir
from agentctl.batch.launch import (
    BatchRequest,
    BatchResult,
    Prepared,
    new_spec,
    plan_batch,
    prepare,
    run_batch,
    start,
)
from agentctl.batch.scheduler import BatchReport, run_tasks
from agentctl.batch.source import BatchTask, read_source
from agentctl.batch.summary import Summary, summarize, summary_lines
from agentctl.batch.task_run import Budget

__all__ = [
    "BatchReport",
    "BatchRequest",
    "BatchResult",
    "BatchSpec",
    "BatchTask",
    "Budget",
    "Prepared",
    "ResultsStore",
    "Summary",
    "create",
    "load_spec",
    "new_out_dir",
    "new_spec",
    "plan_batch",
    "prepare",
    "read_source",
    "run_batch",
    "run_tasks",
    "start",
    "summarize",
    "summary_lines",
]
