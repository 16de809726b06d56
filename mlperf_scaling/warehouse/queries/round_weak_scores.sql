-- The weak-scaling score rows of one round (MLPerf HPC), with the instance counts their runs state.
select s.*, r.n_instances_logged, r.mean_instance_min, r.instance_scale_logged
from scores s
left join (
    select submitter, system, benchmark,
        count(*) as n_instances_logged,
        avg(time_to_train_min) filter (where is_valid) as mean_instance_min,
        max(logged_instance_scale) as instance_scale_logged
    from runs
    where round = $round and scaling_mode = 'weak'
    group by submitter, system, benchmark
) r using (submitter, system, benchmark)
where s.round = $round and s.scaling_mode = 'weak'
order by benchmark, submitter, system
