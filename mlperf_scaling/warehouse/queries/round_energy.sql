-- The measured runs of one round: energy and power profile.
select *
from energy
where round = $round
order by benchmark, submitter, system, file_name
