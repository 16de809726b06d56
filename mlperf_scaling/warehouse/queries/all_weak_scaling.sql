-- Every MLPerf HPC weak-scaling result the analysis read, newest round first.
select *
from weak_scaling
order by benchmark_canonical, round desc, accelerator_group, unit_hours_per_model
