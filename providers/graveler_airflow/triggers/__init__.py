"""Triggers of the graveler Airflow provider."""
