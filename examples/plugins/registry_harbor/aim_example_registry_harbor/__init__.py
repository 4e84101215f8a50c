"""An example registry plugin: a Harbor registry, its images through the OCI API, its repositories through Harbor's API."""
