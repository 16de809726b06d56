-- The model planner's backtest at counts it never saw.
select *
from scale_backtest
order by all
