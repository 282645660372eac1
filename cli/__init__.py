"""Command-line front ends, one module per Kafka shell tool."""
