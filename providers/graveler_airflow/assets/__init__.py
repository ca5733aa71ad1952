"""The ``graveler://`` asset scheme (registered through the provider's ``asset-uris``)."""
