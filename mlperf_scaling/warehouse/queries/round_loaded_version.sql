-- The version of one round now in the warehouse: its latest successful ingestion (none for a round not loaded yet).
select *
from ingestions
where round = $round and status = 'succeeded'
order by finished_at desc
limit 1
