"""graveler_airflow: placeholder; built in its own issue."""
