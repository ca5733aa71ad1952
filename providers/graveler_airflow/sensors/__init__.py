"""Sensors of the graveler Airflow provider."""
