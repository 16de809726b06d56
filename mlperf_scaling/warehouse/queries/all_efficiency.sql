-- The efficiency rows of every round: what the planner chooses from.
select *
from efficiency
order by round, benchmark, accelerators, time_to_train_min, submitter, system
