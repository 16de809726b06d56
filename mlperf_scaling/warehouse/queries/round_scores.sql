-- The score rows of one round, as the analysis reads them.
select *
from scores
where round = $round
order by benchmark, submitter, system
