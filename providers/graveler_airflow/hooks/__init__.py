"""Hooks of the graveler Airflow provider."""
