-- Every MLPerf HPC weak-scaling result the analysis read, with whether it is a copy of an earlier round's.
select w.*, coalesce(c.is_carried_over, false) as is_carried_over
from weak_scaling w
left join carried_over c
    on c.round = w.round and c.submitter = w.submitter and c.system = w.system and c.benchmark = w.benchmark
    and c.scaling_mode = 'weak'
order by w.benchmark_canonical, w.accelerator_group, w.unit_hours_per_model
