-- Per workload, round, folder and score status: the score rows the warehouse holds and the commonest reason for their
-- status, so that a plan can say a workload is present but has no time to train, rather than that it is absent.
select benchmark_canonical, round, benchmark, status, count(*) as n_scores, mode(status_reason) as reason
from scores
group by all
order by benchmark_canonical, round, benchmark, status
