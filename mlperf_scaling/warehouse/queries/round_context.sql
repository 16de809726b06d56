-- Configuration, hardware and power beside each scored result of one round.
select *
from result_context
where round = $round
order by benchmark, accelerators, time_to_train_min, submitter, system
