"""The pk-only `--output` option: Kafka's text (the default, byte for byte) or JSON."""

from __future__ import annotations

import click


def output_option(func):
    return click.option(
        "--output", type=click.Choice(["text", "json"]), default="text", show_default=True,
        help="pk only: 'json' prints the result as JSON (schema in the README's \"Beyond Kafka's "
             "tools\") instead of Kafka's text.")(func)
