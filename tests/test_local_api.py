"""The temporary API: Prefect's own application, with its SQLite writers queued for the lock rather than refused."""

from __future__ import annotations

import asyncio

import sqlalchemy as sa
from prefect.server.database.configurations import AioSqliteConfiguration

from mlperf_scaling.flows.api_app import ImmediateSqliteConfiguration


def _read_then_write_twice(configuration: type[AioSqliteConfiguration], path) -> list[str]:
    """Two transactions as the server runs them: each reads, then writes; the second reads before the first writes."""

    async def run() -> list[str]:
        config = configuration(connection_url=f"sqlite+aiosqlite:///{path}")
        engine = await config.engine()
        async with engine.begin() as connection:
            await connection.execute(sa.text("create table runs (n integer)"))
        first_read, second_read, first_done = asyncio.Event(), asyncio.Event(), asyncio.Event()

        async def transaction(n: int) -> str:
            session = await config.session(engine)
            try:
                async with session, config.begin_transaction(session):
                    if n == 2:
                        await first_read.wait()
                    await session.execute(sa.text("select count(*) from runs"))
                    if n == 1:
                        first_read.set()
                        try:  # an IMMEDIATE second transaction waits for this one: it cannot read before it ends
                            await asyncio.wait_for(second_read.wait(), 1.0)
                        except TimeoutError:
                            pass
                    else:
                        second_read.set()
                        await first_done.wait()
                    await session.execute(sa.text("insert into runs values (:n)"), {"n": n})
                return "written"
            except sa.exc.OperationalError as exc:
                return str(exc.orig)
            finally:
                if n == 1:
                    first_done.set()

        try:
            return list(await asyncio.gather(transaction(1), transaction(2)))
        finally:
            await engine.dispose()

    return asyncio.run(run())


def test_two_writers_at_once_are_queued_not_refused(tmp_path):
    # Prefect's own configuration: the second writer is refused at once, which the API answers with a 503 and the
    # client with 2-4 s of waiting before it tries again
    assert _read_then_write_twice(AioSqliteConfiguration, tmp_path / "prefect.db") == ["written", "database is locked"]
    assert _read_then_write_twice(ImmediateSqliteConfiguration, tmp_path / "temporary.db") == ["written", "written"]


def test_the_temporary_api_runs_prefects_application_on_that_configuration(prefect_isolated):
    import os
    from pathlib import Path

    port = os.environ["PREFECT_API_URL"].rsplit(":", 1)[1].split("/")[0]  # the tests' own temporary API
    commands = []
    for path in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            commands.append(path.read_bytes().split(b"\0"))
        except OSError:  # a process that ended meanwhile
            continue
    served = [command for command in commands if b"uvicorn" in command and port.encode() in command]
    assert served and all(b"mlperf_scaling.flows.api_app:create_app" in command for command in served)


def test_a_booted_temporary_api_runs_five_steps_below_the_command():
    """Once it answers, the server mostly records what the runs sent: the reading and the analysis go first."""
    import os
    import subprocess
    import sys

    from mlperf_scaling.flows.local_api import lower_priority

    server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        lower_priority(server.pid)
        assert os.getpriority(os.PRIO_PROCESS, server.pid) == min(19, os.getpriority(os.PRIO_PROCESS, 0) + 5)
    finally:
        server.kill()
        server.wait()


_FLOW_SAYS_ITS_HEARTBEAT = """
from prefect import flow
from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, get_current_settings, temporary_settings
from mlperf_scaling.flows.local_api import local_runs

@flow
def heartbeat() -> object:
    return get_current_settings().flows.heartbeat_frequency

with local_runs(None):
    print(heartbeat())
with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: 60}), local_runs(None):  # as a profile sets it
    print(heartbeat())
"""


def test_a_command_on_a_served_api_sends_heartbeats_only_when_the_user_asks(prefect_isolated):
    """Prefect's default heartbeat costs every flow run up to a second as it ends; set by the user, it is theirs."""
    import os
    import subprocess
    import sys

    environment = {name: value for name, value in os.environ.items() if "HEARTBEAT" not in name}
    done = subprocess.run([sys.executable, "-c", _FLOW_SAYS_ITS_HEARTBEAT], env=environment, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # the tests' API is a served one here (PREFECT_API_URL is set); Prefect's own default would be 180
    assert done.stdout.split()[-2:] == ["None", "60"]
