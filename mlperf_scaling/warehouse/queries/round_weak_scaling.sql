-- The weak-scaling analysis of one round (MLPerf HPC): what each model cost, and whether the instance scale pays.
select *
from weak_scaling
where round = $round
order by benchmark, accelerator_group, unit_hours_per_model, submitter, system
