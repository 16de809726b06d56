-- Every score row of every round, for the cross-round view.
select *
from scores
order by round, benchmark, submitter, system
