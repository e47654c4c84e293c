"""Local models: finding and importing them (`store`), and serving one per process to every episode (`engine`)."""
