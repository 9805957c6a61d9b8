"""Ingestion: turning text from outside the store into memories (ingest.md)."""
