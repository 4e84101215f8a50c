"""An example GPU vendor plugin: Acme X-series accelerators (fictional), read from node labels."""
