"""A batch's settings are defined once (`BatchSpec`); a request is a spec plus where it goes,
with "not given" (0 or "") resolved once: defaults for a new batch, the saved value on a resume."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from agentctl.batch import BatchRequest, BatchSpec, plan_batch, run_batch
from agentctl.batch.folder import load_spec
from agentctl.errors import UsageError


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")


def source(tmp_path: Path, tasks: int = 3) -> str:
    path = tmp_path / "src" / "tasks.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps({"id": f"t{i}", "task": "hi"}) + "\n" for i in range(tasks)))
    return str(path)


def test_the_request_adds_only_where_the_batch_goes() -> None:
    spec = {f.name for f in dataclasses.fields(BatchSpec)}
    request = {f.name for f in dataclasses.fields(BatchRequest)}
    assert request - spec == {"out", "resume", "max_turns"}
    asked = BatchRequest("s", parallel=2, out="o", resume=None, max_turns=4)
    assert type(asked.spec()) is BatchSpec
    assert asked.spec().parallel == 2 and "out" not in asked.spec().to_json()


def test_settings_not_given_take_their_defaults_once() -> None:
    assert BatchSpec().resolved(5) == BatchSpec(parallel=1, executor="local", via="messages")
    assert BatchSpec(via="batches").resolved(5).parallel == 5  # every task in each round
    assert BatchSpec(via="batches").resolved(0).parallel == 1
    given = BatchSpec(parallel=2, executor="ray", via="batches")
    assert given.resolved(9) == given


def test_a_new_batch_saves_resolved_settings(tmp_path: Path) -> None:
    ready = plan_batch(BatchRequest(source(tmp_path), offline=True, out=tmp_path / "out"))
    ready.lock.release()
    saved = json.loads((tmp_path / "out" / "batch.json").read_text())
    assert (saved["parallel"], saved["executor"], saved["via"]) == (1, "local", "messages")
    assert "out" not in saved and "max_turns" not in saved


def test_a_resume_keeps_what_it_does_not_change(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = plan_batch(BatchRequest(source(tmp_path), offline=True, out=out, parallel=3))
    first.lock.release()
    again = plan_batch(BatchRequest(resume=out, max_usd=2.0))
    again.lock.release()
    assert (again.spec.parallel, again.spec.executor, again.spec.max_usd) == (3, "local", 2.0)
    changed = plan_batch(BatchRequest(resume=out, parallel=1))
    changed.lock.release()
    assert changed.spec.parallel == 1


def test_a_batches_batch_runs_every_task_in_each_round(tmp_path: Path) -> None:
    asked = BatchRequest(source(tmp_path, 4), offline=True, out=tmp_path / "out", via="batches")
    ready = plan_batch(asked)
    ready.lock.release()
    assert (ready.spec.parallel, ready.spec.via) == (4, "batches")


def saved(tmp_path: Path, **settings: object) -> Path:
    spec = {**BatchSpec(source="s").resolved(1).to_json(), **settings}
    (tmp_path / "batch.json").write_text(json.dumps(spec))
    return tmp_path


@pytest.mark.parametrize("name", [f.name for f in dataclasses.fields(BatchSpec)])
def test_every_setting_is_checked_in_a_manifest_read_back(tmp_path: Path, name: str) -> None:
    """The manifest check is read from BatchSpec's fields: a setting added there is checked."""
    with pytest.raises(UsageError) as caught:
        load_spec(saved(tmp_path, **{name: {"an": "object"}}))
    assert str(caught.value).startswith(f"{tmp_path / 'batch.json'}: {name}: {{'an': 'object'}} ")


@pytest.mark.parametrize(
    ("settings", "why"),
    [
        ({"source": None}, "source: None is not str"),  # a saved spec has a source
        ({"profile": 3}, "profile: 3 is not str or NoneType"),
        ({"max_usd": "x"}, "max_usd: 'x' is not int or float or NoneType"),
        ({"parallel": True}, "parallel: True is not int"),
        ({"parallel": 0}, "parallel: must be at least 1"),
        ({"sets": ["a=1", 2]}, "sets: must be a list of KEY=VALUE strings"),
        ({"via": ""}, "via: '': use messages or batches"),
        ({"memory": "both"}, "memory: 'both': use isolated or shared"),
    ],
)
def test_a_manifest_names_what_is_wrong(
    tmp_path: Path, settings: dict[str, object], why: str
) -> None:
    with pytest.raises(UsageError, match="^" + re.escape(f"{tmp_path / 'batch.json'}: {why}; ")):
        load_spec(saved(tmp_path, **settings))


def test_a_manifest_of_good_settings_reads_back(tmp_path: Path) -> None:
    spec = BatchSpec(source="s", sets=("a=1",), max_usd=2, address="ray://h").resolved(1)
    assert load_spec(saved(tmp_path, **spec.to_json())) == spec


@pytest.mark.slow
def test_on_ready_sees_the_checked_batch_before_any_task_starts(tmp_path: Path) -> None:
    seen: list[object] = []
    done = run_batch(
        source(tmp_path, tasks=2),
        offline=True,
        out=tmp_path / "out",
        on_ready=lambda ready: seen.append((ready.todo, ready.spec.parallel, ready.resumed)),
        on_event=lambda event: seen.append(type(event).__name__),
    )
    assert seen[0] == (2, 1, False) and "TaskStarted" in seen[1:]
    assert done.summary.counts["ok"] == 2


@pytest.mark.slow
def test_a_failing_on_ready_runs_nothing_and_leaves_the_folder_free(tmp_path: Path) -> None:
    def refuse(_ready: object) -> None:
        raise RuntimeError("no")

    out = tmp_path / "out"
    with pytest.raises(RuntimeError):
        run_batch(source(tmp_path, tasks=1), offline=True, out=out, on_ready=refuse)
    results = out / "results.jsonl"
    assert not results.exists() or results.read_text() == ""
    assert len(run_batch(resume=out).results) == 1  # not locked by the call that failed
