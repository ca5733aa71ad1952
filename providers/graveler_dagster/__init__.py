"""graveler_dagster: placeholder; built in its own issue."""
