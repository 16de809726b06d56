-- Per benchmark and comparable accelerator group, the recommendation of the latest round that measured it.
select *
from latest_recommendations
