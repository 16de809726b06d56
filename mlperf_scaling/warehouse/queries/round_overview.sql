-- One line per loaded round, in publication order, for the report's front page.
select round, round_order, ruleset, rules_coverage, loaded_at, n_systems, n_runs, n_valid_runs, n_scores, n_scored,
       n_rejections
from round_summary
order by round_order
