-- The cross-benchmark backtest of the planner for a model that is not a benchmark.
select *
from transfer_backtest
order by all
