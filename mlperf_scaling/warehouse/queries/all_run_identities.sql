-- What identifies each strong-scaling run across rounds: its bytes and its start and stop times.
select round, submitter, system, benchmark, sha256, run_start_ms, run_stop_ms
from runs
where scaling_mode = 'strong'
order by round, path
