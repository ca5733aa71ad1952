"""Operators of the graveler Airflow provider."""
