-- The recommendations of one round.
select *
from recommendations
where round = $round
order by benchmark, accelerator_group
