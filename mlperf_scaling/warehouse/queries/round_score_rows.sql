-- Every score row of one round, strong and weak: what a new version of the round is compared with.
select *
from scores
where round = $round
order by benchmark, submitter, system, scaling_mode
