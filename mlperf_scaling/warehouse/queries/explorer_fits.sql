-- The comparable groups with a fitted Amdahl curve ($round: one round, or null for every round), and the efficiency
-- rows it was fitted on: the explorer draws each group's curve and band from them (the benchmark: the round's other
-- groups set the band's level).
select e.round, e.benchmark_canonical, e.accelerator_group, e.benchmark, e.submitter, e.accelerators, e.time_to_train_min
from efficiency e
join scaling_fits f using (round, benchmark, accelerator_group)
where f.model = 'amdahl' and f.status = 'fitted' and ($round is null or e.round = $round)
order by e.round, e.benchmark_canonical, e.accelerator_group, e.accelerators, e.time_to_train_min
