"""graveler_spark: placeholder; built in its own issue."""
