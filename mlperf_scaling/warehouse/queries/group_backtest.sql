-- The planner's backtest of one comparable group of one round's benchmark.
select *
from plan_backtest
where round = $round and benchmark = $benchmark and accelerator_group = $accelerator_group
order by accelerators, model
