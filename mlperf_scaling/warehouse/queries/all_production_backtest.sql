-- The production estimate's backtest on public production runs (each organisation, and each architecture, left out).
select *
from production_backtest
order by all
