"""Switch-side parsers: one module per show command, every platform emitting the same canonical metrics."""
