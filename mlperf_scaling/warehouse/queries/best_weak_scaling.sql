-- Per MLPerf HPC workload and accelerator group, the weak-scaling result with the fewest hours per model, from the
-- newest round that measured one: the instance scale that pays, for the front page.
select *
from weak_scaling
where is_cheapest_per_model
qualify row_number() over (
    partition by benchmark_canonical, accelerator_group
    order by string_split(regexp_replace(round, '^hpc-v', ''), '.')[1]::int desc,
             string_split(regexp_replace(round, '^hpc-v', ''), '.')[2]::int desc) = 1
order by benchmark_canonical, accelerator_group
