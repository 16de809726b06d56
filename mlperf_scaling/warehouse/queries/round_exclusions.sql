-- Score rows of one round the analysis left out, with the reason.
select *
from analysis_exclusions
where round = $round
order by benchmark, submitter, system
