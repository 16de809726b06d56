-- Per benchmark and comparable accelerator group, the recommendation of the round that measured it best.
select *
from best_recommendations
