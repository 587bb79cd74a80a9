"""Documents: the JSON contract built from engine results, which every renderer and the JSON output read."""
