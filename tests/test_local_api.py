"""The temporary API: Prefect's own server, started by its public command beside the imports, at a lower priority once
booted; heartbeats only when the user asks for them."""

from __future__ import annotations


def test_the_temporary_api_is_prefects_own_server_started_by_its_public_command(prefect_isolated):
    import os
    from pathlib import Path

    port = os.environ["PREFECT_API_URL"].rsplit(":", 1)[1].split("/")[0]  # the tests' own temporary API
    commands = []
    for path in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            commands.append(path.read_bytes().split(b"\0"))
        except OSError:  # a process that ended meanwhile
            continue
    served = [command for command in commands if port.encode() in command and b"prefect" in command]
    assert served and all(command[1:5] == [b"-m", b"prefect", b"server", b"start"] and b"--no-ui" in command for command in served)


def test_a_booted_temporary_api_runs_five_steps_below_the_command():
    """Once it answers, the server mostly records what the runs sent: the reading and the analysis go first."""
    import os
    import subprocess
    import sys

    from mlperf_scaling.runtime.local_api import lower_priority

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
from mlperf_scaling.runtime.local_api import local_runs

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
