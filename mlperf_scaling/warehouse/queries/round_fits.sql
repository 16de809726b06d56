-- The scaling-law fits of one round.
select *
from scaling_fits
where round = $round
order by benchmark, accelerator_group, model
