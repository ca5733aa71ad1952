"""graveler_fsspec: placeholder; built in its own issue."""
