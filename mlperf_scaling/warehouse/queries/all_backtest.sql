-- Every backtest case of every round: how often the planner's stated interval held, per model.
select *
from plan_backtest
order by round, benchmark, accelerator_group, accelerators, model
