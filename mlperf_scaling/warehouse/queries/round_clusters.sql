-- The cluster rows of one round.
select *
from clusters
where round = $round
order by benchmark, submitter, system
