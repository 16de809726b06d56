-- Per benchmark and comparable accelerator group, the recommendation of the round that measured it best, with why the
-- efficiency it quotes is above 1 where it is (the best system's efficiency_note at the recommended count) and the
-- energy of a training run there, where that system's power was measured.
select r.*, e.efficiency_note, e.energy_kj
from best_recommendations r
left join efficiency e
    on e.round = r.round and e.benchmark = r.benchmark and e.accelerator_group = r.accelerator_group
    and e.accelerators = r.accelerators and e.submitter || '/' || e.system = r.best_system
order by r.benchmark_canonical, r.accelerator_group
