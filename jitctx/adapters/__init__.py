"""Thin adapters: CLI, tool schemas and dispatch, MCP server."""
