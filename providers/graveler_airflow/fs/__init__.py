"""The ``graveler://`` filesystem of Airflow's object storage."""
