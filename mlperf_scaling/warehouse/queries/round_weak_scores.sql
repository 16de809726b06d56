-- The weak-scaling score rows of one round (MLPerf HPC), with the host processors their systems state, how long their
-- instances took on average, and how many instances the submitter pruned (reported in rejections, not read as runs).
select
    s.round, s.suite, s.submitter, s.system, s.benchmark, s.benchmark_canonical, s.division, s.status, s.status_reason,
    s.accelerator_model_name, s.accelerators, y.host_processor_model_name,
    y.host_processors_per_node * y.number_of_nodes as host_processors,
    s.number_of_models, s.instance_scale, s.time_to_train_all_min, s.models_per_minute, s.n_runs,
    r.mean_instance_min,
    (select count(*) from rejections j
     where j.round = s.round
       and starts_with(j.path, s.submitter || '/results/' || s.system || '/weak/' || s.benchmark || '/pruned_results/'))::bigint as n_pruned
from scores s
left join systems y using (round, submitter, system)
left join (
    select submitter, system, benchmark, avg(time_to_train_min) filter (where is_valid) as mean_instance_min
    from runs
    where round = $round and scaling_mode = 'weak'
    group by submitter, system, benchmark
) r using (submitter, system, benchmark)
where s.round = $round and s.scaling_mode = 'weak'
order by s.benchmark, s.submitter, s.system
