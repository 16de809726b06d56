-- The version of each round now in the warehouse: its latest successful ingestion.
select *
from ingestions
where status = 'succeeded'
qualify row_number() over (partition by round order by finished_at desc) = 1
order by round
