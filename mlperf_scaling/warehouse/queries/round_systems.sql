-- The system descriptions of one round, typed covariates included (the whole JSON is left in the warehouse).
select * exclude (description_json)
from systems
where round = $round
order by submitter, system
