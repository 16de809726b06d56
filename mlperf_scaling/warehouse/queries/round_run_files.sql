-- The result files of one round's runs, with their checksums: what a new version of the round is compared with.
select submitter, system, benchmark, scaling_mode, file_name, sha256
from runs
where round = $round
order by submitter, system, benchmark, scaling_mode, file_name
