"""docs/operations.md's recipe for the Prefect UI, run as written (on ports of its own, one round): a served Prefect API
with its UI, `mlperf-scaling serve`, `prefect deployment run`. Then what an operator meets there: the run Completed, a
second `run` with nothing new shown as a flow run of its own, and the report's link in the UI opening the report in a
browser."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import urllib.request
from contextlib import ExitStack

from conftest import PROJECT, SHARED_MLPERF, archive
from served import answers, free_port, started, wait_for

ROUND = "v0.5"  # the smallest shipped round


def _recipe() -> list[str]:
    """The commands of the recipe under 'Watching it in the Prefect UI', without their comments."""
    text = (PROJECT / "docs" / "operations.md").read_text(encoding="utf-8")
    section = text[text.index("## Watching it in the Prefect UI"):]
    block = section[section.index("```bash") + len("```bash"):section.index("```", section.index("```bash") + 7)]
    return [line.split(" #")[0].strip() for line in block.strip().splitlines()]


def _command(line: str) -> list[str]:
    """A recipe line's command, run with this interpreter: `python3 -m uv run X` is X in this environment."""
    words = shlex.split(line)
    assert words[:4] == ["python3", "-m", "uv", "run"], line
    program = {"prefect": ["-m", "prefect"], "mlperf-scaling": ["-m", "mlperf_scaling.cli"]}[words[4]]
    return [sys.executable, *program, *words[5:]]


def _api(url: str, path: str, body: dict) -> list[dict]:
    request = urllib.request.Request(f"{url}/{path}", data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)


def _pipeline_runs(api: str) -> list[dict]:
    """The top-level runs of the pipeline flow, newest first."""
    flows = _api(api, "flows/filter", {"flows": {"name": {"any_": ["mlperf-pipeline"]}}})
    return _api(api, "flow_runs/filter", {"flows": {"id": {"any_": [f["id"] for f in flows]}}, "sort": "EXPECTED_START_TIME_DESC",
                                          "flow_runs": {"parent_task_run_id": {"is_null_": True}}})


def test_the_operations_recipe_runs_as_written_and_the_ui_leads_to_the_report(tmp_path, browser):
    archive(ROUND)  # fails loudly when the round is absent
    lines = _recipe()
    server, exports, serving, running = lines[0], [line for line in lines if line.startswith("export ")], lines[-2], lines[-1]
    assert _command(server)[-4:] == ["server", "start", "--host", "127.0.0.1"] and _command(serving)[-1] == "serve"
    assert running.endswith("prefect deployment run mlperf-pipeline/pipeline-serve")
    logs = tmp_path / "logs"
    logs.mkdir()
    port, reports_port = free_port(), free_port()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "MLPERF_"))}
    base |= {"PREFECT_HOME": str(tmp_path / "prefect-home"), "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
             "PREFECT_API_BLOCKS_REGISTER_ON_START": "false", "PREFECT_UI_API_URL": f"http://127.0.0.1:{port}/api"}
    env = dict(base)
    for line in exports:  # as written, with this test's port and mirror
        for word in shlex.split(line)[1:]:
            name, _, value = word.partition("=")
            env[name] = value.replace(":4200", f":{port}").replace("../shared/mlperf", str(SHARED_MLPERF))
    assert env["PREFECT_API_URL"] == f"http://127.0.0.1:{port}/api" and env["MLPERF_OFFLINE"] == "1"
    # one round, the warehouse and reports in this test's folder, the reports on a port of its own
    env |= {"MLPERF_ROUNDS": ROUND, "MLPERF_WAREHOUSE": str(tmp_path / "w.duckdb"), "MLPERF_REPORTS": str(tmp_path / "reports"),
            "MLPERF_REPORTS_ADDRESS": f"127.0.0.1:{reports_port}", "PREFECT_RUNNER_POLL_FREQUENCY": "2"}
    api = env["PREFECT_API_URL"]
    with ExitStack() as stack:
        started(stack, [*_command(server), "--port", str(port)], tmp_path, base, logs / "api.log")
        wait_for("the Prefect API", lambda: answers(f"{api}/health"), 180, logs)
        served = started(stack, _command(serving), tmp_path, env, logs / "serve.log")
        wait_for("mlperf-scaling serve", lambda: b"serving deployments" in (logs / "serve.log").read_bytes() or served.poll() is not None,
                  120, logs)
        assert served.poll() is None, (logs / "serve.log").read_text()
        assert f"at http://127.0.0.1:{reports_port}/" in (logs / "serve.log").read_text()
        asked = subprocess.run(_command(running), env=env, capture_output=True, text=True, timeout=120)
        assert asked.returncode == 0, asked.stdout + asked.stderr
        flow_run = re.search(r"UUID: ([0-9a-f-]{36})", asked.stdout).group(1)

        def ended() -> bool:
            state = _api(api, "flow_runs/filter", {"flow_runs": {"id": {"any_": [flow_run]}}})[0]["state"]
            return state["type"] in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED")

        wait_for("the deployment's run", ended, 600, logs)
        (done,) = _api(api, "flow_runs/filter", {"flow_runs": {"id": {"any_": [flow_run]}}})
        assert done["state"]["type"] == "COMPLETED", done["state"]
        assert done["state"]["message"] == f"mlperf-pipeline: 1 of 1 rounds loaded and published ({ROUND})"

        # a second run from the command line, with nothing new: a flow run of its own that says so
        again = subprocess.run([sys.executable, "-m", "mlperf_scaling.cli", "run"], cwd=tmp_path, env=env, capture_output=True,
                               text=True, timeout=300)
        assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
        runs = _pipeline_runs(api)
        assert len(runs) == 2 and runs[0]["id"] != flow_run
        assert runs[0]["state"]["type"] == "COMPLETED"
        assert runs[0]["state"]["message"] == f"mlperf-pipeline: nothing new: 1 round checked ({ROUND}), already loaded at the same version"

        # the report's artifact in the UI: its link opens the report, served by `serve`
        (artifact,) = _api(api, "artifacts/filter", {"artifacts": {"key": {"any_": ["report-v0-5"]}}})
        assert artifact["data"] == f"[MLPerf Training {ROUND}: report](http://127.0.0.1:{reports_port}/{ROUND}/index.html)"
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"http://127.0.0.1:{port}/artifacts/artifact/{artifact['id']}", wait_until="networkidle")
        link = page.locator(f"a[href^='http://127.0.0.1:{reports_port}/']").first
        link.wait_for(timeout=60_000)
        with page.context.expect_page() as opened:  # the UI opens links to other sites in a new tab
            link.click()
        report = opened.value
        report.wait_for_load_state("load")
        assert report.url == f"http://127.0.0.1:{reports_port}/{ROUND}/index.html"
        assert report.title() == f"MLPerf Training {ROUND}: how many accelerators?"
        assert report.locator("img").count() >= 10  # its plots, from the same server
