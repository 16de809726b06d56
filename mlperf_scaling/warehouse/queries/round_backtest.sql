-- The planner's backtest of one round: every count left out and predicted, by model.
select *
from plan_backtest
where round = $round
order by benchmark, accelerator_group, accelerators, model
