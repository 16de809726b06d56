-- Per MLPerf HPC workload and accelerator group, the weak-scaling result with the fewest hours per model, among the
-- results first published in their round (a carried-over copy is its first round's result again): for the front page.
select w.*
from weak_scaling w
anti join carried_over c
    on c.round = w.round and c.submitter = w.submitter and c.system = w.system and c.benchmark = w.benchmark
    and c.scaling_mode = 'weak' and c.is_carried_over
qualify row_number() over (partition by w.benchmark_canonical, w.accelerator_group order by w.unit_hours_per_model, w.round) = 1
order by w.benchmark_canonical, w.accelerator_group
