-- Every strong-scaling score row of every round, for the cross-round view, with its system's host processors.
select s.*, y.host_processor_model_name, y.host_processors_per_node * y.number_of_nodes as host_processors
from scores s
left join systems y using (round, submitter, system)
where s.scaling_mode = 'strong'
order by s.round, s.benchmark, s.submitter, s.system
