-- The strong-scaling score rows of one round (all of Training, HPC strong scaling), as the analysis reads them, with
-- the host processors their systems JSON states (a CPU-only HPC system scales by them); HPC weak scaling is read by
-- round_weak_scores.sql.
select s.*, y.host_processor_model_name, y.host_processors_per_node * y.number_of_nodes as host_processors
from scores s
left join systems y using (round, submitter, system)
where s.round = $round and s.scaling_mode = 'strong'
order by s.benchmark, s.submitter, s.system
