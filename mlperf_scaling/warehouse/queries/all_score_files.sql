-- Every score's link to its files at the loaded commit, with its official figures (the view score_files).
select *
from score_files
