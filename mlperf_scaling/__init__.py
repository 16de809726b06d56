"""MLPerf Training results into a validated DuckDB warehouse, scored as MLCommons scores them."""

import os

# polars 2 runs a lazy query on its streaming engine unless told otherwise, at a fixed cost per query several times the
# in-memory engine's. The tables here are thousands of rows, and pandera runs one query per check: over a hundred for
# a `runs` validation. A user's own setting wins; worker processes inherit this one.
os.environ.setdefault("POLARS_ENGINE_AFFINITY", "in-memory")
