-- Every round's analysis_exclusions rows.
select *
from analysis_exclusions
order by all
