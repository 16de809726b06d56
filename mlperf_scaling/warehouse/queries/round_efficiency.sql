-- The efficiency rows of one round.
select *
from efficiency
where round = $round
order by benchmark, accelerators, time_to_train_min, submitter, system
