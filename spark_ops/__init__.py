"""PySpark jobs; only pk-spark imports pyspark, so every other tool starts fast.

datasource.py is the `pklog` Spark data source (segment files read column-wise into Arrow, or
a remote cluster through confluent-kafka); dump.py, offsets.py and compact.py are the
pk-spark jobs over it; session.py builds the SparkSession from spark-submit's options.
"""
