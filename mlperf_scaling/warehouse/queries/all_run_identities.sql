-- What identifies each run across rounds: its bytes and its start and stop times, with its scaling mode.
select round, submitter, system, benchmark, scaling_mode, sha256, run_start_ms, run_stop_ms
from runs
order by round, path
