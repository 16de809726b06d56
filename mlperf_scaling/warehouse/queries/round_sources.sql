-- Where a round's rows came from: the latest successful ingestion.
select round, source, source_kind, source_commit, source_sha256, finished_at, ruleset, rules_package, rules_coverage, message
from ingestions
where round = $round and status = 'succeeded'
order by finished_at desc
limit 1
