-- Every round's result_context rows.
select *
from result_context
order by all
