"""PySpark jobs (only pk-spark imports pyspark)."""
