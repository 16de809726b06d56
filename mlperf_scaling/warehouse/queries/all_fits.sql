-- Every round's scaling_fits rows.
select *
from scaling_fits
order by all
